"""The Action's `labels-sync` task (workflow_dispatch with input `command: labels-sync`): create the labels the
configuration needs on the repository the workflow runs in. Honours `dry-run` (then it only reports); never
deletes or renames; existing labels keep their colour and description (`ptd-triage labels sync --update` from a
terminal changes those).

May import: the standard library, `triage.action.handlers` (types), and lazily `triage.config`.
"""

from __future__ import annotations

TASK = "labels-sync"


def handle_labels_sync(run):
    from triage.action.handlers import Result
    from triage.config.sync import CREATE, apply_sync, plan_sync, table

    s = run.settings
    changes = plan_sync(run.bundle.labels, run.client.list_repo_labels(s.repo), update=False)
    if not s.dry_run:
        apply_sync(run.client, s.repo, changes)
    for line in table(changes, applied=not s.dry_run).splitlines():
        run.reporter.info(line)
    created = sum(1 for c in changes if c.action == CREATE)
    verb = "would create" if s.dry_run else "created"
    # Reported as a run with no issue to triage; the table above is the detail.
    return Result("ignored", why=f"labels-sync: {verb} {created} label(s), {len(changes) - created} already present")
