"""How often two runs at once post the same comment twice, measured with real processes (a benchmark, not a test).

    python bench/duplicates.py                    # 40 trials per cell; the table to stdout
    python bench/duplicates.py --trials 10 --pairs event+sweep

Each trial is a fresh issue on the loopback GitHub stand-in (tests/fakegithub, with the simulator's wall-clock
timestamps, tests/sim/world.py) that asks for a comment (not_distributed), and two runs of `python entrypoint.py`
started at the same moment (two threads, each starting a subprocess with the runner's environment, as
tests/sim/driver.py does). A trial is a duplicate when the issue ends with two comments of ours carrying the same
template marker. Pairs:

- event+sweep: the issue's `issues.labeled` run and a scheduled sweep;
- retriage+sweep: a maintainer's `/ptd-retriage` run (on an issue in the queue that no run has processed) and a
  scheduled sweep;
- two-events: `issues.opened` and `issues.labeled` runs of a workflow WITHOUT the per-issue concurrency group.

Windows (docs/duplicates-and-concurrency.md): "late" = the runs start 15 minutes after the event that triggered
them (a run that waited behind others of its group, or a "Re-run jobs"): the issue looks old to the sweep, which
therefore takes it too; this is the documented window in which runs at once could duplicate. "fresh" = the runs
start right after their event (the usual case): the issue changed less than 10 minutes ago, so the sweep leaves
it to its own event run.

Imports: the standard library; the project and the test helpers (tests/sim, tests/actionrun, tests/fakegithub).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from actionrun import NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, issues_payload, schedule_payload  # noqa: E402
from sim.driver import Driver, Launch  # noqa: E402
from fakegithub.server import RateLimits  # noqa: E402
from sim.world import SimGitHub  # noqa: E402

PAIRS = ("event+sweep", "retriage+sweep", "two-events")
WINDOWS = {"late": 15 * 60, "fresh": 0}
TEMPLATE_MARK = "<!-- ptd-triage:not_distributed -->"
SWEEP = {"max-issues": "50"}


def _launches(fake, pair: str, n: int, delay: float) -> tuple[Launch, Launch]:
    title, body = NOT_DISTRIBUTED
    if pair == "retriage+sweep":
        # In the queue for hours, never processed (its label run failed, say); then a maintainer asks.
        fake.add_issue(REPO, n, title=title, body=body, labels=[QUEUE])
        fake.age(6 * 3600)
        comment = fake.add_comment(REPO, n, "/ptd-retriage", author="maintainer-person")
        first = Launch("issue_comment", comment_payload(fake, n, comment), label=f"/ptd-retriage #{n}")
    else:
        fake.add_issue(REPO, n, title=title, body=body, labels=[QUEUE])
        first = Launch("issues", issues_payload(fake, n, "labeled", label=QUEUE), label=f"labeled #{n}")
    if pair == "two-events":
        second = Launch("issues", issues_payload(fake, n, "opened"), label=f"opened #{n}")
    else:
        second = Launch("schedule", schedule_payload(), dict(SWEEP), label="sweep")
    fake.age(delay)
    return first, second


def _ours(fake, n: int) -> int:
    return sum(1 for c in fake.comments(REPO, n)
               if TEMPLATE_MARK in (c["body"] or "") and c["user"]["login"] == fake.bot_login)


def measure(pair: str, window: str, trials: int) -> dict:
    duplicates = missing = failed = 0
    started = time.monotonic()
    # Limits out of the way: hundreds of runs in a minute would meet the search limit (30 a minute), which is not
    # what is measured here.
    with SimGitHub(rate_limits=RateLimits(core_per_hour=10**6, search_per_minute=10**6)) as fake:
        fake.set_role(REPO, "maintainer-person", "maintain")
        driver = Driver(fake, "subprocess")
        try:
            for n in range(1, trials + 1):
                first, second = _launches(fake, pair, n, WINDOWS[window])
                records = driver.run_together(first, second)
                failed += sum(1 for r in records if r.returncode != 0)
                count = _ours(fake, n)
                duplicates += count > 1
                missing += count == 0
        finally:
            driver.close()
    return {"pair": pair, "window": window, "trials": trials, "duplicates": duplicates, "missing": missing,
            "failed_runs": failed, "seconds": time.monotonic() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--pairs", nargs="*", default=list(PAIRS), choices=PAIRS)
    parser.add_argument("--windows", nargs="*", default=list(WINDOWS), choices=list(WINDOWS))
    args = parser.parse_args(argv)
    rows = []
    print("| runs at once | window | trials | duplicates | no comment | failed runs | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for pair in args.pairs:
        for window in args.windows:
            row = measure(pair, window, args.trials)
            rows.append(row)
            print(f"| {pair} | {window} | {row['trials']} | {row['duplicates']} | {row['missing']} | "
                  f"{row['failed_runs']} | {row['seconds']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
