"""Pieces every subcommand shares: the config options, the GitHub options, and how errors are printed."""

from __future__ import annotations

import argparse
import os
import sys

from triage.github.names import DEFAULT_API_URL


def fail(message: str, status: int = 2) -> int:
    """One line on stderr (and an `::error::` annotation when running in GitHub Actions)."""
    message = " ".join(message.split())
    if os.environ.get("GITHUB_ACTIONS") == "true":
        print(f"::error::{message}", file=sys.stderr)
    print(f"ptd-triage: error: {message}", file=sys.stderr)
    return status


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """--rubric/--labels/--templates, shared by every command that plans."""
    parser.add_argument("--rubric", metavar="YAML", help="rubric file (default: the bundled triage/rubric.yaml)")
    parser.add_argument("--labels", metavar="JSON", help="label allowlist (default: the bundled labels.json)")
    parser.add_argument("--templates", metavar="DIR", help="comment templates directory (default: the bundled templates/)")


def add_github_options(parser: argparse.ArgumentParser, *, what: str, max_issues: int, max_help: str) -> None:
    """--repo, --api-url and --max-issues, for the commands that read a repository's queue."""
    parser.add_argument("--repo", required=True, metavar="OWNER/REPO", help=f"repository to {what}")
    parser.add_argument("--api-url", help="GitHub API URL (default: $GITHUB_API_URL or api.github.com)")
    parser.add_argument("--max-issues", type=positive_int, default=max_issues, metavar="N", help=max_help)


def api_url(args: argparse.Namespace) -> str:
    return (args.api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
