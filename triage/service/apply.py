"""Apply a plan's writes to GitHub, in order, recording what actually reached it.

`triage.core.writes.planned_writes` (pure) decides the writes and their order; this is the small executor at
the edge. It stops at the first failure: the caller reports it, and a re-run completes it (the order makes
that safe: the comment first, carrying its marker; then all labels in one call, the marker label among them).

May import: the standard library, `triage.core.writes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from triage.core.writes import AddLabels, IssueWriter, PostComment, Write


@dataclass
class Applied:
    """What actually reached GitHub (filled in as writes succeed, so a partial failure is reported truly)."""

    labels: tuple[str, ...] = ()
    comment_template: str | None = None
    comment_id: int | None = None


def apply_writes(client: IssueWriter, repo: str, writes: list[Write], applied: Applied | None = None, *,
                 after_comment: Callable[[PostComment, dict], bool] | None = None) -> Applied:
    """`after_comment(write, posted)`, when given, runs between the comment and the labels; False says the comment
    was taken back (a duplicate of another run's, triage.service.claim.settle): it is then not reported as ours."""
    applied = applied if applied is not None else Applied()
    for write in writes:
        if isinstance(write, PostComment):
            # The marker lets the client look before retrying a POST whose fate is unknown (timeout, 5xx).
            posted = client.create_comment(repo, write.issue, write.body, dedupe_marker=write.marker)
            applied.comment_template = write.template
            applied.comment_id = posted.get("id") if isinstance(posted, dict) else None
            if after_comment is not None and not after_comment(write, posted if isinstance(posted, dict) else {}):
                applied.comment_template = applied.comment_id = None
        elif isinstance(write, AddLabels):
            client.add_labels(repo, write.issue, list(write.labels))
            applied.labels = write.labels
    return applied
