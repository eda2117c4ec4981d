"""The sweep and the manual run: `schedule` sweeps the queue; `workflow_dispatch` triages the issue its
`issue-number` input names (forced with `force`), or sweeps when it names none.

May import: `triage.action.context`, `triage.action.routing`, `triage.action.settings`, `triage.action.routers.*`,
`triage.action.queue_label_check`, `triage.service.queue_check`, and inside functions `triage.service.summary`.
"""
from __future__ import annotations

from triage.action.context import Context, Event, Result, ResultKind, ignored
from triage.action.queue_label_check import check_after_nothing_found
from triage.action.routers.common import triage_issue
from triage.action.routers.labels_sync import TASK
from triage.action.routing import Router
from triage.action.settings import ActionError
from triage.service.queue_check import near_miss, near_miss_line

router = Router()


@router.on("schedule")
def on_schedule(context: Context) -> Result:
    return sweep(context)


def _check_dispatch(event: Event) -> Result | None:
    if event.settings.task and event.settings.task != TASK:  # labels-sync has its own route
        raise ActionError(f"input command must be empty or '{TASK}', got {event.settings.task!r}")
    return None


@router.on("workflow_dispatch", check=_check_dispatch)
def on_workflow_dispatch(context: Context) -> Result:
    number = context.settings.issue_number
    if number is None:
        return sweep(context)
    force = context.settings.force
    result = triage_issue(context, number, force=force, require_queue=not force)
    issue = result.issue
    if issue is None or not issue.left:
        return result
    if issue.opted_out:  # force does not lift an opt-out
        return ignored(f"#{number}: {issue.left}; nothing written")
    if issue.left:
        refused = ignored(f"#{number}: {issue.left}; set the force input to triage it anyway")
        close = near_miss(context.queue_label, issue.labels_before)
        refused.warning = near_miss_line(context.queue_label, close, f"issue #{number} carries the label") \
            if close else ""
        return refused
    return result


def sweep(context: Context, source=None) -> Result:
    """The sweep over the queue's search, or over `source`'s issues (an apply run's saved plans,
    triage.service.sweep.ListedIssues), with the same budgets and the same report."""
    from triage.service.summary import cutoff_line, line_for

    s = context.settings
    done = context.service.sweep(s.max_issues, seconds=s.sweep_seconds, source=source,
                                 on_result=lambda r: context.reporter.info(line_for(r)))
    skip = context.bundle.labels.skip
    notes = [f"query: {done.query}" if source is None else done.query, f"budget: {s.max_issues} issues",
             f"issues carrying '{skip}' are left out of the search: a person opted them out"]
    if done.not_before:  # the log's line; the step summary says it in its first lines (triage.action.summary)
        context.reporter.info(f"ptd-triage: {cutoff_line(done)}")
    if done.stopped:
        notes.append(f"stopped early: {done.stopped}")
    if source is None and not done.found and not done.before_cutoff and not done.results:
        # Nothing found: is the queue label one of the repository's? (one request; a misspelt one fails the run)
        check_after_nothing_found(s, context.client, context.queue_label, context.reporter)
    return Result(ResultKind.SWEEP, sweep=done, notes=notes)
