"""End to end: entrypoint.py in a subprocess with the runner's environment, against the GitHub stand-in.

One test per trigger (issues.labeled/opened/reopened, schedule, workflow_dispatch), plus the call budgets (issue 11's
reading rule: the issue is always re-read from GitHub, because a payload can predate an earlier run's writes):
a fresh queue issue costs at most 3 API calls (read it, the comment, the labels), one with comments one more read
per 100 comments, and a second run reads (1-2 calls) and writes nothing.
"""
from __future__ import annotations

import json

import pytest
from actionrun import (FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, dispatch_payload,
                       expected_plan, issues_payload, run_action, schedule_payload, seed_issue)

COMMENTS = f"/repos/{REPO}/issues/{{n}}/comments"
LABELS = f"/repos/{REPO}/issues/{{n}}/labels"
ISSUE = f"/repos/{REPO}/issues/{{n}}"
CLAIM = f"/repos/{REPO}/issues/{{n}}/reactions"  # the comment's claim, just before posting (triage.service.claim)

# Every run that talks to GitHub first reads the repository's config file (one contents request; `config: none`
# skips it). It is per run, not per issue: the budgets below count the calls about the issue.
CONFIG_READ = f"GET /repos/{REPO}/contents/.github/ptd-triage.yml"


def _calls(run) -> list[str]:
    return [c for c in run.calls() if c != CONFIG_READ]


def _ok(run):
    assert run.returncode == 0, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert "::error::" not in run.stdout
    return run


def test_labeled_fresh_issue_reads_it_then_claims_posts_comment_then_all_labels_in_five_calls(fake_github, tmp_path):
    seed_issue(fake_github, 7, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 7)
    assert plan.comment is not None and MARKER in plan.add_labels, "scenario must plan a comment and the marker"

    run = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 7, "labeled", label=QUEUE)))

    # The issue is read (not trusted from the payload); it has no comments: the claim (a 👀 on the issue, which
    # GitHub creates for one run only), the comment, the comments read once (a twin from a run at the same moment
    # would be deleted: triage.service.claim.settle), then labels in ONE call.
    assert _calls(run) == [f"GET {ISSUE.format(n=7)}", f"POST {CLAIM.format(n=7)}", f"POST {COMMENTS.format(n=7)}",
                           f"GET {COMMENTS.format(n=7)}", f"POST {LABELS.format(n=7)}"]
    assert run.writes[0].status == 201 and run.writes[0].body == {"content": "eyes"}
    assert run.writes[2].body == {"labels": list(plan.add_labels)}
    comments = fake_github.comments(REPO, 7)
    assert len(comments) == 1 and f"<!-- ptd-triage:{plan.comment.template} -->" in comments[0]["body"]
    assert set(fake_github.issue_labels(REPO, 7)) == {QUEUE, *plan.add_labels}
    assert run.outputs["outcome"] == plan.outcome
    assert json.loads(run.outputs["labels-added"]) == list(plan.add_labels)
    assert json.loads(run.outputs["plan"])["issue"] == 7
    assert "[#7](" in run.summary and plan.outcome in run.summary  # the summary's wording is report.py's


def test_labeled_issue_with_comments_reads_them_and_stays_within_six_calls(fake_github, tmp_path):
    seed_issue(fake_github, 8, NEEDS_REPRO)
    fake_github.add_comment(REPO, 8, "Same here on 2 nodes.", author="someone")
    plan = expected_plan(fake_github, 8)
    assert plan.comment is not None

    run = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 8, "labeled", label=QUEUE)))

    assert _calls(run) == [f"GET {ISSUE.format(n=8)}", f"GET {COMMENTS.format(n=8)}", f"POST {CLAIM.format(n=8)}",
                           f"POST {COMMENTS.format(n=8)}", f"GET {COMMENTS.format(n=8)}", f"POST {LABELS.format(n=8)}"]
    assert json.loads(run.outputs["labels-added"]) == list(plan.add_labels)


def test_second_run_on_the_same_issue_writes_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 9, NOT_DISTRIBUTED)
    _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 9, "labeled", label=QUEUE)))
    labels_after_first = fake_github.issue_labels(REPO, 9)

    # A new event (e.g. the queue label removed and added back) carries the issue as it is now.
    second = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 9, "labeled", label=QUEUE)))

    assert second.writes == []
    assert second.outputs["outcome"] == "nothing_to_do"
    assert len(fake_github.comments(REPO, 9)) == 1
    assert fake_github.issue_labels(REPO, 9) == labels_after_first


def test_labeled_without_comment_makes_a_single_labels_call(fake_github, tmp_path):
    seed_issue(fake_github, 10, FSDP_WITH_REPRO)
    plan = expected_plan(fake_github, 10)
    assert plan.comment is None and plan.add_labels

    run = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 10, "labeled", label=QUEUE)))

    assert _calls(run) == [f"GET {ISSUE.format(n=10)}", f"POST {LABELS.format(n=10)}"]
    assert run.outputs["sub-oncall"] == plan.sub_oncall
    assert json.loads(run.outputs["modules"]) == list(plan.modules)


def test_another_label_is_logged_and_ignored_without_any_call(fake_github, tmp_path):
    seed_issue(fake_github, 11, NOT_DISTRIBUTED, labels=(QUEUE, "bug"))
    run = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 11, "labeled", label="bug")))
    assert run.requests == []
    assert run.outputs["outcome"] == "ignored"
    assert "'bug' is not the queue label" in run.stdout


def test_queue_label_input_changes_which_label_triggers(fake_github, tmp_path):
    seed_issue(fake_github, 12, NOT_DISTRIBUTED, labels=("oncall: distributed-sandbox",))
    payload = issues_payload(fake_github, 12, "labeled", label="oncall: distributed-sandbox")
    run = _ok(run_action(fake_github, tmp_path, "issues", payload, inputs={"queue-label": "oncall: distributed-sandbox"}))
    assert run.outputs["outcome"] == "not_distributed"
    assert MARKER in fake_github.issue_labels(REPO, 12)


@pytest.mark.parametrize("action", ["opened", "reopened"])
def test_opened_or_reopened_with_the_queue_label_is_triaged(fake_github, tmp_path, action):
    seed_issue(fake_github, 13, FSDP_WITH_REPRO)
    plan = expected_plan(fake_github, 13)
    run = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 13, action)))
    assert _calls(run) == [f"GET {ISSUE.format(n=13)}", f"POST {LABELS.format(n=13)}"]
    assert run.outputs["outcome"] == plan.outcome


def test_opened_without_the_queue_label_is_ignored(fake_github, tmp_path):
    seed_issue(fake_github, 14, FSDP_WITH_REPRO, labels=("bug",))
    run = _ok(run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 14, "opened")))
    assert run.requests == [] and run.outputs["outcome"] == "ignored"


def _bad_config(fake) -> dict[str, str]:
    """A `config` input naming a repository file that cannot load: a run that reads it fails."""
    fake.add_file(REPO, ".github/ptd-triage.yml", "extends: [not, a, name]\n")
    return {"config": ".github/ptd-triage.yml"}


@pytest.mark.parametrize("case", ["another label", "opened outside the queue", "command outside the queue"])
def test_an_event_the_inputs_already_rule_out_loads_no_queue(fake_github, tmp_path, case):
    """Issue 27: with the queue label named by the input, an event that is not for us is answered from the payload
    alone, before any queue is loaded or read: here the `config` input names a file that would fail the run, and
    it is never read. (Issue 40: the input is empty by default, so the configuration's label wins; a workflow that
    names it keeps this answer for free.)"""
    from actionrun import comment_payload

    seed_issue(fake_github, 17, NOT_DISTRIBUTED, labels=("bug",))
    if case == "another label":
        event, payload = "issues", issues_payload(fake_github, 17, "labeled", label="bug")
    elif case == "opened outside the queue":
        event, payload = "issues", issues_payload(fake_github, 17, "opened")
    else:
        comment = fake_github.add_comment(REPO, 17, "/ptd-retriage", author="maint")
        event, payload = "issue_comment", comment_payload(fake_github, 17, comment)
    run = _ok(run_action(fake_github, tmp_path, event, payload, inputs={**_bad_config(fake_github), "queue-label": QUEUE}))
    assert run.requests == [] and run.outputs["outcome"] == "ignored"
    assert "queue label" in run.stdout
    # With no input and no `config` either (the bundled queue), its label is known without loading it: the same.
    bundled = _ok(run_action(fake_github, tmp_path, event, payload))
    assert bundled.requests == [] and bundled.outputs["outcome"] == "ignored" and "queue label" in bundled.stdout


def test_without_the_queue_label_input_the_configuration_decides(fake_github, tmp_path):
    """The control: with the input empty (its default), only the configuration knows the queue label, so it is read
    (and here it fails the run)."""
    seed_issue(fake_github, 18, NOT_DISTRIBUTED, labels=("bug",))
    payload = issues_payload(fake_github, 18, "opened")
    run = run_action(fake_github, tmp_path, "issues", payload, inputs=_bad_config(fake_github))
    assert run.returncode == 1 and any("/contents/" in call for call in run.calls())


def test_an_issues_action_we_do_not_act_on_exits_zero(fake_github, tmp_path):
    seed_issue(fake_github, 15, FSDP_WITH_REPRO)
    payload = issues_payload(fake_github, 15, "opened")
    payload["action"] = "closed"
    run = _ok(run_action(fake_github, tmp_path, "issues", payload))
    assert run.requests == [] and "'issues.closed' is not an event ptd-triage acts on" in run.stdout


def test_rerun_of_a_job_refetches_the_issue_because_the_payload_is_stale(fake_github, tmp_path):
    seed_issue(fake_github, 16, NOT_DISTRIBUTED)
    payload = issues_payload(fake_github, 16, "labeled", label=QUEUE)
    _ok(run_action(fake_github, tmp_path, "issues", payload))

    # "Re-run jobs" replays the same payload, which predates our writes; GITHUB_RUN_ATTEMPT says so.
    rerun = _ok(run_action(fake_github, tmp_path, "issues", payload, env={"GITHUB_RUN_ATTEMPT": "2"}))

    assert rerun.writes == []
    assert _calls(rerun) == [f"GET /repos/{REPO}/issues/16", f"GET {COMMENTS.format(n=16)}"]
    assert len(fake_github.comments(REPO, 16)) == 1


# ---- schedule and workflow_dispatch ------------------------------------------------------------------------------


def _seed_queue(fake):
    seed_issue(fake, 20, NOT_DISTRIBUTED)
    seed_issue(fake, 21, FSDP_WITH_REPRO)
    seed_issue(fake, 22, NEEDS_REPRO)
    seed_issue(fake, 23, FSDP_WITH_REPRO, labels=(QUEUE, MARKER))  # already processed: not in the sweep
    seed_issue(fake, 24, FSDP_WITH_REPRO, labels=("bug",))  # not in the queue
    seed_issue(fake, 25, FSDP_WITH_REPRO, state="closed")
    return {n: expected_plan(fake, n) for n in (20, 21, 22)}


def test_schedule_sweeps_open_queue_issues_without_the_marker(fake_github, tmp_path):
    plans = _seed_queue(fake_github)
    run = _ok(run_action(fake_github, tmp_path, "schedule", schedule_payload()))

    search = [r for r in run.requests if r.path == "/search/issues"]
    # Issues waiting for a person (the review label without the marker) are not even found: no budget spent.
    assert search and search[0].query["q"] == (f'repo:{REPO} is:issue is:open label:"{QUEUE}" -label:"{MARKER}" '
                                               f'-label:"triage review" -label:"ptd-bot-skip"')
    touched = {int(r.path.split("/")[5]) for r in run.writes}
    assert touched == {20, 21, 22}
    for number, plan in plans.items():
        assert set(plan.add_labels) <= set(fake_github.issue_labels(REPO, number))
        assert len(fake_github.comments(REPO, number)) == (1 if plan.comment else 0)
    assert run.outputs["outcome"] == "swept"
    assert sorted(p["issue"] for p in json.loads(run.outputs["plan"])) == [20, 21, 22]
    for number in (23, 24, 25):
        assert fake_github.comments(REPO, number) == []

    again = _ok(run_action(fake_github, tmp_path, "schedule", schedule_payload()))
    assert again.writes == []


def test_sweep_stops_at_max_issues(fake_github, tmp_path):
    _seed_queue(fake_github)
    run = _ok(run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"max-issues": "2"}))
    assert len(json.loads(run.outputs["plan"])) == 2
    assert len({r.path.split("/")[5] for r in run.writes}) == 2


def test_one_failing_issue_does_not_stop_the_sweep_but_fails_the_run(fake_github, tmp_path):
    plans = _seed_queue(fake_github)
    fake_github.inject("POST", LABELS.format(n=21), 500, times=20)  # more than the client's retries

    run = run_action(fake_github, tmp_path, "schedule", schedule_payload())

    assert run.returncode == 1
    assert "::error::#21:" in run.stdout and "::error::sweep: 1 of 3 issue(s) failed" in run.stdout
    for number in (20, 22):
        assert set(plans[number].add_labels) <= set(fake_github.issue_labels(REPO, number))
    assert MARKER not in fake_github.issue_labels(REPO, 21)


def test_dispatch_with_issue_number_triages_that_issue(fake_github, tmp_path):
    seed_issue(fake_github, 30, NEEDS_REPRO)
    plan = expected_plan(fake_github, 30)
    run = _ok(run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload({"issue-number": "30"}),
                         inputs={"issue-number": "30"}))
    assert _calls(run)[0] == f"GET /repos/{REPO}/issues/30"
    assert run.outputs["outcome"] == plan.outcome
    assert set(plan.add_labels) <= set(fake_github.issue_labels(REPO, 30))


def test_dispatch_dry_run_writes_nothing_and_still_reports_the_plan(fake_github, tmp_path):
    seed_issue(fake_github, 31, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 31)
    run = _ok(run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                         inputs={"issue-number": "31", "dry-run": "true"}))
    assert run.writes == []
    assert fake_github.comments(REPO, 31) == [] and fake_github.issue_labels(REPO, 31) == [QUEUE]
    assert run.outputs["outcome"] == plan.outcome
    assert json.loads(run.outputs["labels-added"]) == list(plan.add_labels)
    assert json.loads(run.outputs["plan"])["comment"]["template"] == plan.comment.template
    assert "dry run, nothing written" in run.summary.splitlines()[0] and "| Would add | Would post |" in run.summary


def test_dispatch_without_issue_number_sweeps(fake_github, tmp_path):
    _seed_queue(fake_github)
    run = _ok(run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(), inputs={"dry-run": "true"}))
    assert run.writes == [] and run.outputs["outcome"] == "swept"
    assert sorted(p["issue"] for p in json.loads(run.outputs["plan"])) == [20, 21, 22]


def test_dispatch_for_a_missing_issue_fails_with_one_line(fake_github, tmp_path):
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(), inputs={"issue-number": "999"})
    assert run.returncode == 1
    errors = [l for l in run.stdout.splitlines() if l.startswith("::error::")]
    assert len(errors) == 1 and "404" in errors[0]
    assert run.writes == [] and run.outputs["outcome"] == "error"


def test_sweep_skips_an_issue_that_left_the_queue_since_the_search(fake_github, tmp_path):
    seed_issue(fake_github, 26, NOT_DISTRIBUTED)
    stale_item = dict(fake_github.issue(REPO, 26), score=1.0)  # what the search index still says
    seed_issue(fake_github, 26, NOT_DISTRIBUTED, labels=("bug",))  # meanwhile a human removed the queue label
    fake_github.inject("GET", "/search/issues", 200, body={"total_count": 1, "incomplete_results": False,
                                                           "search_type": "lexical", "items": [stale_item]})

    run = _ok(run_action(fake_github, tmp_path, "schedule", schedule_payload()))

    assert run.writes == []
    assert _calls(run) == ["GET /search/issues", f"GET /repos/{REPO}/issues/26"]
    assert json.loads(run.outputs["plan"]) == []  # skipped, not triaged: it does not count against max-issues
    assert "found 1, triaged 0, failed 0, skipped 1, left 0" in run.stdout


def test_sweep_stops_early_when_github_refuses_the_token(fake_github, tmp_path):
    _seed_queue(fake_github)
    fake_github.inject("POST", f"/repos/{REPO}/issues/\\d+/(comments|labels)", 403, times=50,
                       body={"message": "Resource not accessible by integration",
                             "documentation_url": "https://docs.github.com/rest"})

    run = run_action(fake_github, tmp_path, "schedule", schedule_payload())

    assert run.returncode == 1
    assert len(json.loads(run.outputs["plan"])) == 1  # the other issues were not attempted
    assert "stopped early" in run.stdout and "Resource not accessible by integration" in run.stdout
