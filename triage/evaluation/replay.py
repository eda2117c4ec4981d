"""Replay a live queue: rebuild each issue as it stood when the queue label was added, and what people did next.

The rebuild itself is `triage.evaluation.history` (shared with `shadow`): from an issue's label events
(`GET .../issues/{n}/events`), the labels it had when the queue label was added, the comments written before then,
and gold from the labels people added afterwards. Only issues triaged by people are replayed: the others have no
human answer to compare with.

The rows built here are in the eval dataset format, so `ptd-triage eval` can re-run them later.

May import: the standard library, `triage.evaluation.dataset`, `triage.evaluation.history`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.evaluation.dataset import DatasetRow, parse_row
from triage.evaluation.history import (ISSUE_FIELDS, is_bot, label_events, labels_after_people, labels_at,
                                       queue_event_index, rebuild_row, skip_reason, triaged_by_people)

__all__ = ["ISSUE_FIELDS", "ReplayStats", "is_bot", "label_events", "labels_after_people", "labels_at",
           "queue_event_index", "rebuild_row", "replay_repo", "skip_reason", "triaged_by_people"]


@dataclass
class ReplayStats:
    examined: int = 0
    replayed: int = 0
    no_queue_event: int = 0
    not_triaged_by_people: int = 0
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, int]:
        return {
            "examined": self.examined,
            "replayed": self.replayed,
            "no_queue_event": self.no_queue_event,
            "not_triaged_by_people": self.not_triaged_by_people,
        }


def replay_repo(client, repo: str, bundle, *, max_issues: int) -> tuple[list[DatasetRow], ReplayStats]:
    """Rebuild every human-triaged issue among the first `max_issues` carrying the queue label (open or closed)."""
    labels = bundle.labels
    stats = ReplayStats()
    rows: list[DatasetRow] = []
    for issue in client.list_issues(repo, labels=[labels.queue_label], state="all", limit=max_issues):
        stats.examined += 1
        number = issue["number"]
        events = client.list_events(repo, number)
        reason = skip_reason(events, labels)
        if reason is not None:
            setattr(stats, reason, getattr(stats, reason) + 1)
            stats.skipped.append(f"{repo}#{number}: {reason.replace('_', ' ')}")
            continue
        # Comments cost a call: fetch them only for kept issues that have any.
        comments = client.list_comments(repo, number) if issue.get("comments") else []
        row = rebuild_row(repo, issue, events, comments, bundle)
        rows.append(parse_row(row, stats.replayed + 1))
        stats.replayed += 1
    return rows, stats
