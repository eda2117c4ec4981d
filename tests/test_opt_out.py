"""The opt-out label (labels.json role `skip`, `ptd-bot-skip` by default): a person puts it on an issue and the bot
writes nothing there, from any path: the queue label added, `/ptd-retriage`, a sweep, a dispatch for one issue
(forced or not), the plan/apply split. Through the real entrypoint against the GitHub stand-in, counting write
requests; the policy refuses such an issue too, as the last guard, whatever a planner proposes.
"""
from __future__ import annotations

import json

import pytest
from actionrun import (NEEDS_REPRO, QUEUE, REPO, comment_payload, dispatch_payload, issues_payload, run_action,
                       schedule_payload, seed_issue)

from triage.config.bundle import load_bundle
from triage.config.labels import DEFAULT_SKIP_LABEL, LabelsError, parse_labels
from triage.core.drops import DropKind
from triage.core.plan import Plan, PlannedComment
from triage.core.policy import enforce
from triage.core.snapshot import snapshot_from_json

SKIP = "ptd-bot-skip"


def _issue_writes(run, number: int) -> list[str]:
    return [f"{r.method} {r.path}" for r in run.writes if f"/issues/{number}" in r.path]


def test_the_bundled_queues_name_the_opt_out_label():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for folder in ("queues/distributed", "queues/pt2", "examples/queues/storage"):
        data = json.loads((root / folder / "labels.json").read_text(encoding="utf-8"))
        assert [l["name"] for l in data["labels"] if l["role"] == "skip"] == [SKIP], folder
    assert load_bundle().labels.skip == SKIP


def test_a_labels_file_without_one_still_honours_the_default_and_two_are_refused():
    data = _labels_data()
    data["labels"] = [l for l in data["labels"] if l["role"] != "skip"]
    assert parse_labels(data, "labels.json").skip == DEFAULT_SKIP_LABEL
    data["labels"] += [dict(name="hold", role="skip", description="d", color="ededed"),
                       dict(name="hold 2", role="skip", description="d", color="ededed")]
    with pytest.raises(LabelsError, match="at most one label may have role 'skip'"):
        parse_labels(data, "labels.json")


def _labels_data() -> dict:
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parents[1] / "queues/distributed/labels.json").read_text("utf-8"))


def _snapshot(labels) -> object:
    return snapshot_from_json({"number": 5, "title": "DDP hangs", "body": "no repro", "state": "open",
                               "labels": [{"name": n} for n in labels], "user": {"login": "a", "type": "User"},
                               "comments": 0})


def test_the_policy_refuses_any_write_to_an_opted_out_issue_whatever_is_proposed():
    bundle = load_bundle()
    template = bundle.step_templates["needs_reproduction"]
    greedy = Plan(issue=5, add_labels=("oncall: distributed parallelisms", "module: ddp", "ptd-bot-triaged"),
                  comment=PlannedComment(template, "x"), outcome="classified")
    for spelling in (SKIP, SKIP.upper()):  # GitHub's label names are case-insensitive
        plan = enforce(greedy, _snapshot([QUEUE, spelling]), bundle)
        assert plan.add_labels == () and plan.comment is None and plan.outcome == "nothing_to_do"
        assert plan.dropped(DropKind.OPTED_OUT)
        assert any(SKIP in reason and "leave it alone" in reason for reason in plan.explained)
    # The bot never adds the label itself: it is in labels.json (so that `labels sync` creates it), not in the
    # allowlist.
    assert SKIP not in bundle.labels.names
    plan = enforce(Plan(issue=5, add_labels=(SKIP, "oncall: distributed infra"), outcome="routed"),
                   _snapshot([QUEUE]), bundle)
    assert SKIP not in plan.add_labels and [d.subject for d in plan.dropped(DropKind.NOT_ALLOWLISTED)] == [SKIP]


def test_the_sweep_query_excludes_it(fake_github, tmp_path):
    seed_issue(fake_github, 1, NEEDS_REPRO, labels=(QUEUE, SKIP))
    seed_issue(fake_github, 2, NEEDS_REPRO)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload())
    assert run.returncode == 0, run.stdout + run.stderr
    searches = [r for r in run.requests if r.path.startswith("/search/issues")]
    assert searches and all(f'-label:"{SKIP}"' in r.query["q"] for r in searches)
    assert _issue_writes(run, 1) == []  # never even read
    assert not [r for r in run.requests if r.path == f"/repos/{REPO}/issues/1"]
    assert _issue_writes(run, 2)  # the other issue is triaged as usual
    assert SKIP in run.summary and "left out" in run.summary


def test_a_labeled_event_writes_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 3, NEEDS_REPRO, labels=(QUEUE, SKIP))
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 3, "labeled", label=QUEUE))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.writes == []
    assert run.outputs["outcome"] == "left"
    assert f"carries '{SKIP}'" in run.summary and "leave it alone" in run.summary


def test_the_label_read_back_wins_over_a_stale_payload(fake_github, tmp_path):
    seed_issue(fake_github, 4, NEEDS_REPRO)
    payload = issues_payload(fake_github, 4, "labeled", label=QUEUE)  # built before a person opts it out
    seed_issue(fake_github, 4, NEEDS_REPRO, labels=(QUEUE, SKIP))
    run = run_action(fake_github, tmp_path, "issues", payload)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.writes == []


@pytest.mark.parametrize("force", ["false", "true"])
def test_a_dispatch_for_the_issue_writes_nothing_even_forced(fake_github, tmp_path, force):
    seed_issue(fake_github, 6, NEEDS_REPRO, labels=(QUEUE, SKIP))
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                     inputs={"issue-number": "6", "force": force})
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.writes == []
    assert f"carries '{SKIP}'" in run.summary
    assert "set the force input" not in run.summary  # force does not lift an opt-out


def test_a_dispatched_sweep_writes_nothing_to_it(fake_github, tmp_path):
    seed_issue(fake_github, 7, NEEDS_REPRO, labels=(QUEUE, SKIP))
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(), inputs={"dry-run": "false"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.writes == []


def test_the_command_is_refused_with_the_reaction_and_says_why(fake_github, tmp_path):
    seed_issue(fake_github, 8, NEEDS_REPRO, labels=(QUEUE, SKIP))
    fake_github.set_role(REPO, "maintainer", "admin")
    comment = fake_github.add_comment(REPO, 8, "/ptd-retriage", author="maintainer")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 8, comment))
    assert run.returncode == 0, run.stdout + run.stderr
    # One write: the refusal on the command's own comment. Nothing on the issue: no claim, label or comment.
    assert [f"{r.method} {r.path}" for r in run.writes] == [
        f"POST /repos/{REPO}/issues/comments/{comment['id']}/reactions"]
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["confused"]
    assert fake_github.issue_labels(REPO, 8) == [QUEUE, SKIP]
    assert f"carries '{SKIP}'" in run.summary and "remove the label" in run.summary


def test_plan_then_apply_writes_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 9, NEEDS_REPRO)
    plans = tmp_path / "plans.json"
    payload = issues_payload(fake_github, 9, "labeled", label=QUEUE)
    planned = run_action(fake_github, tmp_path, "issues", payload,
                         inputs={"mode": "plan", "plans-file": str(plans)})
    assert planned.returncode == 0, planned.stdout + planned.stderr
    seed_issue(fake_github, 9, NEEDS_REPRO, labels=(QUEUE, SKIP))  # opted out between the two jobs
    applied = run_action(fake_github, tmp_path, "issues", payload, inputs={"mode": "apply", "plans-file": str(plans)})
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert applied.writes == []
