"""What a caller asks of the triage service for one issue: an event run, a dispatch, a sweep's issue, plan mode and
apply mode all ask through `IssueRequest` (triage.service.triager.Triager.run).

May import: the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """How to answer a command's comment once the issue is read again: `running` when the command runs, `refused`
    when the issue now carries the opt-out label (GitHub's reaction names)."""

    comment_id: int
    running: str = "eyes"
    refused: str = "confused"


@dataclass(frozen=True)
class IssueRequest:
    """`force`: a re-triage (ignores the marker and a hold, never an opt-out); `require_queue`: leave the issue
    unless it is open and in the queue; `leave_recent`: leave it when it was updated in the last `recent_seconds`
    (a sweep: its own event run takes it); `skip_before`: leave it when created before this cut-off (the sweep's
    not-before, mode skip); `labels_only_before`: labels but no comment when created before it (mode labels-only);
    `answer`: the command's comment to answer (`Answer`), once the issue as it is now is read."""

    number: int
    force: bool = False
    require_queue: bool = True
    leave_recent: bool = False
    skip_before: str | None = None
    labels_only_before: str | None = None
    answer: Answer | None = None


__all__ = ["Answer", "IssueRequest"]
