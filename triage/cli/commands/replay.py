"""`ptd-triage replay --repo OWNER/REPO`: measure the rubric on your own queue's history.

Rebuilds each human-triaged issue as it stood when the queue label was added (see triage/evaluation/replay.py),
plans it, and prints the same report as `ptd-triage eval` (`triage.cli.measuring`). Token from GITHUB_TOKEN; API
from --api-url or GITHUB_API_URL. Only reads from GitHub. Exit status: 0, or 1 when a `--min-*` minimum is not met
or GitHub fails, 2 on bad input; every failure is one line from the one error handler.
"""

from __future__ import annotations

import argparse
import sys

from triage.cli.common import CliError, add_config_options, add_github_options, github_client, load_config, run_command
from triage.cli.measuring import add_report_arguments, check_key_joins, key_from_args, report
from triage.evaluation.cases import plan_rows
from triage.evaluation.dataset import write_dataset
from triage.evaluation.replay import replay_repo
from triage.http.errors import HTTPError

DEFAULT_MAX_ISSUES = 200


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="measure the rubric on a repository's already-triaged queue",
        description="Rebuild issues that carry the queue label and were triaged by people as they stood when the "
        "queue label was added, plan them, and compare with the labels people added afterwards.",
    )
    add_github_options(
        parser,
        what="replay",
        max_issues=DEFAULT_MAX_ISSUES,
        max_help=f"examine at most N issues carrying the queue label (default {DEFAULT_MAX_ISSUES})",
    )
    parser.add_argument("--write-dataset", metavar="FILE", help="also save the replayed issues in the eval format")
    add_config_options(parser)
    add_report_arguments(parser)
    parser.set_defaults(func=lambda args: run_command(run, args))


def run(args: argparse.Namespace) -> int:
    client = github_client(args, write=False)
    bundle = load_config(args)
    key = key_from_args(args, bundle)  # bad input fails before the first request
    try:
        rows, stats = replay_repo(client, args.repo, bundle, max_issues=args.max_issues)
    except HTTPError as exc:
        raise CliError(f"{exc} (after {client.request_count} requests; nothing was written)", status=1) from None
    except ValueError as exc:  # an issue GitHub returned that the planner cannot read
        raise CliError(f"{args.repo}: {exc}", status=1) from None
    if args.write_dataset:
        try:
            write_dataset(args.write_dataset, (row.raw for row in rows))
        except OSError as exc:
            raise CliError(f"{args.write_dataset}: cannot write dataset ({exc.strerror or exc})") from None
    summary = {**stats.to_dict(), "requests": client.request_count}
    print(
        "ptd-triage replay: {examined} issues examined, {replayed} triaged by people replayed, "
        "{not_triaged_by_people} not triaged by people, {no_queue_event} without a queue-label event; "
        "{requests} API requests".format(**summary),
        file=sys.stderr,
    )
    if not rows:
        print(f"ptd-triage replay: no issue of {args.repo} to measure", file=sys.stderr)
    cases = plan_rows(rows, bundle)
    check_key_joins(cases, key, args, args.repo)
    return report(cases, bundle, args, source=args.repo, extra={"replay": summary}, key=key)
