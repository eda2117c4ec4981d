#!/usr/bin/env python3
"""Render docs/shadow.md's picture: the first screen of the shadow report, as the Action's step summary shows it.

Nothing is drawn by hand. A queue's history is written into the GitHub stand-in (tests/fakegithub) from dataset
rows (tests/shadow_history.py: each issue opened as it entered the queue, the queue label added, then each of its
people's labels added by a person), the real entrypoint runs `mode: shadow` over it, and its step summary is
rendered from markdown to HTML with markdown-it-py (tests/summaryhtml.py) under render_summary_pictures.py's
GitHub-like stylesheet, and headless Chromium takes the screenshot: the summary down to its first evidence section
(the first screen: what was read, the verdict per step, the labels, step 5's threshold table).

    pip install -e '.[test]'           # markdown-it-py and the stand-in's dependencies
    apt-get install -y chromium        # Debian's Chromium, headless
    python scripts/render_shadow_picture.py [--rows FILE ...] [--out docs/images]

`--rows`: dataset files (the eval format of docs/measuring.md, `gold.labels` as the people's labels). The default is
the real dev sets beside the repository (../shared/eval/dev.jsonl and dev2.jsonl) when they are there, else the
invented set examples/invented-sets/set7/issues.jsonl. Writes shadow-report.png (a fixed width, no scaling) and
prints what it was made from.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "scripts")]

from actionrun import REPO, run_action, schedule_payload  # noqa: E402
from fakegithub import FakeGitHub  # noqa: E402
from render_summary_pictures import SUMMARY_FRAME, page, screenshot  # noqa: E402
from shadow_history import read_rows, write_history  # noqa: E402
from summaryhtml import to_html  # noqa: E402

DEV_SETS = [ROOT.parent / "shared" / "eval" / name for name in ("dev.jsonl", "dev2.jsonl")]
INVENTED = [ROOT / "examples" / "invented-sets" / "set7" / "issues.jsonl"]
FIRST_EVIDENCE = "\n### Routing"


def first_screen(summary: str) -> str:
    """The summary down to its first evidence section."""
    return summary.split(FIRST_EVIDENCE, 1)[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=Path, nargs="+", help="dataset files (default: the dev sets, else set7)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("render_shadow_picture: error: no chromium on PATH (apt-get install -y chromium)", file=sys.stderr)
        return 1
    sources = args.rows or (DEV_SETS if all(p.is_file() for p in DEV_SETS) else INVENTED)
    rows = [row for path in sources for row in read_rows(path)]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temp, FakeGitHub() as fake:
        work = Path(temp)
        since, until = write_history(fake, rows, repo=REPO)
        run = run_action(fake, work, "schedule", schedule_payload(),
                         inputs={"mode": "shadow", "shadow-since": since, "shadow-until": until})
        if run.returncode != 0:
            print(run.stdout + run.stderr, file=sys.stderr)
            return 1
        screenshot(chromium, page(to_html(first_screen(run.summary)), frame=SUMMARY_FRAME),
                   args.out / "shadow-report.png", work)
    print(f"made from {len(rows)} issues of {', '.join(p.name for p in sources)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
