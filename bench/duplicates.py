"""How often two runs at once post the same comment twice, measured with real processes (a benchmark, not a test).

    python bench/duplicates.py                    # 40 trials per cell; the table to stdout
    python bench/duplicates.py --trials 10 --pairs event+sweep
    python bench/duplicates.py --no-claim         # the control: the stand-in lets every claim win

Each trial is a fresh issue on the loopback GitHub stand-in (tests/fakegithub, with the simulator's wall-clock
timestamps, tests/sim/world.py) that asks for a comment (not_distributed), and two runs of `python entrypoint.py`
started at the same moment (two threads, each starting a subprocess with the runner's environment, as
tests/sim/driver.py does). A trial is a duplicate when the issue ends with two comments of ours carrying the same
template marker. Pairs:

- event+sweep: the issue's `issues.labeled` run and a scheduled sweep;
- retriage+sweep: a maintainer's `/ptd-retriage` run (on an issue in the queue that no run has processed) and a
  scheduled sweep;
- two-events: `issues.opened` and `issues.labeled` runs of a workflow WITHOUT the per-issue concurrency group.

Besides duplicates, each row counts the trials in which the race really happened: "contested" = both runs asked
for the comment claim (triage.service.claim: both had read the issue as still needing the comment and were about to
post). A trial where one run saw the other's comment or marker before it got that far was not a race, whatever its
outcome. `--no-claim` is the control: the stand-in answers 201 ("created") to every claim, as if GitHub had no
claim to give, so every contested trial can duplicate; it shows what the claim prevents and that the trials can
see a duplicate at all.

Windows (docs/duplicates-and-concurrency.md): "late" = the runs start 15 minutes after the event that triggered
them (a run that waited behind others of its group, or a "Re-run jobs"): the issue looks old to the sweep, which
therefore takes it too; this is the documented window in which runs at once could duplicate. "fresh" = the runs
start right after their event (the usual case): the issue changed less than 10 minutes ago, so the sweep leaves
it to its own event run. "late, aligned" = late, and the stand-in holds each run's first read of the issue until the
other run's read arrives (at most 30 s), so both runs plan from the issue before either writes: every trial is the
race (the worst interleaving), where two processes merely started together meet in the window only now and then.

Imports: the standard library; the project and the test helpers (tests/sim, tests/actionrun, tests/fakegithub).
"""
from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import threading
import time
from datetime import datetime, timezone
from urllib.parse import urlsplit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from actionrun import NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, issues_payload, schedule_payload  # noqa: E402
from sim.driver import Driver, Launch  # noqa: E402
from fakegithub.server import RateLimits  # noqa: E402
from sim.world import SimGitHub  # noqa: E402

PAIRS = ("event+sweep", "retriage+sweep", "two-events")
WINDOWS = {"late": 15 * 60, "late, aligned": 15 * 60, "fresh": 0}
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


def _claims(records, n: int) -> int:
    """How many of the two runs asked for issue n's comment claim (POST /issues/n/reactions)."""
    return sum(1 for r in records[0].requests  # `shared`: both runs' requests together
               if r.method == "POST" and r.path.endswith(f"/issues/{n}/reactions"))


def _without_claim(fake) -> None:
    """The control: every claim is "created" (201), so no run ever learns that another one claimed first."""
    original = fake._op_reactions_create_for_issue

    def always_created(repo, params, body, user, **rest):
        _, headers, obj = original(repo, params, body, user, **rest)
        return 201, headers, obj

    fake._op_reactions_create_for_issue = always_created


class ReadGate:
    """Holds the first two reads of one issue (GET /repos/R/issues/N) until both have arrived, then lets them
    through together: two runs that read the issue at the same moment. The stand-in answers on a thread per
    request, so a held read blocks nobody else."""

    def __init__(self, fake):
        self._handle, self._lock = fake.handle, threading.Lock()
        self._path, self._barrier, self._held = None, threading.Barrier(2), 0
        fake.handle = self.handle

    def arm(self, number: int) -> None:
        with self._lock:
            self._path, self._barrier, self._held = f"/repos/{REPO}/issues/{number}", threading.Barrier(2), 0

    def handle(self, method, raw_path, headers, raw_body):
        with self._lock:
            wait = method == "GET" and urlsplit(raw_path).path.rstrip("/") == self._path and self._held < 2
            if wait:
                self._held += 1
                barrier = self._barrier
        if wait:
            try:
                barrier.wait(timeout=30)
            except threading.BrokenBarrierError:
                pass  # the other run never read the issue (it stopped before): no race to align
        return self._handle(method, raw_path, headers, raw_body)


def measure(pair: str, window: str, trials: int, *, claim: bool = True) -> dict:
    duplicates = missing = failed = contested = 0
    started = time.monotonic()
    # Limits out of the way: hundreds of runs in a minute would meet the search limit (30 a minute), which is not
    # what is measured here.
    with SimGitHub(rate_limits=RateLimits(core_per_hour=10**6, search_per_minute=10**6)) as fake:
        if not claim:
            _without_claim(fake)
        gate = ReadGate(fake) if "aligned" in window else None
        fake.set_role(REPO, "maintainer-person", "maintain")
        driver = Driver(fake, "subprocess")
        try:
            for n in range(1, trials + 1):
                first, second = _launches(fake, pair, n, WINDOWS[window])
                if gate is not None:
                    gate.arm(n)
                records = driver.run_together(first, second)
                failed += sum(1 for r in records if r.returncode != 0)
                contested += _claims(records, n) == 2
                count = _ours(fake, n)
                duplicates += count > 1
                missing += count == 0
        finally:
            driver.close()
    return {"pair": pair, "window": window, "trials": trials, "duplicates": duplicates, "missing": missing,
            "contested": contested, "failed_runs": failed, "seconds": time.monotonic() - started}


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--pairs", nargs="*", default=list(PAIRS), choices=PAIRS)
    parser.add_argument("--windows", nargs="*", default=list(WINDOWS), choices=list(WINDOWS))
    parser.add_argument("--no-claim", action="store_true",
                        help="the control: the stand-in answers 201 to every claim (no run ever loses one)")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "bench/duplicates.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC with `{command}`"
          f"{' (the control: every claim wins)' if args.no_claim else ''}; {os.cpu_count()} CPU(s), Python "
          f"{platform.python_version()}; load average (1/5/15 min) at the start {_load()}.\n")
    print("| runs at once | window | trials | contested | duplicates | no comment | failed runs | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for pair in args.pairs:
        for window in args.windows:
            row = measure(pair, window, args.trials, claim=not args.no_claim)
            print(f"| {pair} | {window} | {row['trials']} | {row['contested']} | {row['duplicates']} | "
                  f"{row['missing']} | {row['failed_runs']} | {row['seconds']:.0f} |", flush=True)
    print(f"\nLoad average at the end: {_load()}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
