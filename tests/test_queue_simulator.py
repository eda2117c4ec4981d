"""The promises over a queue's real life (issue 11): timelines of events, people, sweeps, re-runs and failures,
driven through the real entrypoint against the GitHub stand-in, with the invariants checked after every step
(tests/sim/invariants.py): never two comments from one template on an issue; never a label removed, an issue
closed or assigned (no write but a comment, labels added, a reaction); never two sub-oncalls; a flagged issue
never gets the marker until a person acts on it; at the end every queued issue is processed or waiting for a
person; API calls within budget.

Scripted mode: one named timeline per defect issue 11 lists. Each of the 12 defect timelines failed on the code
before the fix (commit 65c1c7a, run with `PTD_SIM_MODE=subprocess PTD_SIM_ENTRYPOINT=<old checkout>/entrypoint.py
PTD_SIM_PYTHONPATH=<its dependencies>`): stale second event, flagged hold, re-triage of the bot's classification,
step 0 reading label events, high priority + reproduction, starvation, sweep vs event run (3), dispatch outside
the queue, kill after 2 requests, calls per issue. The others (re-run, roles, kills, GitHub failing) guard
promises that already held. Randomized mode: `PTD_SIM_TIMELINES` timelines (default 200) from
seeds `PTD_SIM_SEED`.. (default 0), 3-8 steps each after 1-3 issues are opened; all but
`PTD_SIM_SUBPROCESS_TIMELINES` (default 3) of them call `triage.action.main.main(environ)` in-process (the same
code path as entrypoint.py, milliseconds per run), the rest run entrypoint.py as real subprocesses. The seed range
is printed; a failure names its seed, mode and steps; `PTD_SIM_SEED=S PTD_SIM_TIMELINES=1` replays it (with
`PTD_SIM_SUBPROCESS_TIMELINES=0` in-process).
"""
from __future__ import annotations

import json
import os
import time

import pytest
from actionrun import MARKER, QUEUE, REPO
from sim import invariants as inv
from sim.driver import Driver
from sim.timeline import InvariantBroken, Sim, random_timeline
from sim.world import SimGitHub

REPRO = "needs reproduction"


@pytest.fixture
def sim():
    from triage.config.bundle import load_bundle

    allowlist = load_bundle(None, None, None).labels.names
    with SimGitHub() as fake:
        driver = Driver(fake)
        yield Sim(fake, driver, allowlist)
        driver.close()
    assert not fake.violations, "\n".join(fake.violations)


def play(sim: Sim, steps: list[tuple]) -> list:
    records = []
    for step in steps:
        records += sim.do(step)
    return records


def bot_comments(sim: Sim, n: int) -> list[dict]:
    return [c for c in sim.fake.comments(REPO, n) if c["user"]["login"] == sim.fake.bot_login]


def calls(record) -> list[str]:
    """The run's calls about issues, without the one per-run read of the repository's config file."""
    return [f"{r.method} {r.path.replace(f'/repos/{REPO}', '')}" for r in record.requests
            if not inv.PER_RUN.fullmatch(r.path)]


# ---- scripted: one timeline per defect in issue 11 ---------------------------------------------------------------


def test_second_event_with_a_stale_payload_posts_no_second_comment(sim):
    """The queue label removed and added again before the first run: the second run's payload says 0 comments."""
    first, second = play(sim, [
        ("open", {"n": 1, "text": "not_distributed"}),
        ("unlabel", {"n": 1, "label": QUEUE, "actor": "maintainer"}),
        ("label", {"n": 1, "label": QUEUE, "actor": "maintainer"}),
        ("deliver", {"n": 1}), ("deliver", {"n": 1}),
    ])
    assert second.launch.payload["issue"]["comments"] == 0  # stale: the first run has posted since
    assert len(bot_comments(sim, 1)) == 1
    assert calls(first) == ["GET /issues/1", "POST /issues/1/reactions", "POST /issues/1/comments",
                            "GET /issues/1/comments", "POST /issues/1/labels"]
    assert calls(second) == ["GET /issues/1", "GET /issues/1/comments"] and second.outcome == "nothing_to_do"


def test_rerun_jobs_with_the_old_payload_writes_nothing(sim):
    first, rerun = play(sim, [("open", {"n": 1, "text": "needs_repro"}), ("deliver", {"n": 1}), ("rerun", {"i": 0})])
    assert rerun.launch.attempt == 2 and rerun.launch.payload == first.launch.payload
    assert [r for r in rerun.requests if r.method != "GET"] == []
    assert len(bot_comments(sim, 1)) == 1


def test_a_flagged_issue_keeps_its_hold_until_a_person_acts(sim):
    """Step 0 must not count the sub-oncall and module the bot added as a human's classification; the hold
    survives sweeps, late events, re-runs and an unforced dispatch; a person removing the flag releases it."""
    play(sim, [("open", {"n": 1, "text": "hp_no_repro"}), ("deliver", {"n": 1})])
    labels = set(sim.fake.issue_labels(REPO, 1))
    assert inv.REVIEW in labels and MARKER not in labels and "module: fsdp" in labels
    records = play(sim, [
        ("wait", {"seconds": 6 * 3600}), ("sweep", {"max": 50}), ("rerun", {"i": 0}),
        ("label", {"n": 1, "label": "bug", "actor": "someone"}), ("deliver", {"n": 1}),
        ("dispatch", {"n": 1, "force": False}), ("wait", {"seconds": 6 * 3600}), ("sweep", {"max": 50}),
    ])
    assert MARKER not in sim.fake.issue_labels(REPO, 1)
    assert all(not [r for r in rec.requests if r.method != "GET"] for rec in records)
    # A person looks and removes the flag: the next sweep finishes the issue without flagging it again.
    play(sim, [("unlabel", {"n": 1, "label": inv.REVIEW, "actor": "maintainer"}), ("wait", {"seconds": 6 * 3600}),
               ("sweep", {"max": 50})])
    labels = set(sim.fake.issue_labels(REPO, 1))
    assert MARKER in labels and inv.REVIEW not in labels


def test_retriage_re_triages_what_the_bot_classified(sim):
    play(sim, [("open", {"n": 1, "text": "fsdp_repro"}), ("deliver", {"n": 1})])
    assert {"oncall: distributed parallelisms", "module: fsdp", MARKER} <= set(sim.fake.issue_labels(REPO, 1))
    (record,) = play(sim, [("retriage", {"n": 1, "role": "triage"}), ("deliver", {"n": 1})])
    plan = json.loads(record.outputs["plan"])
    assert plan["outcome"] != "already_triaged", plan["reasons"]
    assert not any("by a human" in reason for reason in plan["reasons"])
    assert any("step 3" in reason for reason in plan["reasons"])


def test_a_person_s_classification_still_stops_at_step_0(sim):
    play(sim, [("open", {"n": 1, "text": "needs_repro", "queued": False}),
               ("label", {"n": 1, "label": "oncall: distributed parallelisms", "actor": "maintainer"}),
               ("label", {"n": 1, "label": "module: ddp", "actor": "maintainer"}),
               ("label", {"n": 1, "label": QUEUE, "actor": "maintainer"})])
    sim.pending[1] = sim.pending[1][-1:]  # only the queue label's run matters here
    (record,) = play(sim, [("deliver", {"n": 1})])
    assert record.outcome == "already_triaged" and bot_comments(sim, 1) == []
    assert calls(record) == ["GET /issues/1", "GET /issues/1/events", "POST /issues/1/labels"]


def test_a_high_priority_crash_without_a_reproduction_gets_the_request(sim):
    (record,) = play(sim, [("open", {"n": 1, "text": "hp_no_repro"}), ("deliver", {"n": 1})])
    labels = set(sim.fake.issue_labels(REPO, 1))
    assert {inv.REVIEW, REPRO} <= labels and MARKER not in labels
    assert len(bot_comments(sim, 1)) == 1 and "_reproduction -->" in bot_comments(sim, 1)[0]["body"]
    assert record.outcome == "high_priority"


def test_sweeps_do_not_starve_new_issues_behind_flagged_ones(sim):
    play(sim, [("open", {"n": 1, "text": "hp_no_repro"}), ("open", {"n": 2, "text": "hp_repro"}),
               ("deliver", {"n": 1}), ("deliver", {"n": 2}),
               ("open", {"n": 3, "text": "fsdp_repro"}), ("open", {"n": 4, "text": "infra"}),
               ("wait", {"seconds": 6 * 3600})])
    (first,) = play(sim, [("sweep", {"max": 1})])
    assert MARKER in sim.fake.issue_labels(REPO, 3)  # oldest first, flagged ones not even found
    assert first.outputs["triaged"] == "1" and first.outputs["left"] == "1"
    assert "found 2, triaged 1, failed 0, skipped 0, left 1" in first.output
    (second,) = play(sim, [("sweep", {"max": 1})])
    assert MARKER in sim.fake.issue_labels(REPO, 4) and second.outputs["left"] == "0"


def test_a_sweep_leaves_an_issue_just_updated_to_its_event_run(sim):
    """The sweep's search copy is old, the issue was just labelled again: the re-read says leave it."""
    play(sim, [("open", {"n": 1, "text": "needs_repro", "queued": False}), ("wait", {"seconds": 6 * 3600}),
               ("label", {"n": 1, "label": QUEUE, "actor": "maintainer"})])
    records = play(sim, [("with_sweep", {"n": 1})])
    assert len(bot_comments(sim, 1)) == 1
    sweep = next(r for r in records if r.launch.event == "schedule")
    assert "left to its own event run" in sweep.output or sweep.outputs["triaged"] == "0"


def test_a_sweep_and_an_event_run_at_once_post_once(sim):
    """The sweep cannot share the issue's concurrency group: an event run and a sweep start at the same moment,
    ten times. The sweep leaves the just-updated issue to its event run (checked on the issue as re-read, not on
    the search's copy)."""
    for n in range(1, 11):
        records = play(sim, [("open", {"n": n, "text": "not_distributed"}), ("with_sweep", {"n": n})])
        assert [r.launch.event for r in records] == ["issues", "schedule"] and records[0].shared
    assert all(len(bot_comments(sim, n)) == 1 for n in range(1, 11))


def test_a_sweep_that_loses_the_claim_to_an_event_run_posts_no_second_comment(sim):
    """The sweep's search said the issue was old and comment-free; by the time it posts, an event run has claimed
    the comment (its 👀 on the issue) and posted: the sweep's claim answers 200, it reads the comments, sees the
    marker, and adds its labels without a second comment."""
    play(sim, [("open", {"n": 1, "text": "not_distributed"}), ("wait", {"seconds": 900})])
    # The event run claims and posts after the sweep re-read the issue (injected into the sweep's re-read).
    posted = {}

    def event_run_posts_now():
        if not posted:
            sim.fake.add_issue_reaction(REPO, 1, "eyes", author=sim.fake.bot_login)
            posted["comment"] = sim.fake.add_comment(REPO, 1, bot_comment_body("not_distributed"),
                                                     author=sim.fake.bot_login, author_type="Bot")

    sim.fake.on_request = lambda method, path: event_run_posts_now() if path == f"/repos/{REPO}/issues/1" else None
    (sweep,) = play(sim, [("sweep", {"max": 50})])
    assert posted and len(bot_comments(sim, 1)) == 1
    assert calls(sweep)[-3:] == ["POST /issues/1/reactions", "GET /issues/1/comments", "POST /issues/1/labels"]
    assert [r.status for r in sweep.requests if r.path.endswith("/issues/1/reactions")] == [200]


def bot_comment_body(template: str) -> str:
    return f"An earlier run's comment.\n\n<!-- ptd-triage:{template} -->\n"


@pytest.mark.parametrize("force", [False, True])
def test_dispatch_for_an_issue_outside_the_queue_is_ignored_unless_forced(sim, force):
    (record,) = play(sim, [("open", {"n": 1, "text": "not_distributed", "queued": False}),
                           ("dispatch", {"n": 1, "force": force})])
    if force:
        assert record.outcome == "not_distributed" and MARKER in sim.fake.issue_labels(REPO, 1)
    else:
        assert record.outcome == "ignored" and "force" in record.output
        assert [r for r in record.requests if r.method != "GET"] == []


@pytest.mark.parametrize("role", ["admin", "maintain", "write", "triage", "read", "none", "bot"])
def test_retriage_from_every_role(sim, role):
    play(sim, [("open", {"n": 1, "text": "needs_repro"}), ("deliver", {"n": 1})])
    (record,) = play(sim, [("retriage", {"n": 1, "role": role}), ("deliver", {"n": 1})])
    writes = [r for r in record.requests if r.method != "GET"]
    if role in ("admin", "maintain", "write", "triage"):
        assert [w.path.rsplit("/", 1)[-1] for w in writes] == ["reactions"]  # acknowledged; nothing else new
    elif role == "bot":  # a bot's comment is never a command: not even read as one
        assert writes == [] and record.outcome == "ignored"
    else:  # refused: a 😕 on the command's comment, nothing else (no reply to notify anyone)
        assert [(w.path.rsplit("/", 3)[-3], w.body) for w in writes] == [("comments", {"content": "confused"})]
        assert record.outcome == "ignored"
    assert len(bot_comments(sim, 1)) == 1


@pytest.mark.parametrize("after", [0, 1, 2])
def test_a_run_killed_after_any_request_is_completed_by_the_next_without_a_second_comment(sim, after):
    play(sim, [("open", {"n": 1, "text": "not_distributed"}), ("fault", {"kind": "kill", "after": after}),
               ("deliver", {"n": 1})])
    assert MARKER not in sim.fake.issue_labels(REPO, 1)
    play(sim, [("rerun", {"i": 0})])
    assert MARKER in sim.fake.issue_labels(REPO, 1) and len(bot_comments(sim, 1)) == 1


@pytest.mark.parametrize("fault", [{"kind": "5xx", "where": "comment", "after_effect": True},
                                   {"kind": "429", "where": "labels"}, {"kind": "secondary", "where": "comment"},
                                   {"kind": "5xx", "where": "issue", "times": 2}])
def test_github_failing_once_still_ends_with_one_comment(sim, fault):
    play(sim, [("open", {"n": 1, "text": "not_distributed"}), ("fault", fault), ("deliver", {"n": 1})])
    sim.settle()
    assert len(bot_comments(sim, 1)) == 1 and MARKER in sim.fake.issue_labels(REPO, 1)


def test_api_calls_per_issue(sim, capsys):
    """The four numbers issue 11 asks for, measured on the stand-in's request log."""
    fresh = play(sim, [("open", {"n": 1, "text": "not_distributed"}), ("deliver", {"n": 1})])[0]
    play(sim, [("open", {"n": 2, "text": "needs_repro"}), ("comment", {"n": 2, "kind": "maintainer"})])
    with_comments = play(sim, [("deliver", {"n": 2})])[0]
    play(sim, [("open", {"n": 3, "text": "not_distributed"}), ("unlabel", {"n": 3, "label": QUEUE}),
               ("label", {"n": 3, "label": QUEUE}), ("deliver", {"n": 3})])
    stale = play(sim, [("deliver", {"n": 3})])[0]
    play(sim, [("open", {"n": 4, "text": "hp_no_repro"}), ("deliver", {"n": 4}), ("wait", {"seconds": 6 * 3600})])
    sweep = play(sim, [("sweep", {"max": 50})])[0]
    flagged_in_sweep = [c for c in calls(sweep) if "/issues/4" in c]
    measured = {"fresh issue, no comments": len(calls(fresh)), "fresh issue with comments": len(calls(with_comments)),
                "second event, stale payload": len(calls(stale)),
                "sweep revisit of a flagged issue": len(flagged_in_sweep)}
    per_run = {len(r.requests) - len(calls(r)) for r in (fresh, with_comments, stale, sweep)}
    with capsys.disabled():
        print("\nAPI calls per issue:", json.dumps(measured), f"(plus {max(per_run)} per run: the repository configuration, when one is read)")
    assert per_run <= {0, 1}
    assert measured == {"fresh issue, no comments": 5, "fresh issue with comments": 6,
                        "second event, stale payload": 2, "sweep revisit of a flagged issue": 0}


# ---- randomized ---------------------------------------------------------------------------------------------------


def _run_timelines(seeds, mode: str) -> list[str]:
    from triage.config.bundle import load_bundle

    allowlist = load_bundle(None, None, None).labels.names
    failures = []
    for seed in seeds:
        with SimGitHub() as fake:
            driver = Driver(fake, mode)
            sim = Sim(fake, driver, allowlist)
            steps = random_timeline(seed)
            try:
                for step in steps:
                    sim.do(step)
                sim.settle()
                assert not fake.violations, "\n".join(fake.violations)
            except (InvariantBroken, AssertionError) as exc:
                failures.append(f"seed {seed} ({mode}): {exc}\n  steps: {steps}\n  log:\n    " + "\n    ".join(sim.log))
            finally:
                driver.close()
    return failures


def test_random_timelines_keep_every_promise(capsys):
    count = int(os.environ.get("PTD_SIM_TIMELINES", "200"))
    first = int(os.environ.get("PTD_SIM_SEED", "0"))
    in_subprocess = min(int(os.environ.get("PTD_SIM_SUBPROCESS_TIMELINES", "3")), count)
    seeds = range(first, first + count)
    started = time.monotonic()
    failures = _run_timelines(seeds[:count - in_subprocess], "in_process")
    failures += _run_timelines(seeds[count - in_subprocess:], "subprocess")
    with capsys.disabled():
        print(f"\nqueue simulator: {count} timelines, seeds {first}..{first + count - 1} "
              f"({in_subprocess} as subprocesses), {time.monotonic() - started:.1f} s, {len(failures)} failed")
    assert not failures, f"{len(failures)} timeline(s) broke a promise; first:\n{failures[0]}"
