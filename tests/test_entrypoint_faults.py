"""End to end: network faults, rate limits, and a run killed half-way then re-run.

Retries are real (the stand-in answers 502/429/403 first), only their sleeps are capped by
PTD_TRIAGE_MAX_BACKOFF=0.05 (set by the harness) so the suite stays fast.
"""
from __future__ import annotations

import time

from actionrun import MARKER, NOT_DISTRIBUTED, QUEUE, REPO, expected_plan, issues_payload, run_action, seed_issue

COMMENTS = f"/repos/{REPO}/issues/{{n}}/comments"
LABELS = f"/repos/{REPO}/issues/{{n}}/labels"

# Every run that talks to GitHub first reads the repository's config file (one contents request; `config: none`
# skips it). It is per run, not per issue: the budgets below count the calls about the issue.
CONFIG_READ = f"GET /repos/{REPO}/contents/.github/ptd-triage.yml"


def _calls(run) -> list[str]:
    return [c for c in run.calls() if c != CONFIG_READ]


def _end_outage(fake) -> None:
    """Drop the remaining injected faults (the stand-in has no public call for it yet)."""
    clear = getattr(fake, "clear_faults", None)
    if clear is not None:
        clear()
    else:
        fake._faults.clear()


def _posts(run, path):
    return [r for r in run.requests if r.method == "POST" and r.path == path]


def _assert_fully_triaged_once(fake, number, plan):
    assert set(plan.add_labels) <= set(fake.issue_labels(REPO, number))
    ours = [c for c in fake.comments(REPO, number) if "<!-- ptd-triage:" in (c["body"] or "")]
    assert len(ours) == 1


def test_killed_after_the_comment_then_rerun_by_a_new_event_completes_without_a_second_comment(fake_github, tmp_path):
    seed_issue(fake_github, 60, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 60)
    fake_github.inject("POST", LABELS.format(n=60), 502, times=50)  # the labels call never gets through

    first = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 60, "labeled", label=QUEUE))

    assert first.returncode == 1
    assert len(fake_github.comments(REPO, 60)) == 1 and MARKER not in fake_github.issue_labels(REPO, 60)
    assert "Comment posted |" in first.summary and "| `not_distributed` |" in first.summary  # the summary tells what did get written
    _end_outage(fake_github)

    second = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 60, "labeled", label=QUEUE))

    assert second.returncode == 0, second.stdout
    assert _posts(second, COMMENTS.format(n=60)) == []
    assert len(_posts(second, LABELS.format(n=60))) == 1
    _assert_fully_triaged_once(fake_github, 60, plan)


def test_killed_after_the_comment_then_rerun_job_with_the_same_payload(fake_github, tmp_path):
    seed_issue(fake_github, 61, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 61)
    payload = issues_payload(fake_github, 61, "labeled", label=QUEUE)
    fake_github.inject("POST", LABELS.format(n=61), 500, times=50)
    assert run_action(fake_github, tmp_path, "issues", payload).returncode == 1
    _end_outage(fake_github)

    rerun = run_action(fake_github, tmp_path, "issues", payload, env={"GITHUB_RUN_ATTEMPT": "2"})

    assert rerun.returncode == 0, rerun.stdout
    assert _posts(rerun, COMMENTS.format(n=61)) == []
    _assert_fully_triaged_once(fake_github, 61, plan)


def test_comment_stored_but_answer_lost_is_not_posted_twice(fake_github, tmp_path):
    seed_issue(fake_github, 62, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 62)
    fake_github.inject("POST", COMMENTS.format(n=62), 502, after_effect=True)  # GitHub stored it, then 502

    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 62, "labeled", label=QUEUE))

    assert run.returncode == 0, run.stdout
    assert len(_posts(run, COMMENTS.format(n=62))) == 1  # not retried blindly: the client looked first
    assert f"GET {COMMENTS.format(n=62)}" in _calls(run)
    _assert_fully_triaged_once(fake_github, 62, plan)


def test_502_on_a_read_is_retried(fake_github, tmp_path):
    seed_issue(fake_github, 63, NOT_DISTRIBUTED)
    fake_github.add_comment(REPO, 63, "me too", author="someone")
    plan = expected_plan(fake_github, 63)
    fake_github.inject("GET", COMMENTS.format(n=63), 502, times=2)

    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 63, "labeled", label=QUEUE))

    assert run.returncode == 0, run.stdout
    # Two 502s and the retry that succeeds, then the read after posting (triage.service.claim.settle).
    assert _calls(run).count(f"GET {COMMENTS.format(n=63)}") == 4
    _assert_fully_triaged_once(fake_github, 63, plan)


def test_429_with_retry_after_is_waited_out_and_retried(fake_github, tmp_path):
    seed_issue(fake_github, 64, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 64)
    fake_github.inject("POST", LABELS.format(n=64), 429, headers={"Retry-After": "30"},
                       body={"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com"})

    started = time.monotonic()
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 64, "labeled", label=QUEUE))

    assert run.returncode == 0, run.stdout
    assert time.monotonic() - started < 10  # the 30 s wait was capped by PTD_TRIAGE_MAX_BACKOFF
    assert len(_posts(run, LABELS.format(n=64))) == 2
    _assert_fully_triaged_once(fake_github, 64, plan)


def test_secondary_rate_limit_403_is_retried(fake_github, tmp_path):
    seed_issue(fake_github, 65, NOT_DISTRIBUTED)
    plan = expected_plan(fake_github, 65)
    fake_github.inject("POST", COMMENTS.format(n=65), 403, body={
        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})

    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 65, "labeled", label=QUEUE))

    assert run.returncode == 0, run.stdout
    assert len(_posts(run, COMMENTS.format(n=65))) == 2  # refused (not processed), so safe to send again
    _assert_fully_triaged_once(fake_github, 65, plan)


def test_rate_limit_longer_than_max_wait_fails_clearly_with_nothing_written(fake_github, tmp_path):
    seed_issue(fake_github, 66, NOT_DISTRIBUTED)
    reset = str(int(time.time()) + 3600)
    fake_github.inject("POST", COMMENTS.format(n=66), 403, times=10,
                       headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
                       body={"message": "API rate limit exceeded", "documentation_url": "https://docs.github.com"})

    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 66, "labeled", label=QUEUE))

    assert run.returncode == 1
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error::")]
    assert len(errors) == 1 and "rate limited" in errors[0] and "re-run later" in errors[0]
    assert fake_github.comments(REPO, 66) == [] and fake_github.issue_labels(REPO, 66) == [QUEUE]
