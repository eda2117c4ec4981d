"""API requests per issue, measured on the GitHub stand-in's request log with real `python entrypoint.py` runs (a
benchmark, not a test: tests/test_queue_simulator.py::test_api_calls_per_issue asserts the first three).

    python bench/requests.py                                  # this checkout
    python bench/requests.py --entrypoint /tmp/base/entrypoint.py   # another checkout's entrypoint, same stand-in

Each row is one run on one issue of the stand-in (`tests/fakegithub`), with the runner's environment
(`tests/actionrun.py`); the count leaves out the repository configuration read (one per run, when the `config`
input names a file: `config: none` here). Rows: a fresh issue that gets a comment, without and with a comment of a
person; the same event delivered again after the first run wrote (a stale payload); `/ptd-retriage` by someone with
the triage role on an issue processed before, and by someone without it; the fresh issue as a dry run; a
processed issue whose comments hold a twin of the bot's own comment (two runs at once, one killed).

Imports: the standard library; the test helpers (tests/actionrun, tests/fakegithub).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import actionrun  # noqa: E402
from actionrun import (MARKER, NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, expected_plan,  # noqa: E402
                       issues_payload, run_action, seed_issue)
from fakegithub import FakeGitHub  # noqa: E402

INPUTS = {"config": "none"}


def _count(run) -> str:
    reads = sum(1 for r in run.requests if r.method in ("GET", "HEAD"))
    return f"{len(run.requests)} ({reads} read, {len(run.requests) - reads} write)"


def _labeled(fake, tmp: Path, number: int, **inputs):
    return run_action(fake, tmp, "issues", issues_payload(fake, number, "labeled", label=QUEUE),
                      inputs={**INPUTS, **inputs})


def scenarios(fake, tmp: Path) -> list[tuple[str, str]]:
    rows = []
    seed_issue(fake, 1, NOT_DISTRIBUTED)
    rows.append(("a fresh issue, no comments (it gets a comment and its labels)", _count(_labeled(fake, tmp, 1))))
    seed_issue(fake, 2, NOT_DISTRIBUTED)
    fake.add_comment(REPO, 2, "Same here on 2.4.", author="a-person")
    rows.append(("a fresh issue with a comment of a person", _count(_labeled(fake, tmp, 2))))
    seed_issue(fake, 3, NOT_DISTRIBUTED)
    stale = issues_payload(fake, 3, "labeled", label=QUEUE)
    run_action(fake, tmp, "issues", stale, inputs=INPUTS)
    rows.append(("the same event delivered again after the first run wrote (a stale payload)",
                 _count(run_action(fake, tmp, "issues", stale, inputs=INPUTS))))
    fake.set_role(REPO, "a-triager", "triage")
    command = fake.add_comment(REPO, 3, "/ptd-retriage", author="a-triager")
    rows.append(("`/ptd-retriage` by the triage role, on that issue (processed: forced)",
                 _count(run_action(fake, tmp, "issue_comment", comment_payload(fake, 3, command), inputs=INPUTS))))
    fake.set_role(REPO, "a-reader", "read")
    refused = fake.add_comment(REPO, 3, "/ptd-retriage", author="a-reader")
    rows.append(("`/ptd-retriage` by the read role (refused)",
                 _count(run_action(fake, tmp, "issue_comment", comment_payload(fake, 3, refused), inputs=INPUTS))))
    seed_issue(fake, 4, NOT_DISTRIBUTED)
    rows.append(("a fresh issue, dry run", _count(_labeled(fake, tmp, 4, **{"dry-run": "true"}))))
    seed_issue(fake, 5, NOT_DISTRIBUTED)
    body = expected_plan(fake, 5).comment.body
    for _ in range(2):
        fake.add_comment(REPO, 5, body, author=fake.bot_login, author_type="Bot")
    fake.label_issue(REPO, 5, MARKER, actor=fake.bot_login, actor_type="Bot")
    rows.append(("a processed issue holding a twin of the bot's comment (it is deleted)",
                 _count(_labeled(fake, tmp, 5))))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrypoint", type=Path, default=None, help="another checkout's entrypoint.py")
    args = parser.parse_args(argv)
    if args.entrypoint is not None:
        actionrun.ENTRYPOINT = args.entrypoint.resolve()
    with FakeGitHub() as fake, tempfile.TemporaryDirectory() as tmp:
        rows = scenarios(fake, Path(tmp))
        problems = list(fake.violations)
    print(f"entrypoint: {actionrun.ENTRYPOINT}")
    print("| run | requests |")
    print("| --- | --- |")
    for name, count in rows:
        print(f"| {name} | {count} |")
    if problems:
        print("contract violations:", *problems, sep="\n  ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
