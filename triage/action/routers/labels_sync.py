"""The Action's `labels-sync` task (workflow_dispatch with input `command: labels-sync`): create the labels the
configuration needs on the repository the workflow runs in (the opt-out label too, so people can add it), through
the run's executor, which in a dry run creates nothing (then it only reports); never
deletes or renames; existing labels keep their colour and description (`ptd-triage labels sync --update` from a
terminal changes those). Plans nothing, so needs no planner (nor model credentials).

May import: `triage.action.context`, `triage.action.routing`, and inside functions `triage.config.sync`.
"""
from __future__ import annotations

from triage.action.context import Context, Result, ResultKind
from triage.action.routing import Router

TASK = "labels-sync"

router = Router()


@router.on(f"workflow_dispatch.{TASK}", plans=False)
def on_labels_sync(context: Context) -> Result:
    from triage.config.sync import CREATE, DIFFERS, OK, counts, plan_sync, queue_label_note, table

    s = context.settings
    existing = context.client.list_repo_labels(s.repo)
    changes = plan_sync(context.bundle.labels, existing, update=False)
    created = context.executor.sync_labels(changes)  # False: a dry run, nothing created
    for line in table(changes, applied=created, to_write="the input dry-run: false").splitlines():
        context.reporter.info(line)
    n = counts(changes)
    verb = "created" if created else "would create"
    why = f"labels-sync: {verb} {n[CREATE]} label(s), {n[OK] + n[DIFFERS]} already present"
    # Reported as what it did: a table of the labels, not a run "ignored" for want of an issue.
    lines = [f"**{verb[0].upper() + verb[1:]} {n[CREATE]} label(s)** the configuration needs; {n[OK]} already "
             f"present as configured, {n[DIFFERS]} present with another colour or description (left as they are: "
             "`ptd-triage labels sync --update` from a terminal changes those). Nothing is ever deleted or "
             "renamed.",
             ""]
    note = queue_label_note(context.bundle.labels, existing)
    if note:
        context.reporter.warning(f"labels-sync: {note}")
        lines += [f"> [!WARNING]\n> {_cell(note[:1].upper() + note[1:])}.", ""]
    shown = {CREATE: verb, OK: "present"}
    lines += ["| Label | Colour | Description (configured) | |", "| --- | --- | --- | --- |"]
    lines += [f"| {_cell(c.name)} | `#{c.color}` | {_cell(c.description)} | "
              f"{shown.get(c.action) or 'present, differs: ' + _cell('; '.join(c.differences))} |"
              for c in changes]
    return Result(ResultKind.TASK, why=why, task=lines + [""], dry_run=not created)


def _cell(text: str) -> str:
    """A label's name or description in a table cell: configuration text, escaped all the same."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'").replace("<", "&lt;")
