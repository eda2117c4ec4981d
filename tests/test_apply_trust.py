"""Apply trusts nothing in the plans file (issue 20): each tampering case through the real entrypoint.py in
`mode: apply` against the GitHub stand-in. The plans file is forged the way an attacker with write access to the
artifact would forge it: `forced: true`, the issue's true current `updated_at` (public), and a plan the policy
would accept on an issue that is really in the queue. What may be written is decided by the apply run's own event
and the issue as it is now."""
from __future__ import annotations

import json

import pytest

from actionrun import (FSDP_WITH_REPRO, MARKER, NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, dispatch_payload,
                       issues_payload, run_action, schedule_payload, seed_issue)

REVIEW = "triage review"


def forged(fake, number: int, **overrides) -> dict:
    """A plan for `number` that the policy accepts on a fresh queue issue (a not_distributed comment and the
    marker), claiming to be forced, stamped with the issue's real updated_at."""
    plan = {"issue": number, "add_labels": [MARKER], "comment": {"template": "not_distributed"},
            "outcome": "not_distributed", "modules": [], "reasons": ["forged"], "planner": "llm", "forced": True,
            "issue_updated_at": fake.issue(REPO, number)["updated_at"]}
    plan.update(overrides)
    return plan


def plans_file(tmp_path, plans: list[dict], name: str = "plans.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"version": 1, "repo": REPO, "plans": plans}), encoding="utf-8")
    return path


def apply(fake, tmp_path, event: str, payload: dict, path, **inputs):
    run = run_action(fake, tmp_path, event, payload, inputs={"mode": "apply", "plans-file": str(path), **inputs})
    assert "Traceback" not in run.stderr, run.stderr
    return run


def issue_state(fake, number: int):
    return sorted(fake.issue_labels(REPO, number)), len(fake.comments(REPO, number))


# ---- the four forged `forced: true` cases -------------------------------------------------------------------------

CASES = {
    # name: (labels, state, the line that says why nothing was written)
    "outside the queue": ((), "open", "not in the queue"),
    "closed": ((QUEUE,), "closed", "closed"),
    "already triaged": ((QUEUE, MARKER), "open", "already"),
    "on a high-priority hold": ((QUEUE, REVIEW), "open", "waiting for a person"),
}


def _events(fake, number: int, labels) -> list[tuple[str, dict, dict]]:
    """The apply runs an attacker could ride: the sweep, a dispatch for the issue (force input off), and the
    issue's own `labeled` event when it carries the queue label (a late or repeated event)."""
    events = [("schedule", schedule_payload(), {}),
              ("workflow_dispatch", dispatch_payload({"issue-number": str(number)}), {"issue-number": str(number)})]
    if QUEUE in labels:
        events.append(("issues", issues_payload(fake, number, "labeled", label=QUEUE), {}))
    return events


@pytest.mark.parametrize("case", list(CASES))
def test_a_forged_forced_plan_writes_nothing(fake_github, tmp_path, case):
    labels, state, why = CASES[case]
    seed_issue(fake_github, 30, NOT_DISTRIBUTED, labels=labels, state=state)
    before = issue_state(fake_github, 30)
    path = plans_file(tmp_path, [forged(fake_github, 30)])
    for event, payload, inputs in _events(fake_github, 30, labels):
        run = apply(fake_github, tmp_path, event, payload, path, **inputs)
        assert run.returncode == 0, (event, run.stdout + run.stderr)
        assert run.writes == [], (event, [f"{w.method} {w.path}" for w in run.writes])
        assert why in run.stdout + run.summary, (event, run.stdout)
    assert issue_state(fake_github, 30) == before


def test_the_same_forged_plan_is_written_on_an_issue_the_run_may_triage(fake_github, tmp_path):
    """The control for the case above: the forgery is a plan the policy accepts, so "nothing written" there is
    the apply run's checks, not a plan the policy would have refused anyway."""
    seed_issue(fake_github, 31, NOT_DISTRIBUTED)
    path = plans_file(tmp_path, [forged(fake_github, 31)])
    run = apply(fake_github, tmp_path, "schedule", schedule_payload(), path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert MARKER in fake_github.issue_labels(REPO, 31) and len(fake_github.comments(REPO, 31)) == 1


# ---- plans for other issues than the event's ----------------------------------------------------------------------


def test_an_event_apply_writes_only_its_own_issue(fake_github, tmp_path):
    for n in (12, 13, 14):
        seed_issue(fake_github, n, NOT_DISTRIBUTED)
    path = plans_file(tmp_path, [forged(fake_github, n) for n in (13, 12, 14)])
    run = apply(fake_github, tmp_path, "issues", issues_payload(fake_github, 12, "labeled", label=QUEUE), path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert {w.path.split("/issues/")[1].split("/")[0] for w in run.writes} == {"12"}
    assert MARKER in fake_github.issue_labels(REPO, 12)
    for n in (13, 14):
        assert issue_state(fake_github, n) == ([QUEUE], 0)
    assert "2 plan(s) for other issues than this event's not applied (#13, #14)" in run.stdout


def test_an_event_that_is_not_for_us_applies_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 15, NOT_DISTRIBUTED, labels=(QUEUE, "module: fsdp"))
    path = plans_file(tmp_path, [forged(fake_github, 15)])
    run = apply(fake_github, tmp_path, "issues", issues_payload(fake_github, 15, "labeled", label="module: fsdp"),
                path)
    assert run.returncode == 0 and run.writes == [] and "is not the queue label" in run.stdout


# ---- forced comes from the apply run's own event ------------------------------------------------------------------


def test_forced_comes_from_the_runs_own_command_not_from_the_file(fake_github, tmp_path):
    """A processed issue: a plan saved by a real `/ptd-retriage` plan job, with `forced` edited to false, is still
    applied as forced under the command's own apply run (the command and its author's role say so); the same
    file under a `labeled` event (not a command) writes nothing."""
    seed_issue(fake_github, 40, NOT_DISTRIBUTED, labels=(QUEUE, MARKER))
    fake_github.set_role(REPO, "maint", "maintain")
    comment = fake_github.add_comment(REPO, 40, "/ptd-retriage", author="maint")
    payload = comment_payload(fake_github, 40, comment)
    path = tmp_path / "plans.json"
    planned = run_action(fake_github, tmp_path, "issue_comment", payload,
                         inputs={"mode": "plan", "plans-file": str(path)})
    assert planned.returncode == 0 and planned.writes == [], planned.stdout + planned.stderr
    document = json.loads(path.read_text())
    assert [p["issue"] for p in document["plans"]] == [40] and "forced" not in document["plans"][0]
    document["plans"][0]["forced"] = False
    path.write_text(json.dumps(document))

    late = apply(fake_github, tmp_path, "issues", issues_payload(fake_github, 40, "labeled", label=QUEUE), path)
    assert late.returncode == 0 and late.writes == [], late.stdout
    run = apply(fake_github, tmp_path, "issue_comment", payload, path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert any(w.path.endswith("/issues/40/comments") for w in run.writes)  # forced: posted again
    assert len(fake_github.comments(REPO, 40)) == 2  # the command and the bot's comment


def test_a_command_from_a_reader_does_not_force_the_saved_plan(fake_github, tmp_path):
    seed_issue(fake_github, 41, NOT_DISTRIBUTED, labels=(QUEUE, MARKER))
    fake_github.set_role(REPO, "reader", "read")
    comment = fake_github.add_comment(REPO, 41, "/ptd-retriage", author="reader")
    path = plans_file(tmp_path, [forged(fake_github, 41)])
    run = apply(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 41, comment), path)
    # The refusal's one reaction on the command's comment (routers/command.py), and nothing on the issue.
    assert run.returncode == 0 and [w.path for w in run.writes] == \
        [f"/repos/{REPO}/issues/comments/{comment['id']}/reactions"], run.stdout
    assert fake_github.issue_labels(REPO, 41) == [QUEUE, MARKER] and len(fake_github.comments(REPO, 41)) == 1


# ---- stale plans --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("change", ["reporter comments", "person relabels"])
def test_a_plan_made_before_the_issue_last_changed_is_dropped(fake_github, tmp_path, change):
    seed_issue(fake_github, 50, FSDP_WITH_REPRO)
    payload = issues_payload(fake_github, 50, "labeled", label=QUEUE)
    path = tmp_path / "plans.json"
    planned = run_action(fake_github, tmp_path, "issues", payload, inputs={"mode": "plan", "plans-file": str(path)})
    assert planned.returncode == 0 and json.loads(path.read_text())["plans"], planned.stdout
    if change == "reporter comments":
        fake_github.add_comment(REPO, 50, "Here is a smaller reproduction: ...", author="reporter")
    else:
        from triage.github.client import GitHubClient

        fake_github.set_role(REPO, "maint", "maintain")
        fake_github.add_token("maint-token", "maint")
        GitHubClient("maint-token", fake_github.url).add_labels(REPO, 50, ["oncall: distributed infra"])
    before = issue_state(fake_github, 50)
    run = apply(fake_github, tmp_path, "issues", payload, path)
    assert run.returncode == 0 and run.writes == [], run.stdout
    assert "changed since the plan was made" in run.stdout + run.summary
    assert issue_state(fake_github, 50) == before


def test_a_plan_that_does_not_say_when_it_was_made_is_not_applied(fake_github, tmp_path):
    seed_issue(fake_github, 51, NOT_DISTRIBUTED)
    path = plans_file(tmp_path, [forged(fake_github, 51, issue_updated_at="")])
    run = apply(fake_github, tmp_path, "issues", issues_payload(fake_github, 51, "labeled", label=QUEUE), path)
    assert run.returncode == 0 and run.writes == [] and "does not say when" in run.stdout


def test_an_unchanged_issue_gets_its_saved_plan(fake_github, tmp_path):
    seed_issue(fake_github, 52, NOT_DISTRIBUTED)
    payload = issues_payload(fake_github, 52, "labeled", label=QUEUE)
    path = tmp_path / "plans.json"
    assert run_action(fake_github, tmp_path, "issues", payload,
                      inputs={"mode": "plan", "plans-file": str(path)}).returncode == 0
    run = apply(fake_github, tmp_path, "issues", payload, path)
    assert run.returncode == 0 and MARKER in fake_github.issue_labels(REPO, 52), run.stdout


@pytest.mark.parametrize("mode", ["skip", "labels-only"])
def test_a_sweeps_apply_run_keeps_the_not_before_cut_off(fake_github, tmp_path, mode):
    """The sweep leaves issues created before not-before out of its search (skip) or labels them without a
    comment (labels-only); its apply run keeps both whatever the plans file proposes."""
    seed_issue(fake_github, 60, NOT_DISTRIBUTED)  # created 2026-01-01 on the stand-in's clock
    path = plans_file(tmp_path, [forged(fake_github, 60)])
    run = apply(fake_github, tmp_path, "schedule", schedule_payload(), path, **{"not-before": "2026-06-01",
                                                                               "not-before-mode": mode})
    assert run.returncode == 0, run.stdout + run.stderr
    assert not any(w.path.endswith("/comments") for w in run.writes)
    if mode == "skip":
        assert run.writes == [] and "created before not-before" in run.stdout + run.summary
    else:
        assert MARKER in fake_github.issue_labels(REPO, 60)
