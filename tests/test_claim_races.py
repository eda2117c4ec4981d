"""Issue 30's acceptance, a few trials of each (the full 40-trial table: `python bench/duplicates.py`, in
docs/duplicates-and-concurrency.md): two runs at once through the real entrypoint (`main(environ)` in-process, the
code path entrypoint.py runs) on an issue whose account already reacted 👀 (30 days ago, 60 s ago, another
workflow's just now) or not at all, the stand-in answering at once or after 50 ms; and a run killed after each of its
requests, then re-run, ending as an uninterrupted run ends. Trials and counting: tests/sim/races.py."""
from __future__ import annotations

import pytest
from sim.races import kill_trials, measure

CELLS = [(pair, reaction, delay) for pair in ("two-events", "event+sweep")
         for reaction in ("none", "30 days", "60 s") for delay in (0.0, 0.05)]
# Another workflow's 👀, made as the runs start, is young: every run waits for a comment under it (3.5 s) before
# taking it over, so one delay each.
CELLS += [("two-events", "another workflow's", 0.05), ("event+sweep", "another workflow's", 0.0)]


@pytest.mark.parametrize("pair, reaction, delay", CELLS)
def test_two_runs_at_once_post_one_comment(pair, reaction, delay):
    """Aligned: the stand-in holds both runs' first read of the issue until both have asked, so both plan the comment
    and both claim: every trial is the race. One comment, nobody posted twice, no run failed."""
    row = measure(pair, "late, aligned", 1, reaction=reaction, delay=delay, mode="in_process")
    assert (row.contested, row.duplicates, row.missing, row.failed_runs, row.notes) == (1, 0, 0, 0, []), row
    assert row.posted_twice == 0, row


def test_the_control_sees_a_duplicate():
    """Without a claim to win (the stand-in answers 201 to every claim), the aligned race posts twice, and the
    safety net still leaves one comment: the trials can see what they count."""
    row = measure("two-events", "late, aligned", 1, reaction="30 days", claim=False, mode="in_process")
    assert (row.contested, row.posted_twice, row.duplicates, row.missing) == (1, 1, 0, 0), row


@pytest.mark.parametrize("reaction", ["none", "30 days", "60 s"])
def test_a_run_killed_after_any_request_is_completed_by_its_rerun(reaction):
    trials = kill_trials(reaction)
    assert len(trials) >= 4 and [t.detail for t in trials if not t.same] == []


@pytest.mark.parametrize("reaction", ["none", "30 days"])
def test_a_run_killed_beside_another_run_is_completed_by_its_rerun(reaction):
    trials = kill_trials(reaction, concurrent=True)
    assert len(trials) >= 4 and [t.detail for t in trials if not t.same] == []


def test_a_run_killed_while_taking_over_another_workflows_reaction_is_completed_by_its_rerun():
    """The two points of the take-over only (each run here first waits 3.5 s for a comment under the young 👀):
    killed after deleting the 👀 it took over, and after claiming again, so that its re-run finds its own dead
    claim (bench/duplicates.py --kills: every point)."""
    trials = kill_trials("another workflow's", points=[6, 7])
    assert [t.detail for t in trials if not t.same] == []
