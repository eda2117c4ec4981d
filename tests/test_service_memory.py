"""The triage service against GitHub in memory (tests/memory_github.py, an implementation of the service's port):
what one issue and a sweep read and write, with no server. The loopback tests (test_sweep_paging, test_claim,
test_entrypoint_*) keep checking the same behaviour over real HTTP; these pin the service's own decisions and its
request budget, call by call."""
from __future__ import annotations

import time

import pytest
from actionrun import FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO
from memory_github import EPOCH, MemoryGitHub, stamp

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.core.vocab import Outcome
from triage.http.errors import AuthError
from triage.planners import plan_issue
from triage.service.limits import SWEEP_API_RESERVE
from triage.service.triager import Triager

BUNDLE = load_bundle()
REVIEW = BUNDLE.labels.review
CRASH = ("NCCL all_reduce dies on 8 GPUs",
         "Training with DDP dies after a few steps.\n```python\nmodel = DDP(net)\nloss.backward()\n```\n"
         "\n```\nSegmentation fault (core dumped)\n```")


def seed(github: MemoryGitHub, number: int, scenario: tuple[str, str], *, labels=(QUEUE,), **kwargs) -> dict:
    title, body = scenario
    return github.add_issue(REPO, number, title=title, body=body, labels=labels, **kwargs)


def triager(github: MemoryGitHub, **kwargs) -> Triager:
    return Triager(github, BUNDLE, repo=REPO, own_logins=(github.bot_login,), recent_seconds=0,
                   **kwargs)


def planned(github: MemoryGitHub, number: int):
    return plan_issue(snapshot_from_json(github.issue(REPO, number), github.comments(REPO, number)), BUNDLE)


def same_plan(a, b) -> bool:
    """The same decisions (the time the planner took aside)."""
    return {**a.to_dict(), "elapsed_ms": 0} == {**b.to_dict(), "elapsed_ms": 0}


def calls(github: MemoryGitHub, start: int = 0) -> list[tuple[str, object]]:
    return [(c.method, c.target) for c in github.calls[start:]]


# ---- one issue --------------------------------------------------------------------------------------------------

def test_a_routed_issue_gets_its_labels_and_its_comment_once():
    github = MemoryGitHub()
    seed(github, 7, NEEDS_REPRO)
    plan = planned(github, 7)
    assert plan.outcome == Outcome.CLASSIFIED and plan.comment is not None and MARKER in plan.add_labels

    result = triager(github).triage(7)

    assert result.error is None and same_plan(result.plan, plan)
    assert github.labels(REPO, 7) == [QUEUE, *plan.add_labels]
    [comment] = github.comments(REPO, 7)
    assert comment["user"]["login"] == github.bot_login
    assert f"ptd-triage:{plan.comment.template}" in comment["body"]
    # 1 read, the claim, then the comment before the labels (a run killed between them posts no second comment),
    # with the comments read once after it (a twin from a run at the same moment would be deleted).
    assert calls(github) == [("get_issue", 7), ("claim_issue", 7), ("create_comment", 7), ("list_comments", 7),
                             ("add_labels", 7)]
    assert result.requests == 5 and result.applied.comment_template == plan.comment.template


def test_a_second_run_reads_and_writes_nothing():
    github = MemoryGitHub()
    seed(github, 7, NEEDS_REPRO)
    first = triager(github).triage(7)
    assert first.comment_posted and first.labels_written
    start, writes = len(github.calls), len(github.writes())

    again = triager(github).triage(7)
    sweep = triager(github).sweep(10)

    assert again.error is None and again.plan.outcome == Outcome.NOTHING_TO_DO
    assert not again.labels_written and again.comment_posted is None
    assert calls(github, start)[:2] == [("get_issue", 7), ("list_comments", 7)]  # 2 reads, no write
    assert again.requests == 2 and len(github.writes()) == writes == 2
    assert sweep.found == 0 and sweep.results == []  # the marker takes it out of the queue
    assert len(github.comments(REPO, 7)) == 1


def test_a_high_priority_flag_is_held_until_a_person_dismisses_it_and_is_not_raised_again():
    github = MemoryGitHub()
    seed(github, 3, CRASH)
    flagged = triager(github).triage(3)
    assert flagged.plan.outcome == Outcome.HIGH_PRIORITY
    assert REVIEW in github.labels(REPO, 3) and MARKER not in github.labels(REPO, 3)
    writes = len(github.writes())

    start = len(github.calls)
    held = triager(github).triage(3)
    sweep = triager(github).sweep(10)
    assert held.left and "waiting for a person" in held.left and held.requests == 1
    assert calls(github, start)[0] == ("get_issue", 3) and sweep.found == 0
    assert len(github.writes()) == writes  # a re-run or a sweep never lifts the hold

    github.unlabel_by_person(REPO, 3, REVIEW)  # a person looked and dismissed the flag
    after = triager(github).triage(3)
    assert after.error is None and after.plan.outcome != Outcome.HIGH_PRIORITY
    assert ("list_events", 3) in calls(github, start)  # the history says the flag was dismissed
    assert REVIEW not in github.labels(REPO, 3) and MARKER in github.labels(REPO, 3)


def test_a_person_s_own_review_label_is_left_alone():
    github = MemoryGitHub()
    seed(github, 4, NEEDS_REPRO, labels=(QUEUE, REVIEW))
    result = triager(github).triage(4)
    assert result.left and REVIEW in result.left
    assert calls(github) == [("get_issue", 4)] and github.writes() == []


@pytest.mark.parametrize("labels, state, why", [((), "open", "not in the queue"), ((QUEUE,), "closed", "closed")])
def test_an_issue_outside_the_queue_is_untouched(labels, state, why):
    github = MemoryGitHub()
    seed(github, 5, NOT_DISTRIBUTED, labels=labels, state=state)
    result = triager(github).triage(5)
    assert result.left and why in result.left and result.plan is None
    assert calls(github) == [("get_issue", 5)] and github.writes() == []
    assert github.labels(REPO, 5) == list(labels) and github.comments(REPO, 5) == []


def test_a_dry_run_plans_and_writes_nothing():
    github = MemoryGitHub()
    seed(github, 7, NEEDS_REPRO)
    result = triager(github, dry_run=True).triage(7)
    assert same_plan(result.plan, planned(github, 7)) and result.comment_posted == result.plan.comment.template
    assert calls(github) == [("get_issue", 7)] and github.comments(REPO, 7) == []


# ---- the sweep --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lags", [False, True], ids=["index-current", "index-lags"])
def test_a_sweep_pages_by_key_and_reaches_every_issue_once(lags):
    github = MemoryGitHub(search_lags=lags)
    for number in range(1, 231):  # three pages of 100
        seed(github, number, FSDP_WITH_REPRO)

    result = triager(github).sweep(1000, reserve=0)

    assert result.failed == [] and result.stopped is None and result.left == 0 and result.found == 230
    assert [r.number for r in result.triaged] == list(range(1, 231))  # each once, oldest first
    assert all(MARKER in github.labels(REPO, n) for n in range(1, 231))
    assert len([c for c in github.writes() if c.method == "add_labels"]) == 230
    searches = [c.target for c in github.calls if c.method == "search_page"]
    assert len(searches) <= 4  # a page per hundred issues, plus the last look
    assert all("created:>=" in q for q in searches[1:])  # paging by key, never by page number

    again = triager(github).sweep(1000, reserve=0)  # a lagging index still lists them: re-read, left alone
    assert again.results == [] and len(github.writes()) == 230
    if lags:
        assert again.skipped == {"already processed (the search index lags)": 230}


def test_a_sweep_stops_at_max_issues_and_the_next_one_takes_the_rest():
    github = MemoryGitHub()
    for number in range(1, 8):
        seed(github, number, FSDP_WITH_REPRO)
    first = triager(github).sweep(3)
    assert [r.number for r in first.triaged] == [1, 2, 3] and first.found == 7 and first.left == 4
    assert "max-issues (3)" in first.stopped
    second = triager(github).sweep(10)
    assert [r.number for r in second.triaged] == [4, 5, 6, 7] and second.left == 0 and second.stopped is None


@pytest.mark.parametrize("reserve", [10, SWEEP_API_RESERVE])
def test_the_reserve_argument_stops_a_sweep_before_the_request_budget(reserve):
    github = MemoryGitHub(budget=100)
    for number in range(1, 61):  # 2 requests each: more than the budget allows
        seed(github, number, FSDP_WITH_REPRO)

    result = triager(github).sweep(1000, reserve=reserve)

    assert result.failed == [] and result.stopped and "budget" in result.stopped
    assert github.remaining == reserve and github.limits_tripped == 0  # stopped at the reserve, GitHub never said no
    assert result.left + len(result.triaged) == result.found == 60 and result.left > 0
    assert all(MARKER in github.labels(REPO, r.number) for r in result.triaged)
    assert all(MARKER not in github.labels(REPO, n) for n in range(len(result.triaged) + 1, 61))
    github.get_issue(REPO, 1)  # the reserve held for the sweep only: the client is handed back as it came


@pytest.mark.parametrize("reserve", [10, 11, 12, 13])
def test_a_sweep_that_runs_out_writes_every_issue_whole_or_not_at_all(reserve):
    """A commented issue costs a read, the claim, the comment and the labels: a budget that runs out inside an
    issue used to leave a comment without its labels, a failed issue and a red run. Now the sweep checks that all
    of an issue's calls fit before the first write, so whatever the alignment it stops cleanly between issues."""
    github = MemoryGitHub(budget=100)
    for number in range(1, 41):
        seed(github, number, NEEDS_REPRO)

    result = triager(github).sweep(1000, reserve=reserve)

    assert result.failed == [] and result.stopped and "budget" in result.stopped, result.stopped
    assert github.limits_tripped == 0 and result.triaged
    for number in range(1, 41):
        commented = bool(github.comments(REPO, number))
        assert commented == (MARKER in github.labels(REPO, number)), number  # both writes, or neither


def test_a_reserve_larger_than_the_budget_sends_nothing():
    github = MemoryGitHub(budget=20)
    seed(github, 1, FSDP_WITH_REPRO)
    result = triager(github).sweep(10, reserve=20)
    assert github.request_count == 0 and result.results == [] and "budget" in result.stopped


def test_a_refusal_that_would_fail_every_issue_stops_the_sweep_and_reports_it():
    github = MemoryGitHub()
    for number in range(1, 6):
        seed(github, number, FSDP_WITH_REPRO)
    github.fail_next("get_issue", AuthError(403, "GET", "/repos/o/r/issues/1", "Resource not accessible"))
    result = triager(github).sweep(10)
    assert [r.number for r in result.failed] == [1] and result.failed[0].fatal
    assert "GitHub refused" in result.stopped and result.left == 4 and github.writes() == []


def test_an_issue_updated_in_the_last_minutes_is_left_to_its_own_run():
    github = MemoryGitHub()
    seed(github, 1, FSDP_WITH_REPRO)
    seed(github, 2, FSDP_WITH_REPRO)
    github.label_by_person(REPO, 2, "module: fsdp")  # now: its own event run is taking it
    result = Triager(github, BUNDLE, repo=REPO, recent_seconds=600).sweep(10)
    assert [r.number for r in result.triaged] == [1] and sum(result.skipped.values()) == 1
    assert ("get_issue", 2) not in calls(github)  # not even read


def test_not_before_skip_leaves_older_issues_unread_and_counts_them():
    github = MemoryGitHub()
    for number, scenario in ((1, NOT_DISTRIBUTED), (2, NEEDS_REPRO), (3, NOT_DISTRIBUTED), (4, NEEDS_REPRO)):
        seed(github, number, scenario)
    cutoff = stamp(EPOCH + 60 * 3)  # issue 3's creation

    result = triager(github, not_before=cutoff).sweep(10)

    assert [r.number for r in result.triaged] == [3, 4] and result.before_cutoff == 2
    assert {c.target for c in github.calls if c.method == "get_issue"} == {3, 4}
    searches = [c.target for c in github.calls if c.method == "search_page"]
    assert searches[0].endswith(f"created:<{cutoff}") and searches[1].endswith(f"created:>={cutoff}")
    assert all(github.labels(REPO, n) == [QUEUE] and github.comments(REPO, n) == [] for n in (1, 2))


def test_not_before_labels_only_labels_older_issues_without_a_comment():
    github = MemoryGitHub()
    for number, scenario in ((1, NOT_DISTRIBUTED), (2, NEEDS_REPRO), (3, NOT_DISTRIBUTED)):
        seed(github, number, scenario)
    plans = {n: planned(github, n) for n in (1, 2, 3)}
    assert all(p.comment is not None for p in plans.values())

    result = triager(github, not_before=stamp(EPOCH + 60 * 3), not_before_mode="labels-only").sweep(10)

    assert [r.number for r in result.triaged] == [1, 2, 3] and result.before_cutoff == 2
    for number in (1, 2):
        assert github.comments(REPO, number) == [] and set(plans[number].add_labels) <= set(github.labels(REPO, number))
        assert any("not-before" in reason for reason in result.triaged[number - 1].plan.explained)
    assert len(github.comments(REPO, 3)) == 1


def test_the_fake_refuses_a_query_it_does_not_model():
    with pytest.raises(ValueError, match="does not understand"):
        MemoryGitHub().search_page('repo:o/r label:"x" updated:>2024-01-01')
    with pytest.raises(ValueError, match="free text"):
        MemoryGitHub().search_page("repo:o/r hang")


def test_the_issue_deadline_ends_one_issue_with_nothing_written():
    now = [time.time()]
    github = MemoryGitHub(clock=lambda: now[0])
    seed(github, 1, FSDP_WITH_REPRO)
    original = github.get_issue

    def slow_read(repo, number):
        issue = original(repo, number)
        now[0] += 200  # the read took longer than the issue's time
        return issue

    github.get_issue = slow_read
    result = triager(github, issue_seconds=120, clock=lambda: now[0]).triage(1)
    assert result.out_of_budget and "deadline" in result.error and github.writes() == []
