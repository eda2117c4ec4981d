"""The comment claim under thousands of interleavings (tests/claim_schedules.py): two or three runs at once on one
issue, any request delayed by up to 12 s, any run killed before any request and run again, the account's 👀 there
before or not. At the end of every schedule: exactly one comment of ours from the template, the labels on, at most
one 👀 of the account. `PTD_CLAIM_SCHEDULES` sets the schedules per case (default 150; 2,000 took 25 s here)."""
from __future__ import annotations

import os

import pytest
from claim_schedules import BEFORE, schedule

import claim_schedules

COUNT = int(os.environ.get("PTD_CLAIM_SCHEDULES", "150"))


@pytest.mark.parametrize("runs", [2, 3])
@pytest.mark.parametrize("kill", [False, True], ids=["alive", "one-killed-and-rerun"])
@pytest.mark.parametrize("before", list(BEFORE))
def test_every_schedule_ends_with_one_comment(before, kill, runs):
    outcomes = [schedule(seed, before, runs=runs, kill=kill) for seed in range(COUNT)]
    broken = [(o.seed, o.kills, o.problems) for o in outcomes if o.problems]
    assert broken == [], f"seeds that broke it (replay: schedule(seed, {before!r}, runs={runs}, kill={kill})): " \
                         f"{broken[:5]}"


@pytest.mark.parametrize("before", list(BEFORE))
def test_two_runs_answered_within_a_second_never_even_post_twice(before, monkeypatch):
    """The safety net (a twin deleted after it was posted, which notifies subscribers twice) is for a run slower
    than the claim's wait: with every request answered within a second, the claim alone keeps it to one post."""
    monkeypatch.setattr(claim_schedules, "STALLS", (0.0, 0.0, 0.2, 1.0))
    posted = [schedule(seed, before, runs=2, kill=False).posted for seed in range(COUNT)]
    assert set(posted) == {1}
