"""`ptd-triage sweep --repo OWNER/REPO`: triage the queue from a terminal, exactly as the Action's scheduled sweep.

Same service (`triage.service.triager.Triager.sweep`), same safety (comment before labels, labels in one call, never
a duplicate comment), same budget. Token from GITHUB_TOKEN; API from --api-url or GITHUB_API_URL.
Progress goes to stderr; stdout carries the result only (`--json`: one JSON document and nothing else).
Exit status: 0, 1 when any issue failed (the others are still done), 2 on bad input (nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys

from triage.cli.common import (CliError, add_config_options, add_github_options, add_planner_options,
                               check_after_nothing_found, check_model_prompt, github_client, load_config,
                               planner_from_args, positive_seconds, run_command, seconds)
from triage.service.cutoff import MODES, parse_not_before
from triage.service.limits import MAX_SWEEP

DEFAULT_MAX_ISSUES = 50


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="triage a repository's queue (writes labels and comments unless --dry-run)",
        description="Triage open issues that carry the queue label and neither the marker nor the review label, "
        "oldest first, as the Action's scheduled run does. Needs GITHUB_TOKEN with issues: write (read is enough "
        "with --dry-run).",
    )
    add_github_options(parser, what="sweep", max_issues=DEFAULT_MAX_ISSUES,
                       max_help=f"triage at most N issues (default {DEFAULT_MAX_ISSUES}, at most {MAX_SWEEP})")
    parser.add_argument("--dry-run", action="store_true", help="plan and print, write nothing")
    parser.add_argument("--queue-label", default="", help="queue label (default: the labels file's queue_label)")
    parser.add_argument("--json", action="store_true", help="print the sweep as one JSON document on stdout")
    parser.add_argument("--timeout", type=positive_seconds, default=None, metavar="SECONDS",
                        help="stop starting new issues after this long (what is left is reported)")
    parser.add_argument("--skip-recent", type=seconds, default=600.0, metavar="SECONDS",
                        help="leave issues updated in the last SECONDS to their own event run (default 600; 0 takes all)")
    parser.add_argument("--bot-login", default="github-actions[bot]",
                        help="the account the token writes as: only its comments count as ours")
    parser.add_argument("--not-before", type=_not_before, default=None, metavar="DATE",
                        help="do not triage queue issues created before this date (2024-01-31: midnight UTC) or "
                             "date and time with its zone (2024-01-31T12:00:00Z); their count is reported")
    parser.add_argument("--not-before-mode", choices=MODES, default="skip",
                        help="skip (default): leave older issues alone; labels-only: label them, never comment")
    add_config_options(parser)
    add_planner_options(parser)
    parser.set_defaults(func=lambda args: run_command(run, args))


def _not_before(text: str) -> str:
    try:
        return parse_not_before(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from triage.service.summary import count_gap, cutoff_line, line_for
    from triage.service.triager import Triager

    if args.max_issues > MAX_SWEEP:
        raise CliError(f"--max-issues must be at most {MAX_SWEEP}")
    bundle = load_config(args)
    planner = planner_from_args(args)
    check_model_prompt(planner, bundle)
    client = github_client(args, write=not args.dry_run)
    triager = Triager(client, bundle, repo=args.repo, queue_label=args.queue_label or None,
                      planner=planner, dry_run=args.dry_run,
                      own_logins=(args.bot_login,), recent_seconds=args.skip_recent,
                      not_before=args.not_before, not_before_mode=args.not_before_mode)
    sweep = triager.sweep(args.max_issues, seconds=args.timeout,
                          on_result=lambda r: print(line_for(r), file=sys.stderr, flush=True))
    failed = sweep.failed
    if not sweep.found and not sweep.before_cutoff and not sweep.results:  # nothing found: a misspelt queue label?
        check_after_nothing_found(client, args.repo, triager.queue_label, given=bool(args.queue_label))
    if sweep.not_before:
        print(f"ptd-triage sweep: {cutoff_line(sweep)}", file=sys.stderr)
    for item in failed:
        if item.number is None:  # a failed search has no issue line of its own yet
            print(line_for(item), file=sys.stderr)
    verb = "planned" if args.dry_run else "triaged"
    summary = (f"ptd-triage sweep: found {sweep.found}, {verb} {len(sweep.triaged)}, failed {len(failed)}, "
               f"skipped {sum(sweep.skipped.values())}, left {sweep.left}; {client.request_count} API requests")
    if args.dry_run:  # how to go live, where the person is looking
        summary += "; a dry run, nothing written: run it again without --dry-run to write"
    if args.json:
        print(json.dumps({
            "query": sweep.query, "found": sweep.found, "left": sweep.left, "skipped": sweep.skipped,
            "stopped": sweep.stopped, "api_requests": client.request_count,
            "not_before": sweep.not_before, "not_before_mode": sweep.not_before_mode,
            "before_not_before": sweep.before_cutoff,
            "issues": [{"number": r.number, "outcome": r.outcome, "error": r.error,
                        "labels_written": list(r.labels_written), "comment_posted": r.comment_posted,
                        "plan": r.plan.to_dict() if r.plan else None} for r in sweep.results],
        }, sort_keys=True, ensure_ascii=False))
        print(summary, file=sys.stderr)
    else:
        print(summary)
    gap = count_gap(sweep)
    if gap:  # the numbers above are not the whole story: say so where the person is looking
        print(f"ptd-triage sweep: warning: {gap}", file=sys.stderr)
    return 1 if failed else 0
