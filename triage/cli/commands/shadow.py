"""`ptd-triage shadow --repo OWNER/REPO`: how the bot would have triaged the queue over a window, against what the
repository's people did, with nothing written (see triage/evaluation/shadow.py and docs/shadow.md).

Token from GITHUB_TOKEN (read access is enough); API from --api-url or GITHUB_API_URL. The report goes to stdout
as a table (with a progress bar on stderr while reading, on a terminal only); --markdown, --json and --save write
files. Each issue skipped and each bad answer or cache file left out is one warning line on stderr. Exit status: 0;
1 when GitHub fails (before anything is read: one line; midway: the report of what was read, and what was read
stays in the cache: re-run to go on) or when the model asked for failed on an issue (its plan is the rubric's, and
the report counts it so); 2 on bad input (nothing read, nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from triage.cli.common import (CliError, add_config_options, add_planner_options, check_after_nothing_found,
                               check_model_prompt, github_client, load_config, planner_from_args, positive_int,
                               run_command, seconds)

DEFAULT_BOT = "github-actions[bot]"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "shadow",
        help="how the bot would have triaged your queue over a window, against your people (writes nothing)",
        description="Find the issues that entered the queue between --since and --until (open or closed), rebuild "
        "each as it stood then, plan it as the bot would have, and compare per step with the labels people gave "
        "it by the end of the window. Needs GITHUB_TOKEN with read access; writes nothing to GitHub.",
    )
    parser.add_argument("--repo", required=True, metavar="OWNER/REPO", help="repository to measure")
    parser.add_argument("--api-url", help="GitHub API URL (default: $GITHUB_API_URL or api.github.com)")
    parser.add_argument("--since", metavar="DATE", help="start of the window, an ISO 8601 date or UTC timestamp "
                        "(default: 90 days before --until)")
    parser.add_argument("--until", metavar="DATE", help="end of the window (default: now; a date means the end of "
                        "that day); people's labels count as they stood then")
    parser.add_argument("--limit", type=positive_int, metavar="N", help="read at most N issues the search finds")
    parser.add_argument("--cache", metavar="DIR", help="keep what was read here, by issue and its updated_at: a "
                        "second run reads only what changed, and an interrupted run goes on where it stopped")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the report as Markdown")
    parser.add_argument("--save", metavar="FILE", help="save the issues people triaged in the eval dataset format "
                        "(ptd-triage eval FILE re-runs them offline)")
    parser.add_argument("--bot-login", action="append", metavar="LOGIN",
                        help=f"the bot's own account (default {DEFAULT_BOT}; repeat for several): its labels and "
                             "comments are never people's, even when it is not a GitHub App")
    parser.add_argument("--max-wait", type=seconds, default=120.0, metavar="SECONDS",
                        help="wait up to this long for the API rate-limit window to reset when the budget is down "
                             "to its reserve (default 120); longer lets one run read more than an hour's budget")
    add_config_options(parser)
    add_planner_options(parser)
    parser.set_defaults(func=lambda args: run_command(run, args))


def run(args: argparse.Namespace) -> int:
    from triage.evaluation.shadow import Window, saved_rows, shadow, window_bounds
    from triage.evaluation.shadow_fetch import IssueCache
    from triage.evaluation.shadow_markdown import render_markdown
    from triage.evaluation.shadow_render import render_text, run_errors, run_warnings

    try:
        since, until = window_bounds(args.since, args.until)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    outputs = [path for path in (args.json, args.markdown, args.save) if path]
    for path in outputs:  # bad input fails before the first request
        if Path(path).is_dir() or not Path(path).resolve().parent.is_dir():
            raise CliError(f"{path}: not a file in an existing folder")
    bundle = load_config(args)
    planner = planner_from_args(args)
    check_model_prompt(planner, bundle)
    client = github_client(args, write=False)
    client.max_wait = args.max_wait
    cache = IssueCache(Path(args.cache) if args.cache else None, args.repo)
    progress = _Progress(sys.stderr)
    try:
        document, shadow_run = shadow(client, bundle, Window(args.repo, since, until, args.limit), cache=cache,
                                      planner=planner, own_logins=tuple(args.bot_login or (DEFAULT_BOT,)),
                                      progress=progress)
    except OSError as exc:  # the cache folder cannot be written
        raise CliError(f"--cache {args.cache}: {exc.strerror or exc}") from None
    finally:
        progress.done()
    if not shadow_run.found:  # nothing entered the queue: a misspelt queue label fails here, in one line
        check_after_nothing_found(client, args.repo, bundle.labels.queue_label, given=False)
    if args.json:
        _write(args.json, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    if args.markdown:
        _write(args.markdown, render_markdown(document))
    if args.save:
        from triage.evaluation.dataset import write_dataset

        try:
            count = write_dataset(args.save, saved_rows(shadow_run))
        except OSError as exc:
            raise CliError(f"{args.save}: cannot write dataset ({exc.strerror or exc})", status=1) from None
        print(f"ptd-triage shadow: {count} issues triaged by people saved to {args.save}", file=sys.stderr)
    sys.stdout.write(render_text(document))
    for line in run_warnings(document, cache="--cache"):
        print(f"ptd-triage shadow: warning: {line}", file=sys.stderr)
    failures = run_errors(document, cache="--cache")
    for line in failures:
        print(f"ptd-triage shadow: error: {line}", file=sys.stderr)
    return 1 if failures else 0


def _write(path: str, text: str) -> None:
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    except OSError as exc:
        raise CliError(f"{path}: cannot write ({exc.strerror or exc})", status=1) from None


class _Progress:
    """A one-line progress bar on a terminal; nothing at all when the stream is not one (a log, a pipe)."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.tty:
            return
        width = 30
        filled = width * done // max(total, 1)
        self.stream.write(f"\rreading issues [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
