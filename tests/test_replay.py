"""`ptd-triage replay` against the GitHub stand-in: issue selection, label-history rebuild, gold, the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from triage.config.bundle import load_bundle
from triage.evaluation.replay import labels_at, replay_repo

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/widgets"
Q, PAR, INF = "oncall: distributed", "oncall: distributed parallelisms", "oncall: distributed infra"
BOT = "firstlevel-bot[bot]"

FSDP_BODY = """Wrapping blocks with FSDP2 `fully_shard` breaks the second backward.

```python
from torch.distributed.fsdp import fully_shard
for block in model.layers:
    fully_shard(block)
loss = model(x).sum(); loss.backward()
```

```
RuntimeError: FSDP parameter is not in the expected sharded state
```
"""
NCCL_BODY = """Two-node job with the NCCL backend: `all_reduce` fails with

```
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error
```
"""


def seed(gh) -> None:
    """Issue 1 needs its history rebuilt; 2 was triaged by bots only; 3 lost its events; 4 is outside the queue;
    5 is closed and was triaged by people; 6 is a pull request."""
    gh.add_user(BOT, user_type="Bot")
    gh.add_user("github-actions[bot]", user_type="Bot")
    # 1: today it has fsdp + parallelisms + high priority; at queue time it had oncall: pt2 (removed later).
    gh.add_issue(REPO, 1, title="fully_shard breaks the second backward", body=FSDP_BODY,
                 labels=[Q, "module: fsdp", PAR, "high priority"])
    gh.add_comment(REPO, 1, "Also happens with FSDP1.", author="reporter")  # before the queue label: kept
    gh.add_label_event(REPO, 1, "oncall: pt2", actor=BOT)
    gh.add_label_event(REPO, 1, Q, actor=BOT)
    gh.add_comment(REPO, 1, "Looks like a regression, marking high priority.", author="maintainer")  # after: dropped
    gh.add_label_event(REPO, 1, "module: fsdp", actor="maintainer")
    gh.add_label_event(REPO, 1, PAR, actor="maintainer")
    gh.add_label_event(REPO, 1, "module: ddp", actor="maintainer")
    gh.add_label_event(REPO, 1, "module: ddp", event="unlabeled", actor="maintainer")
    gh.add_label_event(REPO, 1, "oncall: pt2", event="unlabeled", actor="maintainer")
    gh.add_label_event(REPO, 1, "high priority", actor="maintainer")
    # 2: only bots labelled it after the queue label: no human answer.
    gh.add_issue(REPO, 2, title="Something with NCCL", body=NCCL_BODY, labels=[Q, "module: nccl", "ptd-bot-triaged"])
    gh.add_label_event(REPO, 2, Q, actor=BOT)
    gh.add_label_event(REPO, 2, "module: nccl", actor="github-actions[bot]")
    gh.add_label_event(REPO, 2, "ptd-bot-triaged", actor="github-actions[bot]")
    # 3: carries the queue label but its events are gone.
    gh.add_issue(REPO, 3, title="No history", body="x", labels=[Q, INF])
    # 4: not in the queue at all.
    gh.add_issue(REPO, 4, title="Docs typo", body="typo", labels=["module: docs"])
    gh.add_label_event(REPO, 4, "module: docs", actor="maintainer")
    # 5: closed since, routed to infra by a person.
    gh.add_issue(REPO, 5, title="NCCL error in all_reduce on two nodes", body=NCCL_BODY,
                 labels=[Q, INF, "module: nccl"], state="closed")
    gh.add_label_event(REPO, 5, Q, actor="reporter")
    gh.add_label_event(REPO, 5, INF, actor="maintainer")
    gh.add_label_event(REPO, 5, "module: nccl", actor="maintainer")
    # 6: a pull request with the queue label is not an issue to triage.
    gh.add_issue(REPO, 6, title="Fix NCCL", body="", labels=[Q, INF], pull_request=True)


def test_replay_rebuilds_label_history_and_derives_gold(fake_github, github_client):
    seed(fake_github)
    bundle = load_bundle()
    rows, stats = replay_repo(github_client, REPO, bundle, max_issues=50)
    assert stats.to_dict() == {"examined": 4, "replayed": 2, "no_queue_event": 1, "not_triaged_by_people": 1}
    by_number = {row.snapshot.number: row for row in rows}
    assert set(by_number) == {1, 5}

    first = by_number[1]
    assert first.id == "acme/widgets#1"
    # as at queue time: later additions (fsdp, parallelisms, high priority) gone, the later-removed pt2 back
    assert sorted(first.snapshot.labels) == sorted([Q, "oncall: pt2"])
    assert [c.body for c in first.snapshot.comments] == ["Also happens with FSDP1."]
    assert first.raw["issue"]["comments"] == 1 and first.raw["issue"]["state"] == "open"
    assert first.gold.route == "parallelisms"
    assert first.gold.modules == ("module: fsdp",)  # ddp was added and removed again
    assert first.gold.high_priority is True
    assert "oncall: pt2" not in first.gold.labels  # a person removed it

    fifth = by_number[5]
    assert fifth.snapshot.labels == (Q,)
    assert (fifth.gold.route, fifth.gold.modules, fifth.gold.high_priority) == ("infra", ("module: nccl",), False)
    # the comments endpoint is only called for kept issues that have comments (issue 1)
    comment_calls = [r for r in fake_github.requests if r.path.endswith("/comments")]
    assert [r.path for r in comment_calls] == [f"/repos/{REPO}/issues/1/comments"]


def test_labels_at_undoes_later_events_newest_first():
    later = [
        {"event": "labeled", "label": {"name": "a"}},
        {"event": "unlabeled", "label": {"name": "a"}},
        {"event": "unlabeled", "label": {"name": "b"}},
        {"event": "labeled", "label": {"name": "b"}},
    ]
    # today: b (removed then re-added), no a (added then removed) -> at queue time: b, no a
    assert labels_at([Q, "b"], later) == [Q, "b"]
    assert labels_at([Q, "c"], [{"event": "labeled", "label": {"name": "c"}}]) == [Q]


def _replay(gh, *args: str, token: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "GITHUB_API_URL": gh.url, "GITHUB_TOKEN": gh.token if token is None else token}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "triage", "replay", "--repo", REPO, *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=env,
    )


def test_replay_cli_reports_figures_and_writes_an_eval_dataset(fake_github, tmp_path):
    seed(fake_github)
    dataset = tmp_path / "replayed.jsonl"
    result = _replay(fake_github, "--format", "json", "--errors", "--write-dataset", str(dataset))
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["rows"] == 2
    assert figures["replay"]["examined"] == 4 and figures["replay"]["replayed"] == 2
    assert figures["routing"]["scored"] == 2 and figures["high_priority"]["gold"] == 1
    assert "4 issues examined, 2 triaged by people replayed" in result.stderr
    assert fake_github.writes() == []  # replay only reads

    lines = [json.loads(line) for line in dataset.read_text().splitlines()]
    lines = {line["id"]: line for line in lines}
    assert sorted(lines) == ["acme/widgets#1", "acme/widgets#5"]
    first = lines["acme/widgets#1"]
    assert "high priority" in first["gold"]["labels"] and first["comments"][0]["body"] == "Also happens with FSDP1."
    # the saved dataset replays through `eval` to the same figures
    again = subprocess.run([sys.executable, "-m", "triage", "eval", str(dataset), "--format", "json", "--errors"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    evaluated = json.loads(again.stdout)
    for key in ("routing", "modules", "high_priority", "types", "triage_review", "outcomes", "errors"):
        assert evaluated[key] == figures[key], key


def test_replay_budget_and_pagination(fake_github, github_client):
    fake_github.add_user(BOT, user_type="Bot")
    for number in range(1, 103):  # more than one page (100 a page)
        fake_github.add_issue(REPO, number, title=f"Issue {number}", body="NCCL all_reduce fails", labels=[Q])
        fake_github.add_label_event(REPO, number, Q, actor=BOT)
        fake_github.add_label_event(REPO, number, INF, actor="maintainer")
    rows, stats = replay_repo(github_client, REPO, load_bundle(), max_issues=101)
    assert stats.examined == 101 and stats.replayed == 101 and len(rows) == 101
    pages = [r for r in fake_github.requests if r.path == f"/repos/{REPO}/issues"]
    assert len(pages) == 2  # paginated, and stopped once the budget was spent
    rows, stats = replay_repo(github_client, REPO, load_bundle(), max_issues=3)
    assert stats.examined == 3


def test_replay_cli_bad_input_and_github_failure(fake_github):
    seed(fake_github)
    no_token = _replay(fake_github, token="")
    assert no_token.returncode == 2 and "GITHUB_TOKEN" in no_token.stderr and no_token.stdout == ""
    bad_repo = subprocess.run([sys.executable, "-m", "triage", "replay", "--repo", "not a repo"], cwd=ROOT,
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "GITHUB_TOKEN": "x", "GITHUB_API_URL": fake_github.url})
    assert bad_repo.returncode == 2 and "not a repo" in bad_repo.stderr
    fake_github.inject("GET", rf"/repos/{REPO}/issues", 404)
    missing = _replay(fake_github)
    assert missing.returncode == 1 and missing.stdout == ""
    assert len(missing.stderr.strip().splitlines()) == 1 and "404" in missing.stderr
    assert fake_github.token not in missing.stderr


def test_replay_scores_against_an_answer_key_and_a_key_for_other_issues_is_one_line(fake_github, tmp_path):
    seed(fake_github)
    key = tmp_path / "key.jsonl"
    entry = {"type": "bug", "performance": False, "high_priority": True, "criterion": "crash", "sure": "high"}
    key.write_text("".join(json.dumps({**entry, "id": f"{REPO}#{n}"}) + "\n" for n in (1, 5)))
    result = _replay(fake_github, "--key", str(key), "--format", "json")
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)["key"]
    assert figures["source"] == str(key) and figures["all"]["rows"] == 2
    assert figures["all"]["high_priority"]["key"] == 2 and figures["all"]["non_requests"]["key"] == 2
    key.write_text(key.read_text() + json.dumps({**entry, "id": f"{REPO}#99"}) + "\n")
    other = _replay(fake_github, "--key", str(key))
    assert other.returncode == 2 and other.stdout == ""
    (line,) = [l for l in other.stderr.splitlines() if l.startswith("ptd-triage: error:")]
    assert str(key) in line and f"1 key id(s) are not in the dataset (first: {REPO}#99)" in line
