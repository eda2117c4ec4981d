"""A run whose search found nothing asks whether the queue label is one of the repository's (issue 40): a misspelt
label fails the run in one `::error::` line naming the repository's labels (nothing was found, so nothing was
written), instead of "0 issues" and exit 0; a label that differs only in case is a warning. The sweep and the shadow
mode call it (triage.service.queue_check does the asking).

May import: `triage.action.report`, `triage.action.settings`, `triage.service.queue_check`.
"""
from __future__ import annotations

from triage.action.report import Reporter
from triage.action.settings import ActionError, Settings
from triage.service.queue_check import CONFIGURED, check_queue_label


def check_after_nothing_found(settings: Settings, client, queue_label: str, reporter: Reporter) -> None:
    named_by = "the queue-label input" if settings.queue_label else CONFIGURED
    problem = check_queue_label(client, settings.repo, queue_label, named_by=named_by)
    if problem is not None and problem.missing:
        raise ActionError(problem.message)
    if problem is not None:
        reporter.warning(problem.message)
