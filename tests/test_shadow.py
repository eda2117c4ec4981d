"""`ptd-triage shadow` against the GitHub stand-in (issue 32): 200 issues over a window, counted independently.

The independent count reads the world as `tests/shadow_world.py` wrote it (labels at queue time, people's labels at
the end of the window), plans each issue from that with the planner alone, and counts agreement per step with
the rules docs/shadow.md states, in a few lines of its own: nothing of shadow's rebuild or scoring is used.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fakegithub import FakeGitHub
from shadow_world import CKPT, INF, PAR, Q, build_window, shadow_cli

from triage.config.bundle import load_bundle
from triage.config.labels import Role
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/widgets"
ROUTES = {PAR: "parallelisms", INF: "infra", CKPT: "checkpointing"}
ISSUE_PATH = rf"/repos/{REPO}/issues/\d+(/timeline|/comments|/events)?"


def independent_count(world, bundle) -> dict:
    """Per step (agree, total) from the world's own record and the planner alone (see the module doc)."""
    labels = bundle.labels
    parallel_modules = {s.name for s in labels.specs if s.role == Role.MODULE and s.route in (None, "parallelisms")}
    all_modules = {s.name for s in labels.specs if s.role == Role.MODULE}
    steps = {name: [0, 0] for name in ("routing", "modules", "type", "flag", "reproduction")}
    decisions = {name: [0, 0, 0] for name in steps}  # caught, missed, extra
    wrote = {"labels": 0, "comments": 0}
    disagreeing: set[str] = set()

    def count(step, agree):
        steps[step][0] += bool(agree)
        steps[step][1] += 1
        if not agree:
            disagreeing.add(f"{REPO}#{truth.number}")

    def decide(step, bot: set, people: set):
        for index, value in enumerate((len(bot & people), len(people - bot), len(bot - people))):
            decisions[step][index] += value

    for truth in world.truths.values():
        issue = {"number": truth.number, "title": truth.title, "body": truth.body, "state": "open",
                 "labels": [{"name": n} for n in truth.labels_at_queue], "comments": len(truth.comments_at_queue)}
        comments = [{"id": i + 1, "body": b, "user": {"login": "reporter", "type": "User"},
                     "created_at": "2026-01-01T00:00:00Z"} for i, b in enumerate(truth.comments_at_queue)]
        plan = plan_issue(snapshot_from_json({"issue": issue, "comments": comments}), bundle)
        wrote["labels"] += len(plan.add_labels)
        wrote["comments"] += plan.comment is not None
        if not truth.triaged:
            continue
        after = set(truth.labels_at_queue) | set(plan.add_labels)
        people = set(truth.people_labels)
        # people's one sub-oncall label, else the one route their module labels point at, else not scored
        routes = [ROUTES[name] for name in people if name in ROUTES] or \
            sorted({s.route for s in labels.specs if s.name in people and s.role == Role.MODULE and s.route})
        route = routes[0] if len(routes) == 1 else None
        bot_routes = [ROUTES[n] for n in plan.add_labels if n in ROUTES] or \
            [ROUTES[n] for n in truth.labels_at_queue if n in ROUTES] or ["none"]
        if route is not None:
            count("routing", bot_routes[0] == route)
            # a route written but not people's is missed and extra; no route written is only missed
            decide("routing", {bot_routes[0]} - {"none"}, {route})
        if route == "parallelisms" and people & all_modules:
            count("modules", people & parallel_modules == after & parallel_modules)
            decide("modules", after & parallel_modules, people & parallel_modules)
        kinds = {k for k in ("feature", "enhancement") if k in after}
        count("type", kinds == people & {"feature", "enhancement"})
        decide("type", kinds, people & {"feature", "enhancement"})
        held = "triage review" in plan.add_labels and "ptd-bot-triaged" not in plan.add_labels
        count("flag", held == ("high priority" in people))
        decide("flag", {"held"} if held else set(), {"held"} if "high priority" in people else set())
        count("reproduction", ("needs reproduction" in after) == ("needs reproduction" in people))
        decide("reproduction", after & {"needs reproduction"}, people & {"needs reproduction"})
    return {"steps": {k: {"agree": a, "total": t, **dict(zip(("caught", "missed", "extra"), decisions[k]))}
                      for k, (a, t) in steps.items()}, "disagreeing": disagreeing, **wrote}


@pytest.fixture
def world_github():
    with FakeGitHub() as gh:
        world = build_window(gh, 200, repo=REPO)
        yield gh, world
    assert not gh.violations, gh.violations[:3]


def test_figures_equal_an_independent_count_over_200_issues(world_github, tmp_path):
    gh, world = world_github
    bundle = load_bundle()
    result = shadow_cli(gh, "--since", world.since, "--until", world.until, "--json", str(tmp_path / "r.json"),
                        "--markdown", str(tmp_path / "r.md"), "--save", str(tmp_path / "rows.jsonl"))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    expected = independent_count(world, bundle)
    for step, figures in expected["steps"].items():
        assert {k: report["steps"][step][k] for k in figures} == figures, step
        assert sum(figures[k] for k in ("caught", "missed", "extra")) > 0, step  # every step decided something
    triaged = sum(t.triaged for t in world.truths.values())
    assert report["issues"] == 200 and report["triaged_by_people"] == triaged
    assert report["not_yet_triaged"] == 200 - triaged > 0
    assert report["outside_window"] == 1  # queued before the window, updated in it
    assert (report["would_write"]["labels"], report["would_write"]["comments"]) == \
        (expected["labels"], expected["comments"])
    assert {d["id"] for d in report["disagreements"]} == expected["disagreeing"]  # never a not-yet-triaged one
    # nothing written; one search page per 100 issues and one timeline request per issue read
    assert gh.writes() == []
    timeline = [r for r in gh.requests if r.path.endswith("/timeline")]
    assert len(timeline) == report["examined"] == report["requests_by_endpoint"]["timeline"] == 201
    assert report["requests"] == len(gh.requests)
    assert not [r for r in gh.requests if r.path.endswith(("/comments", "/events"))]
    # the terminal table (no progress bar off a terminal), the Markdown, and the eval dataset
    assert "\r" not in result.stderr and "routing" in result.stdout and "caught/missed/extra" in result.stdout
    markdown = (tmp_path / "r.md").read_text()
    routing = report["steps"]["routing"]
    verdict = report["verdicts"]["routing"]
    assert (f"| routing | **{verdict['words']}**<br>" in markdown and f" | {routing['caught']} / {routing['missed']} / "
            f"{routing['extra']} | " in markdown)
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == triaged
    again = subprocess.run([sys.executable, "-m", "triage", "eval", str(tmp_path / "rows.jsonl"), "--format",
                            "json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["routing"]["correct"] == report["steps"]["routing"]["agree"]


def _without_spending(report: dict) -> dict:
    return {k: v for k, v in report.items() if k not in ("requests", "requests_by_endpoint", "from_cache")}


def test_a_second_run_from_the_cache_reads_no_issue_and_a_killed_run_resumes(world_github, tmp_path):
    gh, world = world_github
    window = ("--since", world.since, "--until", world.until)
    whole = shadow_cli(gh, *window, "--json", str(tmp_path / "whole.json"))
    assert whole.returncode == 0, whole.stderr
    cache = tmp_path / "cache"

    # killed (SIGKILL, no goodbye) when its 60th timeline request arrives; the 59 before it were answered
    seen = []
    original = gh.handle

    def handle(method, raw_path, headers, raw_body):
        if raw_path.split("?")[0].endswith("/timeline"):
            seen.append(raw_path)
            if len(seen) == 60:
                os.kill(child.pid, signal.SIGKILL)
                return 502, {}, {"message": "gone"}, True
        return original(method, raw_path, headers, raw_body)

    gh.handle = handle
    child = shadow_cli(gh, *window, "--cache", str(cache), "--json", str(tmp_path / "killed.json"), popen=True)
    child.communicate(timeout=300)
    assert child.returncode == -signal.SIGKILL and not (tmp_path / "killed.json").exists()
    gh.handle = original

    start = len(gh.requests)
    resumed = shadow_cli(gh, *window, "--cache", str(cache), "--json", str(tmp_path / "resumed.json"))
    assert resumed.returncode == 0, resumed.stderr
    read = [r.path for r in gh.requests[start:] if r.path.endswith("/timeline")]
    assert len(read) == 201 - 59
    first, second = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("whole", "resumed"))
    assert _without_spending(second) == _without_spending(first)
    assert second["from_cache"] == 59

    # another configuration, from the cache: no request to an issue, its timeline or its comments
    start = len(gh.requests)
    other = shadow_cli(gh, *window, "--cache", str(cache), "--json", str(tmp_path / "again.json"),
                       "--config", str(ROOT / "queues" / "distributed"))
    assert other.returncode == 0, other.stderr
    assert [r.path for r in gh.requests[start:] if re.fullmatch(ISSUE_PATH, r.path)] == []
    assert {r.path for r in gh.requests[start:]} == {"/search/issues"}
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["from_cache"] == 201 and again["requests"] == len(gh.requests) - start
    assert _without_spending(again) == _without_spending(first)


def _window_of(gh, repo: str, numbers) -> tuple[str, str]:
    stamps = [e["created_at"] for n in numbers for e in gh.timeline(repo, n)]
    return min(stamps), max(stamps)


def test_each_kind_of_actor_counts_as_documented(fake_github, github_client):
    """The bot itself, another bot, a person who changed their mind, nobody yet, the bot's own user account, and
    what happens after the window: each counted as docs/shadow.md says."""
    from triage.evaluation.shadow import Window, shadow
    from triage.evaluation.shadow_fetch import IssueCache

    from shadow_world import FSDP, NCCL, OTHER_BOT, OWN_BOT

    gh = fake_github
    gh.add_user(OWN_BOT, user_type="Bot")
    gh.add_user("our-machine-user")  # the bot's own account when it runs with a person's kind of token
    made = {}
    for key, text in (("own", FSDP), ("other", NCCL), ("changed", FSDP), ("nobody", NCCL), ("machine", FSDP),
                      ("late", NCCL)):
        made[key] = gh.add_issue(REPO, title=text[0], body=text[1])["number"]
        gh.label_issue(REPO, made[key], Q, actor="alice")
    # the bot itself labelled it, nobody else: not yet triaged by people
    for label in (PAR, "module: fsdp", "ptd-bot-triaged"):
        gh.label_issue(REPO, made["own"], label, actor=OWN_BOT)
    # another bot routed it to parallelisms; a person routed it to infra: the person's answer is the gold
    gh.label_issue(REPO, made["other"], PAR, actor=OTHER_BOT, actor_type="Bot")
    gh.add_comment(REPO, made["other"], "Before anyone triaged: it only fails with 2 nodes.", author="reporter")
    gh.add_comment(REPO, made["other"], "[bot] ran the repro", author=OTHER_BOT, author_type="Bot")
    gh.label_issue(REPO, made["other"], INF, actor="bob")
    gh.label_issue(REPO, made["other"], "module: nccl", actor="bob")
    gh.add_comment(REPO, made["other"], "After triage: thanks!", author="bob")
    # a person added module: ddp, then took it back and added fsdp
    gh.label_issue(REPO, made["changed"], PAR, actor="carol")
    gh.label_issue(REPO, made["changed"], "module: ddp", actor="carol")
    gh.label_issue(REPO, made["changed"], "module: ddp", actor="carol", remove=True)
    gh.label_issue(REPO, made["changed"], "module: fsdp", actor="carol")
    gh.close_issue(REPO, made["changed"], actor="carol")
    # the bot's own account is a User: named with --bot-login, its labels are not people's
    gh.label_issue(REPO, made["machine"], PAR, actor="our-machine-user")
    # triaged in the window; a person's later change (after the window) does not count
    gh.label_issue(REPO, made["late"], INF, actor="alice")
    since, until = _window_of(gh, REPO, made.values())
    gh.label_issue(REPO, made["late"], INF, actor="bob", remove=True)
    gh.label_issue(REPO, made["late"], "high priority", actor="bob")

    document, run = shadow(github_client, load_bundle(), Window(REPO, since, until), cache=IssueCache(None, REPO),
                           own_logins=(OWN_BOT, "our-machine-user"))
    assert document["issues"] == 6 and document["not_yet_triaged"] == 3  # own, nobody, machine
    rows = {row.snapshot.number: row for row in run.rows}
    assert {n for n, row in rows.items() if run.triaged[row.id]} == {made["other"], made["changed"], made["late"]}
    other = rows[made["other"]]
    assert other.gold.route == "infra" and PAR not in other.gold.labels  # the other bot's label is not gold
    assert [c.body for c in other.snapshot.comments] == ["Before anyone triaged: it only fails with 2 nodes."]
    assert other.snapshot.labels == (Q,)  # as it stood when queued: the other bot's label came later
    changed = rows[made["changed"]]
    assert changed.gold.modules == ("module: fsdp",) and changed.snapshot.labels == (Q,)
    late = rows[made["late"]]
    assert late.gold.route == "infra" and not late.gold.high_priority  # as it stood at the end of the window
    assert rows[made["own"]].snapshot.labels == (Q,)  # the bot's labels came after: undone
    not_triaged = {f"{REPO}#{made[k]}" for k in ("own", "nobody", "machine")}
    assert not not_triaged & {d["id"] for d in document["disagreements"]}
    assert not_triaged <= {item["id"] for item in document["would_write"]["issues"]}
    assert sum(s["total"] for s in document["steps"].values()) == 3 + 1 + 3 + 3 + 3  # modules: changed only
    assert fake_github.writes() == []


def test_bad_input_is_one_line_and_reads_nothing(fake_github, tmp_path):
    for args, words in ((("--since", "yesterday"), "--since"), (("--since", "2026-02-01", "--until", "2026-01-01"),
                                                                  "window is empty"),
                        (("--json", str(tmp_path / "no" / "such" / "r.json")), "existing folder")):
        result = shadow_cli(fake_github, *args)
        assert result.returncode == 2 and result.stdout == "", args
        (line,) = result.stderr.strip().splitlines()
        assert words in line, (args, line)
    assert fake_github.requests == []
    failed = shadow_cli(fake_github, "--since", "2026-01-01", env_extra={"GITHUB_TOKEN": "wrong"})
    assert failed.returncode == 1 and "401" in failed.stderr and failed.stdout == ""


def test_the_budget_stops_a_run_cleanly_and_the_next_one_goes_on_from_the_cache(tmp_path):
    from fakegithub import RateLimits

    with FakeGitHub(rate_limits=RateLimits(core_per_hour=90)) as gh:
        world = build_window(gh, 60, repo=REPO)
        window = ("--since", world.since, "--until", world.until, "--cache", str(tmp_path / "c"), "--json")
        first = shadow_cli(gh, *window, str(tmp_path / "first.json"), "--max-wait", "0")
        assert first.returncode == 0, first.stderr
        report = json.loads((tmp_path / "first.json").read_text())
        assert report["examined"] == 40 and report["left"] == 21  # 90 - the reserve of 50
        assert "stopped early" in first.stderr and "API budget" in report["stopped"]
        assert not gh.limits_tripped  # stopped by its own reserve, never refused by GitHub
        gh._core.start -= 3600  # an hour later
        second = shadow_cli(gh, *window, str(tmp_path / "second.json"), "--max-wait", "0")
        assert second.returncode == 0, second.stderr
        again = json.loads((tmp_path / "second.json").read_text())
        assert again["stopped"] is None and again["from_cache"] == 40 and again["examined"] == 61
        assert not gh.violations


def test_a_progress_bar_on_a_terminal_only(fake_github, tmp_path):
    import pty

    world = build_window(fake_github, 12, repo=REPO)
    leader, follower = pty.openpty()
    env = {**os.environ, "GITHUB_API_URL": fake_github.url, "GITHUB_TOKEN": fake_github.token}
    env.pop("GITHUB_ACTIONS", None)
    proc = subprocess.run([sys.executable, "-m", "triage", "shadow", "--repo", REPO, "--since", world.since,
                           "--until", world.until, "--limit", "5"], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=follower, env=env, timeout=120, text=True)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.returncode == 0
    assert b"\rreading issues [" in shown and b"] 5/5" in shown  # --limit 5: five issues read, then it stopped
    assert "stopped early, 8 issue(s) not read: --limit (5) reached" in proc.stdout


def _document(disagreements: int, title: str = "FSDP | <b>hang</b> `x`") -> dict:
    step = {"agree": 1, "total": 2, "rate": 0.5, "caught": 1, "missed": 1, "extra": 0, "precision": 1.0,
            "recall": 0.5, "decided_by": {"rubric": 2}}
    item = {"id": f"{REPO}#1", "url": "https://github.com/acme/widgets/issues/1", "title": title,
            "steps": {"routing": {"bot": "infra", "people": "parallelisms"}},
            "bot": {"labels": ["oncall: distributed infra"], "comment": None, "outcome": "routed",
                    "reasons": ["step 2: infra | <img src=x>"] * 3},
            "people": ["oncall: distributed parallelisms"]}
    plain = {"id": item["id"], "url": item["url"], "title": title, "kind": "wrong", "bot": "infra",
             "people": "parallelisms", "because": ["'<img src=x>' in the title"], "score": None,
             "comment": {"template": "needs_distributed_reproduction", "body": "Hi @x <script>\n\n- **A script**\n<!-- ptd-triage:needs_distributed_reproduction -->"}}
    verdict = {"verdict": "ready", "words": "ready to write live", "why": "1.00 of 5 writes right",
               "change": None, "do": "nothing to change", "lines": [], "evidence": "Routing below"}
    names = ("routing", "modules", "type", "flag", "reproduction")
    return {"repo": REPO, "since": "2026-01-01T00:00:00Z", "until": "2026-03-31T23:59:59Z", "planner": "rubric",
            "issues": 2, "triaged_by_people": 2, "not_yet_triaged": 0, "found": 2, "examined": 2,
            "outside_window": 0, "from_cache": 0, "left": 0, "stopped": None, "requests": 3, "opted_out": 0,
            "opted_out_issues": [], "failed": None, "notes": ["search result 1 of page 1 | <b>x</b>: left out"],
            "skipped": [{"id": f"{REPO}#2", "why": "its timeline could not be read: 410 <i>Gone</i>"}],
            "planners": {"asked": "rubric", "issues": 2, "fallbacks": 0, "failed": 0, "fallback_reasons": [],
                         "by_step": {name: {"rubric": 2} for name in names}},
            "steps": {"routing": {**step, "columns": ["infra", "none"], "confusion": {"parallelisms": {"infra": 1,
                                                                                                    "none": 0}}},
                      "modules": {**step, "tp": 1, "fp": 0, "fn": 1},
                      "type": step, "flag": step, "reproduction": step},
            "verdicts": {name: verdict for name in names}, "next": "every step is ready",
            "lines": {"disable": 'labels.json: "disabled": ["enhancement"]',
                      "disable_repository": '.github/ptd-triage.yml: labels: {disabled: ["enhancement"]}',
                      "threshold": None, "threshold_repository": None},
            "labels": [{"label": "enhancement", "role": "type", "kind": "enhancement", "bot_adds": 1,
                        "people_apply": 0, "both": 0, "of": 2, "disabled": False, "never_used": True,
                        "rarely_used": True}],
            "high_priority_table": {"threshold": 3.0, "people_flagged": 1, "scored": 2, "suggested": 3.0,
                                    "rows": [{"threshold": 3.0, "caught": 1, "missed": 0, "extra": 0,
                                              "current": True}]},
            "confusions": {"routing": [{"people": "parallelisms", "bot": "infra", "issues": [item["id"]],
                                        "count": 1, "signals": ["'<b>' in the title"]}], "modules": []},
            "disagreements_by_step": {name: [plain] * disagreements for name in names},
            "disagreements": [item] * disagreements,
            "would_write": {"labels": disagreements, "comments": 0,
                            "issues": [{**item["bot"], "id": item["id"], "url": item["url"], "title": title,
                                        "triaged_by_people": False}] * disagreements},
            "cannot_rebuild": ["titles and bodies are as they are today"]}


def test_the_markdown_escapes_issue_text_and_keeps_under_its_cap():
    from triage.evaluation.shadow_markdown import render_markdown

    text = render_markdown(_document(1))
    assert "FSDP \\| \\<b\\>hang\\</b\\> \\`x\\`" in text and "\\<img src=x\\>" in text
    # every tag from issue, planner or GitHub text is escaped: titles, quotes, the comment, skips and notes
    assert not re.search(r"(?<!\\)<(img|b|i|script)[ >]", text)
    assert "> Hi @x &lt;script>" in text and "> - **A script**" in text and "410 \\<i\\>Gone\\</i\\>" in text
    assert "| routing | **ready to write live**<br>1.00 of 5 writes right | 1.00 | 0.50 | 1 / 1 / 0 |" in text
    assert '`labels.json: "disabled": ["enhancement"]`' in text
    assert "(not yet triaged by people)" in text and "ptd-triage:needs" not in text  # no hidden marker quoted
    big = _document(5000)
    whole = render_markdown(big)
    capped = render_markdown(big, cap=200_000, rest_in="/tmp/runner/ptd-triage-shadow.json")
    assert len(whole.encode()) > 200_000 >= len(capped.encode())
    assert "more rows left out to stay under GitHub's step summary limit; every row is in" in capped
    assert capped.count("| [#1]") < whole.count("| [#1]") and "### Not rebuilt" in capped
