"""How often two runs at once post the same comment twice, and whether a run killed after any request is completed
by its re-run, measured with real processes (a benchmark, not a test). The trials are tests/sim/races.py's (the
default test run, tests/test_claim_races.py, runs a few of each).

    python bench/duplicates.py                               # the issue-30 table: 40 trials per row (about an hour)
    python bench/duplicates.py --trials 10 --pairs two-events --reactions "30 days" --delays 0.05
    python bench/duplicates.py --rows no-reaction            # the issue-20 rows: no 👀 before the runs
    python bench/duplicates.py --no-claim --windows "late, aligned"   # the control: every claim wins
    python bench/duplicates.py --kills                       # a kill after every request, then a re-run

Rows (`--rows`): "reactions" (default) = the pairs two-events and event+sweep, windows "late" and "late, aligned",
the account's 👀 before the runs 30 days old, 60 s old or another workflow's made as the runs start, the stand-in
answering every request at once or after 50 ms; "no-reaction" = every pair and window with no 👀 before, no delay
(the measurement issue 20 published). `--pairs/--windows/--reactions/--delays` narrow either set.

Columns: contested = both runs asked for the claim (both had read the issue as still needing the comment); posted
twice = two comments were posted and one then deleted (the claim's safety net: subscribers were notified twice);
duplicates = two comments of ours from the template at the end; no comment = none at the end; failed runs = runs
that exited non-zero. `--no-claim` is the control: the stand-in answers 201 ("created") to every claim, as if GitHub
had no claim to give; it shows what the claim prevents and that the trials can see a duplicate at all.

`--kills`: for each 👀 before the run, a `labeled` run killed after each of its requests (alone, and beside an
`opened` run of the same account), then "Re-run jobs"; counts the trials whose issue did not end as an uninterrupted
run leaves it (labels, comments, reactions).

Imports: the standard library; the project and the test helpers (tests/sim, tests/actionrun, tests/fakegithub).
"""
from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from sim.races import PAIRS, REACTIONS, WINDOWS, kill_trials, measure  # noqa: E402

ROW_SETS = {
    "reactions": dict(pairs=("two-events", "event+sweep"), windows=("late", "late, aligned"),
                      reactions=("30 days", "60 s", "another workflow's"), delays=(0.0, 0.05)),
    "no-reaction": dict(pairs=PAIRS, windows=tuple(WINDOWS), reactions=("none",), delays=(0.0,)),
}


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _table(args) -> None:
    base = ROW_SETS[args.rows]
    pairs, windows = args.pairs or base["pairs"], args.windows or base["windows"]
    reactions, delays = args.reactions or base["reactions"], args.delays or base["delays"]
    print("| runs at once | window | 👀 before | delay | trials | contested | posted twice | duplicates | "
          "no comment | failed runs | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for pair in pairs:
        for window in windows:
            for reaction in reactions:
                for delay in delays:
                    row = measure(pair, window, args.trials, reaction=reaction, delay=delay,
                                  claim=not args.no_claim, mode=args.mode)
                    print(f"| {pair} | {window} | {reaction} | {delay * 1000:.0f} ms | {row.trials} | "
                          f"{row.contested} | {row.posted_twice} | {row.duplicates} | {row.missing} | "
                          f"{row.failed_runs} | {row.seconds:.0f} |", flush=True)
                    for note in row.notes:
                        print(f"  contract violation: {note}", flush=True)


def _kills(args) -> None:
    print("| 👀 before | beside another run | kill points | same end state as uninterrupted |")
    print("| --- | --- | --- | --- |")
    for reaction in args.reactions or tuple(REACTIONS):
        for concurrent in (False, True):
            trials = kill_trials(reaction, concurrent=concurrent, mode=args.mode)
            same = sum(t.same for t in trials)
            print(f"| {reaction} | {'yes' if concurrent else 'no'} | {len(trials)} | {same} |", flush=True)
            for t in trials:
                if not t.same:
                    print(f"  killed after {t.after}: {t.detail}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--rows", choices=list(ROW_SETS), default="reactions")
    parser.add_argument("--pairs", nargs="*", choices=PAIRS)
    parser.add_argument("--windows", nargs="*", choices=list(WINDOWS))
    parser.add_argument("--reactions", nargs="*", choices=list(REACTIONS))
    parser.add_argument("--delays", nargs="*", type=float, help="seconds the stand-in waits before each answer")
    parser.add_argument("--mode", choices=("subprocess", "in_process"), default="subprocess")
    parser.add_argument("--no-claim", action="store_true",
                        help="the control: the stand-in answers 201 to every claim (no run ever loses one)")
    parser.add_argument("--kills", action="store_true", help="a kill after every request, then a re-run")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "bench/duplicates.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC with `{command}`"
          f"{' (the control: every claim wins)' if args.no_claim else ''}; {os.cpu_count()} CPU(s), Python "
          f"{platform.python_version()}; load average (1/5/15 min) at the start {_load()}.\n")
    _kills(args) if args.kills else _table(args)
    print(f"\nLoad average at the end: {_load()}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
