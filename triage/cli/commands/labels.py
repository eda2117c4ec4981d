"""`ptd-triage labels sync --repo OWNER/REPO [--config DIR] [--apply] [--update]`: create the labels a configuration
needs, with their colours and descriptions. Dry run by default (a table of what it would do); `--update` also
sets colour and description on labels that exist; never deletes or renames.
"""

from __future__ import annotations

import argparse

from triage.cli.common import add_config_options, github_client, load_config, run_command


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("labels", help="manage the labels a configuration needs on a repository")
    sub = parser.add_subparsers(dest="labels_command", metavar="ACTION", required=True)
    sync = sub.add_parser("sync", help="create missing labels (dry run unless --apply)",
                          description=__doc__.splitlines()[0])
    sync.add_argument("--repo", required=True, metavar="OWNER/REPO", help="repository whose labels to sync")
    sync.add_argument("--api-url", help="GitHub API URL (default: $GITHUB_API_URL or api.github.com)")
    sync.add_argument("--apply", action="store_true", help="write (default: only print what would be done)")
    sync.add_argument("--update", action="store_true",
                      help="also set colour and description on labels that exist with others")
    add_config_options(sync)
    sync.set_defaults(func=lambda args: run_command(run_sync, args))


def run_sync(args: argparse.Namespace) -> int:
    import sys

    from triage.config.sync import plan_sync, queue_label_note, table
    from triage.service.executor import executor_for

    bundle = load_config(args)
    client = github_client(args, write=args.apply, what="labels")  # without --apply, read-only
    existing = client.list_repo_labels(args.repo)
    changes = plan_sync(bundle.labels, existing, update=args.update)
    created = executor_for(client, args.repo, dry_run=not args.apply, own_login=None).sync_labels(changes)
    print(table(changes, applied=created))
    note = queue_label_note(bundle.labels, existing)
    if note:
        print(f"warning: {note}", file=sys.stderr)
    return 0
