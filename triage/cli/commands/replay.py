"""`ptd-triage replay --repo OWNER/REPO`: measure the rubric on your own queue's history.

Rebuilds each human-triaged issue as it stood when the queue label was added (see triage/replay.py), plans it,
and prints the same figures as `ptd-triage eval`. Token from GITHUB_TOKEN; API from --api-url or GITHUB_API_URL.
Only reads from GitHub. Exit status: 0, or 1 when a `--min-*` minimum is not met or GitHub fails, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys

from triage.cli.common import add_config_options, add_github_options, api_url, fail
from triage.cli.commands.eval import add_report_arguments, plan_rows, report
from triage.config.bundle import ConfigError, load_bundle
from triage.evaluation.dataset import DatasetError, write_dataset

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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: building the CLI's parser must not load requests for `plan` and `eval`.
    from triage.github.client import GitHubClient, GitHubError, validate_repo
    from triage.evaluation.replay import replay_repo

    token = os.environ.get("GITHUB_TOKEN", "")
    if not token:
        return fail("GITHUB_TOKEN is not set: replay needs a token that can read the repository's issues")
    try:
        validate_repo(args.repo)
        bundle = load_bundle(args.rubric, args.labels, args.templates)
    except (ConfigError, ValueError) as exc:
        return fail(str(exc))
    client = GitHubClient(token, api_url(args))
    try:
        rows, stats = replay_repo(client, args.repo, bundle.labels, max_issues=args.max_issues)
    except GitHubError as exc:
        return fail(f"{exc} (after {client.request_count} requests; nothing was written)", status=1)
    except (DatasetError, ValueError) as exc:  # an issue GitHub returned that the planner cannot read
        return fail(f"{args.repo}: {exc}", status=1)
    if args.write_dataset:
        try:
            write_dataset(args.write_dataset, (row.raw for row in rows))
        except OSError as exc:
            return fail(f"{args.write_dataset}: cannot write dataset ({exc.strerror or exc})")
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
    return report(cases, bundle, args, source=args.repo, extra={"replay": summary})



