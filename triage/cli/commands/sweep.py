"""`ptd-triage sweep --repo OWNER/REPO`: triage the queue from a terminal, exactly as the Action's scheduled sweep.

Same procedure, same safety (comment before labels, labels in one call, never a duplicate comment), same
budget: it reuses `triage.action.app.App.sweep`. Token from GITHUB_TOKEN; API from --api-url or GITHUB_API_URL.
Exit status: 0, 1 when any issue failed (the others are still done), 2 on bad input (nothing written).
"""

from __future__ import annotations

import argparse
import json
import os

from triage.action.app import MAX_SWEEP, ActionError, App, Settings, check_repo, line_for, max_backoff_from
from triage.cli.common import add_config_options, add_github_options, api_url, fail
from triage.action.report import Reporter

DEFAULT_MAX_ISSUES = 50


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="triage a repository's queue (writes labels and comments unless --dry-run)",
        description="Triage open issues that carry the queue label and not the marker label, as the Action's "
        "scheduled run does. Needs GITHUB_TOKEN with issues: write (read is enough with --dry-run).",
    )
    add_github_options(
        parser,
        what="sweep",
        max_issues=DEFAULT_MAX_ISSUES,
        max_help=f"triage at most N issues (default {DEFAULT_MAX_ISSUES}, at most {MAX_SWEEP})",
    )
    parser.add_argument("--dry-run", action="store_true", help="plan and print, write nothing")
    parser.add_argument("--queue-label", default="", help="queue label (default: the labels file's queue_label)")
    parser.add_argument("--json", action="store_true", help="print the plans as one JSON list on stdout at the end")
    add_config_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    token = os.environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        return fail("GITHUB_TOKEN is not set: sweep needs a token that can read (and, without --dry-run, write) issues")
    if args.max_issues > MAX_SWEEP:
        return fail(f"--max-issues must be at most {MAX_SWEEP} (the search API's limit)")
    try:
        settings = Settings(
            repo=check_repo(args.repo),
            token=token,
            api_url=api_url(args),
            queue_label=args.queue_label,
            rubric=args.rubric or "",
            labels=args.labels or "",
            templates=args.templates or "",
            dry_run=args.dry_run,
            max_issues=args.max_issues,
            max_backoff=max_backoff_from(os.environ),
        )
        app = App(settings, Reporter(annotations=False))  # plain `error: ...` lines, no workflow commands
        result = app.sweep()  # prints one line per issue as it goes
    except ActionError as exc:
        return fail(str(exc))
    failed = result.failed
    if args.json:
        print(json.dumps([r.plan for r in result.reports], sort_keys=True))
    for report in failed:
        if not report.plan.get("issue"):  # a failed search has no issue line of its own yet
            print(line_for(report))
    verb = "planned" if args.dry_run else "triaged"
    print(f"ptd-triage sweep: {verb} {len(result.reports) - len(failed)} issue(s), {len(failed)} failed, "
          f"{app.client.request_count} API requests")
    return 1 if failed else 0
