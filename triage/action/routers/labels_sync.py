"""The Action's `labels-sync` task (workflow_dispatch with input `command: labels-sync`): create the labels the
configuration needs on the repository the workflow runs in. Honours `dry-run` (then it only reports); never
deletes or renames; existing labels keep their colour and description (`ptd-triage labels sync --update` from a
terminal changes those). Plans nothing, so needs no planner (nor model credentials).

May import: `triage.action.context`, `triage.action.routing`, and inside functions `triage.config.sync`.
"""
from __future__ import annotations

from triage.action.context import Context, Result
from triage.action.routing import Router

TASK = "labels-sync"

router = Router()


@router.on(f"workflow_dispatch.{TASK}", plans=False)
def on_labels_sync(context: Context) -> Result:
    from triage.config.sync import CREATE, apply_sync, plan_sync, table

    s = context.settings
    changes = plan_sync(context.bundle.labels, context.client.list_repo_labels(s.repo), update=False)
    if not s.dry_run:
        apply_sync(context.client, s.repo, changes)
    for line in table(changes, applied=not s.dry_run).splitlines():
        context.reporter.info(line)
    created = sum(1 for c in changes if c.action == CREATE)
    verb = "would create" if s.dry_run else "created"
    # Reported as a run with no issue to triage; the table above is the detail.
    return Result("ignored", why=f"labels-sync: {verb} {created} label(s), {len(changes) - created} already present")
