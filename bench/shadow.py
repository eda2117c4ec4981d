"""Shadow over 1,000 issues at a GITHUB_TOKEN's limits: requests per issue and the time it takes.

    .venv/bin/python bench/shadow.py [--issues 1000] [--out bench/results.md]

The world is tests/shadow_world.py's (issues that enter the queue in a window; people, the bot and another bot
label them; some are closed, some nobody has triaged) at `--issues` issues, in the GitHub stand-in on 127.0.0.1.
The stand-in enforces a GITHUB_TOKEN's limits (`RateLimits.github_token()`: 1,000 core requests an hour, 30 searches
a minute) on a virtual clock that the client's waits also use, so an hour of waiting passes at once and is reported
as simulated time; the wall time is what this machine spent (the stand-in, the client, the planning) over
loopback, without GitHub's network latency. Three ways of running it:
1. the default (`--max-wait 120`): the first run stops at the reserve, the next (an hour later, `--cache`) reads
   only the rest;
2. one run that waits for the hour to reset (`--max-wait 3700`);
3. a second run from the cache with another configuration (step 5's threshold 3 -> 4: what "adjust and run
   again" costs).
It prints a markdown section and writes it into bench/results.md between `<!-- shadow -->` markers (bench/run.py
keeps that section when it rewrites the file). A benchmark, not a test: nothing here asserts.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakegithub import FakeGitHub, RateLimits, VirtualClock  # noqa: E402
from shadow_world import build_window  # noqa: E402

from triage.config.bundle import load_bundle  # noqa: E402
from triage.evaluation.shadow import Window, shadow  # noqa: E402
from triage.evaluation.shadow_fetch import IssueCache  # noqa: E402
from triage.github.client import GitHubClient  # noqa: E402

REPO = "acme/widgets"
WAIT_FOR_RESET = 3700.0  # seconds: the hour's window resets at most 3,601 s after the reserve is reached
START, END = "<!-- shadow -->", "<!-- /shadow -->"


def one_run(gh, clock, window, cache_dir, *, max_wait: float, bundle) -> dict:
    client = GitHubClient(gh.token, gh.url, sleep=clock.sleep, clock=clock, max_wait=max_wait)
    cache = IssueCache(cache_dir, REPO)
    started, simulated = time.perf_counter(), clock()
    document, run = shadow(client, bundle, window, cache=cache)
    return {"wall": time.perf_counter() - started, "simulated": clock() - simulated, "document": document,
            "waited": sum(clock.slept)}


def adjusted_bundle(tmp: Path):
    """The bundled queue with step 5's threshold raised from 3 to 4: "adjust the configuration"."""
    folder = tmp / "my-queue"
    shutil.copytree(ROOT / "queues" / "distributed", folder)
    rubric = folder / "rubric.yaml"
    rubric.write_text(rubric.read_text(encoding="utf-8").replace("  threshold: 3\n", "  threshold: 4\n", 1),
                      encoding="utf-8")
    return load_bundle(folder / "rubric.yaml", folder / "labels.json", folder / "templates")


def scenario(issues: int, *, max_wait: float, runs: int, rerun_config: bool = False) -> list[dict]:
    """Runs with the bundled queue until one finishes (at most `runs`, an hour apart); with `rerun_config`, then
    one more from the cache with the adjusted queue."""
    clock = VirtualClock()
    with FakeGitHub(rate_limits=RateLimits.github_token(), clock=clock) as gh, \
            tempfile.TemporaryDirectory(prefix="ptd-shadow-") as tmp:
        world = build_window(gh, issues, repo=REPO)
        window = Window(REPO, world.since, world.until)
        bundles = [load_bundle()] * runs + ([adjusted_bundle(Path(tmp))] if rerun_config else [])
        results = []
        for index, bundle in enumerate(bundles):
            if index >= runs or not results or results[-1]["document"]["stopped"] is not None:
                clock.slept.clear()
                results.append(one_run(gh, clock, window, Path(tmp) / "cache", max_wait=max_wait, bundle=bundle))
                if results[-1]["document"]["stopped"] is not None:
                    clock.advance(3600.0)  # the next run, an hour later
        results[-1]["violations"] = len(gh.violations)
        results[-1]["limits_tripped"] = gh.limits_tripped
        results[-1]["writes"] = len(gh.writes())
        return results


def _row(name: str, result: dict) -> str:
    doc = result["document"]
    by = doc["requests_by_endpoint"]
    return (f"| {name} | {doc['examined']} ({doc['from_cache']} from the cache) | {doc['requests']} (search "
            f"{by['search']}, timeline {by['timeline']}) | {result['wall']:.1f} s | "
            f"{result['simulated'] / 60:.1f} min | {doc['stopped'] or 'finished'} |")


def _counts(step: dict) -> str:
    return f"{step['caught']} / {step['missed']} / {step['extra']}"


def report(issues: int) -> str:
    default = scenario(issues, max_wait=120.0, runs=3)
    waiting = scenario(issues, max_wait=WAIT_FOR_RESET, runs=1)
    cached = scenario(issues, max_wait=120.0, runs=3, rerun_config=True)
    read = default[-1]["document"]["examined"]
    total = sum(r["document"]["requests"] for r in default)
    lines = [START, f"## Shadow: {issues:,} issues at GITHUB_TOKEN's limits", "",
             f"`python bench/shadow.py --issues {issues}`, {time.strftime('%Y-%m-%d', time.gmtime())}. The world of "
             "tests/shadow_world.py in the stand-in with `RateLimits.github_token()` (1,000 core requests an hour, "
             "30 searches a minute) on a virtual clock that the client's waits use too: simulated time is what "
             "the runs would wait on GitHub; wall time is this machine over loopback, without GitHub's network "
             f"latency (add it once per request). {read:,} issues found by the search ({issues:,} in the window).",
             "", "| run | issues read | requests | wall time | simulated time | ended |", "| --- | --- | --- | --- | --- | --- |"]
    lines += [_row(f"default (`--max-wait 120`), run {i}", r) for i, r in enumerate(default, 1)]
    lines.append(_row(f"one run, `--max-wait {WAIT_FOR_RESET:g}`", waiting[0]))
    lines.append(_row("again from the cache (another configuration)", cached[-1]))
    steps = default[-1]["document"]["steps"]
    same = all(r[-1]["document"]["steps"] == steps for r in (waiting, cached[:-1]))
    flag = (cached[-2]["document"]["steps"]["flag"], cached[-1]["document"]["steps"]["flag"])
    runs = (f"{len(default)} runs, each after the first an hour after the one before (a run stops at the reserve of "
            "50, as the sweep does, and the next reads only what is left)" if len(default) > 1 else "one run")
    lines += ["", f"- Requests per issue read: **{total / read:.3f}** ({total:,} requests for {read:,} issues: one "
              "timeline request each, one search request per 100).",
              f"- Time for all {issues:,} at GITHUB_TOKEN's limits: the default needs {runs}; with "
              f"`--max-wait {WAIT_FOR_RESET:g}`, one run of {waiting[0]['simulated'] / 60:.1f} simulated minutes, "
              f"{waiting[0]['wall']:.1f} s of it spent on this machine.",
              "- Again from the cache with step 5's threshold raised from 3 to 4 (the flag step's caught / missed / "
              f"extra went from {_counts(flag[0])} to {_counts(flag[1])}): only the search pages, "
              f"{cached[-1]['document']['requests']} requests, {cached[-1]['wall']:.1f} s.",
              f"- Same figures whichever way it read the issues: {'yes' if same else 'NO'}; writes to GitHub: "
              f"{default[-1]['writes'] + waiting[-1]['writes'] + cached[-1]['writes']}; limits refused by the "
              f"stand-in: {'yes' if any(r[-1]['limits_tripped'] for r in (default, waiting, cached)) else 'none'}; "
              f"contract violations: {sum(r[-1]['violations'] for r in (default, waiting, cached))}.", END]
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if START in text and END in text:
        text = text[:text.index(START)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--issues", type=int, default=1000)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    args = parser.parse_args(argv)
    section = report(args.issues)
    print(section)
    write_section(Path(args.out), section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
