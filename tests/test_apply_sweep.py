"""One sweep loop for both sources (issue 27): the queue's search, and an apply run's saved plans. The apply run's
sweep used to be a loop of its own that kept none of the sweep's budgets: it could spend the requests the event
runs rely on, ran past sweep-timeout, failed issue after issue once the write pacing or the reserve said no, and
re-implemented the not-before cut-off. These pin that it now keeps every rule the search's sweep keeps: against
GitHub in memory (tests/memory_github.py, with a virtual clock), and once through the real entrypoint in
`mode: apply` against the stand-in (tests/fakegithub)."""
from __future__ import annotations

import json

import pytest
from actionrun import (FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, run_action,
                       schedule_payload, seed_issue)
from memory_github import EPOCH, MemoryGitHub, stamp

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue
from triage.planners.replay import ReplayPlanner
from triage.service.limits import SWEEP_API_RESERVE
from triage.service.summary import count_gap, sweep_counts
from triage.service.sweep import ListedIssues
from triage.service.triager import Triager

BUNDLE = load_bundle()


class Clock:
    """A virtual clock that every request moves on by `step` seconds."""

    def __init__(self, step: float = 0.0) -> None:
        self.now, self.step = EPOCH + 10 * 86400.0, step

    def __call__(self) -> float:
        return self.now


class SlowGitHub(MemoryGitHub):
    """Each request takes `clock.step` seconds of the virtual clock."""

    def _send(self, method, target, *, write=False):
        super()._send(method, target, write=write)
        self.clock.now += self.clock.step


def seeded(count: int, scenario=FSDP_WITH_REPRO, **kwargs) -> MemoryGitHub:
    github = kwargs.pop("github", None) or MemoryGitHub(**kwargs)
    for number in range(1, count + 1):
        github.add_issue(REPO, number, title=scenario[0], body=scenario[1], labels=(QUEUE,))
    return github


def saved_plans(github: MemoryGitHub, numbers) -> ReplayPlanner:
    """What a plan job would have saved for these issues: the rubric's plans."""
    return ReplayPlanner({n: plan_issue(snapshot_from_json(github.issue(REPO, n), github.comments(REPO, n)), BUNDLE)
                          for n in numbers})


def apply_triager(github: MemoryGitHub, numbers, **kwargs) -> Triager:
    return Triager(github, BUNDLE, repo=REPO, own_logins=(github.bot_login,), recent_seconds=0, claim_wait=0,
                   planner=saved_plans(github, numbers), clock=github.clock, **kwargs)


def listed(numbers) -> ListedIssues:
    return ListedIssues(numbers, "apply the saved plans (test)")


def assert_counts_add_up(result) -> None:
    assert count_gap(result) is None, sweep_counts(result)


@pytest.mark.parametrize("reserve", [10, SWEEP_API_RESERVE])
def test_an_apply_sweep_stops_cleanly_at_the_reserve(reserve):
    github = seeded(60, budget=100)
    numbers = list(range(1, 61))  # 2 requests each: more than the budget allows
    result = apply_triager(github, numbers).sweep(1000, reserve=reserve, source=listed(numbers))

    assert result.failed == [] and result.stopped and "budget" in result.stopped
    assert github.remaining == reserve and github.limits_tripped == 0  # GitHub never had to say no
    assert result.found == 60 and 0 < result.left and len(result.triaged) + result.left == 60
    assert all(MARKER in github.labels(REPO, r.number) for r in result.triaged)
    assert all(MARKER not in github.labels(REPO, n) for n in range(len(result.triaged) + 1, 61))
    assert_counts_add_up(result)
    github.get_issue(REPO, 1)  # the reserve held for the sweep only


def test_an_apply_sweep_that_runs_out_writes_each_issue_whole_or_not_at_all():
    github = seeded(40, NEEDS_REPRO, budget=100)  # a comment each: the claim, the comment, the labels
    numbers = list(range(1, 41))
    result = apply_triager(github, numbers).sweep(1000, reserve=11, source=listed(numbers))

    assert result.failed == [] and "budget" in result.stopped and result.triaged
    for number in numbers:
        assert bool(github.comments(REPO, number)) == (MARKER in github.labels(REPO, number)), number


def test_an_apply_sweep_keeps_its_time_budget():
    clock = Clock(step=1.0)
    github = seeded(30, github=SlowGitHub(clock=clock))
    numbers = list(range(1, 31))
    result = apply_triager(github, numbers).sweep(1000, seconds=10, source=listed(numbers))

    assert "time budget (10 s)" in result.stopped and result.failed == []
    assert 0 < len(result.triaged) < 30 and result.left == 30 - len(result.triaged)
    assert_counts_add_up(result)


def test_an_apply_sweep_stops_cleanly_when_the_write_pacing_says_no():
    """The client refuses, with nothing sent, an issue whose writes would wait past the deadline (the pacing):
    the sweep ends there, as the search's does, instead of failing every issue after it."""
    github = seeded(5)
    writes = []

    def room_for(requests, count):
        if len(writes) >= 2:
            from triage.http.errors import BudgetExhausted
            raise BudgetExhausted(None, "POST", "(the issue's writes)", "write pacing: would wait past the deadline",
                                  service="memory")
        writes.append(count)

    github.room_for = room_for
    numbers = list(range(1, 6))
    result = apply_triager(github, numbers).sweep(1000, source=listed(numbers))

    assert [r.number for r in result.triaged] == [1, 2] and result.failed == []
    assert "budget ran out" in result.stopped and "write pacing" in result.stopped and result.left == 3
    assert_counts_add_up(result)


def test_an_apply_sweep_counts_issues_it_leaves_and_those_already_processed():
    github = seeded(4)
    numbers = [1, 2, 3, 4]
    triager = apply_triager(github, numbers)
    github.label_by_person(REPO, 2, MARKER)  # processed since the plan was made
    github.unlabel_by_person(REPO, 3, QUEUE)  # left the queue
    result = triager.sweep(1000, source=listed(numbers))

    assert [r.number for r in result.triaged] == [1, 4] and result.left == 0 and result.stopped is None
    assert sorted(result.skipped) == ["already processed", "not in the queue (no 'oncall: distributed' label)"]
    assert_counts_add_up(result)


def test_max_issues_counts_triaged_issues_for_both_sources():
    github = seeded(6)
    numbers = list(range(1, 7))
    result = apply_triager(github, numbers).sweep(2, source=listed(numbers))
    assert [r.number for r in result.triaged] == [1, 2] and result.left == 4 and "max-issues (2)" in result.stopped
    assert_counts_add_up(result)


def test_not_before_skip_leaves_older_listed_issues_and_counts_them():
    github = seeded(4, NOT_DISTRIBUTED)
    numbers = [1, 2, 3, 4]
    cutoff = stamp(EPOCH + 60 * 3)  # issue 3's creation
    result = apply_triager(github, numbers, not_before=cutoff).sweep(10, source=listed(numbers))

    assert [r.number for r in result.triaged] == [3, 4] and result.before_cutoff == 2
    assert all(github.labels(REPO, n) == [QUEUE] and github.comments(REPO, n) == [] for n in (1, 2))
    assert all("created before not-before" in why for why in result.skipped)
    assert not any(c.method == "search_page" for c in github.calls)  # the plans name the issues: no search
    assert_counts_add_up(result)


def test_not_before_labels_only_labels_older_listed_issues_without_a_comment():
    github = seeded(3, NOT_DISTRIBUTED)
    numbers = [1, 2, 3]
    result = apply_triager(github, numbers, not_before=stamp(EPOCH + 60 * 3),
                           not_before_mode="labels-only").sweep(10, source=listed(numbers))

    assert [r.number for r in result.triaged] == [1, 2, 3] and result.before_cutoff == 2
    assert github.comments(REPO, 1) == github.comments(REPO, 2) == [] and github.comments(REPO, 3)
    assert all(MARKER in github.labels(REPO, n) for n in numbers)


def test_the_search_and_the_list_give_the_same_result_on_the_same_queue():
    """The same issues, the same plans: the sweep over the search and over a list of the same numbers write the
    same labels and comments and count the same."""
    scenarios = [FSDP_WITH_REPRO, NEEDS_REPRO, NOT_DISTRIBUTED, NEEDS_REPRO]
    outcomes = []
    for source in ("search", "list"):
        github = MemoryGitHub()
        for number, (title, body) in enumerate(scenarios, 1):
            github.add_issue(REPO, number, title=title, body=body, labels=(QUEUE,))
        triager = apply_triager(github, range(1, 5))
        result = triager.sweep(10, source=None if source == "search" else listed(range(1, 5)))
        outcomes.append(([(r.number, r.outcome, r.labels_written, r.comment_posted) for r in result.results],
                         sweep_counts(result)))
    assert outcomes[0] == outcomes[1]


# ---- through the real entrypoint ----------------------------------------------------------------------------------


def test_an_apply_run_on_a_schedule_keeps_the_api_reserve(fake_github, tmp_path):
    """mode apply on a schedule, against the stand-in with a small hourly budget: the run stops at the reserve the
    sweep leaves to the event runs (nothing refused by GitHub), says so, exits 0 and counts what it left."""
    for number in range(1, 9):
        seed_issue(fake_github, number, FSDP_WITH_REPRO)
    path = tmp_path / "plans.json"
    planned = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                         inputs={"mode": "plan", "plans-file": str(path)})
    assert planned.returncode == 0 and len(json.loads(path.read_text())["plans"]) == 8, planned.stdout
    limit = fake_github._core.used + SWEEP_API_RESERVE + 7  # room for a few issues above the reserve
    fake_github.rate_limits.core_per_hour = fake_github._core.limit = limit

    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"mode": "apply", "plans-file": str(path)})

    assert run.returncode == 0, run.stdout + run.stderr
    assert "stopped early: the API budget ran out" in run.stdout + run.summary
    assert not fake_github.limit_events  # the stand-in never had to refuse
    assert fake_github._core.limit - fake_github._core.used >= SWEEP_API_RESERVE
    triaged, left = int(run.outputs["triaged"]), int(run.outputs["left"])
    assert 0 < triaged < 8 and triaged + left == 8
    labelled = [n for n in range(1, 9) if MARKER in fake_github.issue_labels(REPO, n)]
    assert labelled == list(range(1, triaged + 1))
