#!/usr/bin/env python3
"""Render the README's pictures: the step summary of a sweep (a dry run) and of one issue, and the bot's comment on
an issue, as GitHub shows them.

Nothing is drawn by hand: the real entrypoint runs against the GitHub stand-in (tests/fakegithub, the harness the
tests use), the step summaries it writes and the comment it posts are rendered from markdown to HTML with
markdown-it-py (tests/summaryhtml.py, the same rendering the tests check), under a small GitHub-like stylesheet,
and headless Chromium takes the screenshots. Regenerate after changing the summary or a template:

    pip install -e '.[test]'           # markdown-it-py and the stand-in's dependencies
    apt-get install -y chromium        # Debian's Chromium, headless
    python scripts/render_summary_pictures.py [--out docs/images] [--issues FILE] [--backlog N]

The sweep's issues come from a data file (default scripts/summary-sweep-issues.jsonl): JSON lines, one issue each,
{"title": ..., "body": ..., "comments": [{"author": ..., "body": ...} or "text", ...]}, all in the queue. Before them
the stand-in gets `--backlog` older queue issues (default 14), and the sweep runs with `not-before` set to the day
the data file's issues were opened, as a repository going live on a backlog would: the summary's first lines then
show what the cut-off left out. Writes summary-sweep.png, summary-issue.png and comment.png (a fixed width, no
scaling).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from actionrun import REPO, dispatch_payload, run_action, schedule_payload, seed_issue  # noqa: E402
from fakegithub import FakeGitHub  # noqa: E402
from summaryhtml import to_html  # noqa: E402

WIDTH = 960
ISSUES = ROOT / "scripts" / "summary-sweep-issues.jsonl"
BACKLOG_TEXT = ("DDP training slower after upgrade", "Our DDP job got slower since the last release.")
DAY = 86400

CSS = """
body { margin: 0; padding: 16px; background: #fff; color: #1f2328; width: %(width)spx; box-sizing: border-box;
       font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, "Liberation Sans", sans-serif; }
.box { border: 1px solid #d1d9e0; border-radius: 6px; }
.box > .head { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e;
               border-radius: 6px 6px 0 0; }
.box > .head b { color: #1f2328; }
.badge { border: 1px solid #d1d9e0; border-radius: 2em; padding: 0 7px; font-size: 12px; margin-left: 4px; }
.body { padding: 8px 16px 12px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0b3; padding-bottom: .3em; margin: .6em 0 .8em; }
h3 { font-size: 1.25em; margin: 1.2em 0 .6em; }
h4 { font-size: 1em; }
p, ul, ol, table, blockquote { margin: 0 0 12px; }
ul, ol { padding-left: 2em; }
a { color: #0969da; text-decoration: none; }
code { font: 85%% ui-monospace, "DejaVu Sans Mono", monospace; background: #818b981f; padding: .2em .4em;
       border-radius: 6px; }
pre { background: #f6f8fa; padding: 12px; border-radius: 6px; overflow: hidden; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; display: block; overflow: hidden; }
th, td { border: 1px solid #d1d9e0; padding: 5px 12px; text-align: left; }
th { font-weight: 600; }
tr:nth-child(2n) td { background: #f6f8fa; }
blockquote { border-left: .25em solid #9a6700; padding: 0 1em; color: #59636e; }
details summary { cursor: pointer; }
.avatar { float: left; width: 40px; height: 40px; border-radius: 50%%; background: #8250df; color: #fff;
          text-align: center; line-height: 40px; font-weight: 600; margin-right: 12px; }
.comment { margin-left: 52px; }
"""


def page(body: str, *, frame: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS % {'width': WIDTH}}</style></head>"
            f"<body>{frame.format(body=body)}"
            "<script>document.title = String(Math.ceil(document.querySelector('.box').getBoundingClientRect().bottom)"
            " + 16)</script></body></html>")


SUMMARY_FRAME = "<div class='box'><div class='head'><b>ptd-triage</b> summary</div><div class='body'>{body}</div></div>"
# With the workflow's GITHUB_TOKEN a comment is posted by github-actions[bot]: the picture shows that account.
COMMENT_FRAME = ("<div class='avatar'>GA</div><div class='box comment'><div class='head'><b>github-actions</b>"
                 "<span class='badge'>bot</span> commented</div><div class='body'>{body}</div></div>")


def screenshot(chromium: str, html_text: str, out: Path, work: Path) -> None:
    """The page at WIDTH, as tall as its content (measured by a first headless load)."""
    source = work / (out.stem + ".html")
    source.write_text(html_text, encoding="utf-8")
    common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-lcd-text",
              "--force-device-scale-factor=1", f"--user-data-dir={work / 'profile'}"]
    dom = subprocess.run(common + [f"--window-size={WIDTH},200", "--dump-dom", source.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = re.search(r"<title>(\d+)</title>", dom)
    height = int(found.group(1)) if found else 1200
    subprocess.run(common + [f"--window-size={WIDTH},{height}", f"--screenshot={out}", source.as_uri()],
                   capture_output=True, timeout=120, check=True)
    print(f"{out}: {WIDTH}x{height}, {out.stat().st_size // 1024} KB")


def read_issues(path: Path) -> list[dict]:
    issues = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, issue in enumerate(issues, 1):
        if not isinstance(issue.get("title"), str) or not isinstance(issue.get("body"), str):
            raise SystemExit(f"{path}:{i}: each line needs a \"title\" and a \"body\" (strings)")
    return issues


def _asks_for_repro(outputs: dict, number: int) -> bool:
    """The issue shown on its own: the first one the sweep would ask for a reproduction and not flag."""
    plans = {p.get("issue"): p for p in json.loads(outputs.get("plan") or "[]")}
    plan = plans.get(number) or {}
    comment = plan.get("comment") or {}
    return "reproduction" in str(comment.get("template", "")) and plan.get("outcome") != "high_priority"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--issues", type=Path, default=ISSUES, help="the sweep's issues (JSON lines)")
    parser.add_argument("--backlog", type=int, default=14, help="older queue issues the not-before cut-off leaves")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("render_summary_pictures: error: no chromium on PATH (apt-get install -y chromium)", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    issues = read_issues(args.issues)
    with tempfile.TemporaryDirectory() as temp, FakeGitHub() as fake:
        work = Path(temp)
        for number in range(1, args.backlog + 1):  # the backlog: opened long before the workflow was added
            seed_issue(fake, number, BACKLOG_TEXT)
        # The stand-in's clock ticks one second per write: move it on to a new day, the day the workflow is added.
        fake._ticks = (fake._ticks // DAY + 30) * DAY
        first = args.backlog + 1
        for number, issue in enumerate(issues, first):
            seed_issue(fake, number, (issue["title"], issue["body"]))
            for comment in issue.get("comments") or ():
                author, body = (comment.get("author", "reporter"), comment["body"]) if isinstance(comment, dict) \
                    else ("reporter", str(comment))
                fake.add_comment(REPO, number, body, author=author)
        not_before = fake.issue(REPO, first)["created_at"][:10]
        # As the example sweep workflow runs it: its env (a dry run until PTD_TRIAGE_LIVE is "true") and its file.
        sweep = run_action(fake, work, "schedule", schedule_payload(),
                           inputs={"dry-run": "true", "not-before": not_before if args.backlog else ""},
                           env={"PTD_TRIAGE_LIVE": "false",
                                "GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/ptd-triage-sweep.yml@refs/heads/main"})
        commented = next((n for n, issue in enumerate(issues, first) if _asks_for_repro(sweep.outputs, n)), first)
        one = run_action(fake, work, "workflow_dispatch", dispatch_payload(),
                         inputs={"issue-number": str(commented)})
        for run in (sweep, one):
            if run.returncode != 0:
                print(run.stdout + run.stderr, file=sys.stderr)
                return 1
        comment = fake.comments(REPO, commented)[-1]["body"]
        screenshot(chromium, page(to_html(sweep.summary), frame=SUMMARY_FRAME), args.out / "summary-sweep.png", work)
        screenshot(chromium, page(to_html(one.summary), frame=SUMMARY_FRAME), args.out / "summary-issue.png", work)
        # The comment as GitHub renders a comment: markdown with its HTML comments (the template's marker) hidden.
        screenshot(chromium, page(to_html(comment), frame=COMMENT_FRAME), args.out / "comment.png", work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
