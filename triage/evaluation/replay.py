"""Replay a live queue: rebuild each issue as it stood when the queue label was added, and what people did next.

For an issue that carries the queue label, its label events (`GET .../issues/{n}/events`) tell the story:
- the queue-label event: the first `labeled` event for the queue label;
- labels at queue time: the current labels with every later event undone (later additions removed, later
  removals put back). Undoing from the current state, rather than replaying from the first event, stays right
  when the oldest events are missing;
- gold: labels at queue time, then the later events applied, counting additions by people only (a bot, including
  this one, is not ground truth) and removals by anyone (a person undoing a bot's label is a correction);
- "triaged by people": at least one allowlisted label (not the bot's marker) added after the queue label by a
  non-bot actor. Only such issues are replayed: the others have no human answer to compare with;
- comments at queue time: those created before the queue-label event.

The rows built here are in the eval dataset format, so `ptd-triage eval` can re-run them later.

May import: the standard library, `triage.config`, `triage.evaluation.dataset`, `triage.evaluation.gold`,
`triage.github.names`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from triage.config.labels import LabelSet
from triage.evaluation.dataset import DatasetRow, parse_row
from triage.evaluation.gold import derive_gold, kind_label
from triage.github.names import is_bot_account

# The REST issue fields a dataset row keeps (the rest is noise for planning and bloats the file).
ISSUE_FIELDS = ("number", "title", "body", "user", "author_association", "html_url")


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


def is_bot(actor: Any) -> bool:
    if not isinstance(actor, dict):
        return True  # a deleted ("ghost") or missing actor cannot vouch for a human decision
    login = str(actor.get("login") or "")
    return not login or is_bot_account(login, actor.get("type"))


def label_events(events: Iterable[dict]) -> list[dict]:
    """The labeled/unlabeled events, oldest first (ties keep the API's order)."""
    picked = [e for e in events if e.get("event") in ("labeled", "unlabeled") and isinstance(e.get("label"), dict)]
    return sorted(picked, key=lambda e: str(e.get("created_at") or ""))


def queue_event_index(events: list[dict], queue_label: str) -> int | None:
    for index, event in enumerate(events):
        if event["event"] == "labeled" and event["label"].get("name") == queue_label:
            return index
    return None


def labels_at(current: Iterable[str], later_events: list[dict]) -> list[str]:
    """Undo `later_events` (oldest first) from the current labels, newest first."""
    labels = list(dict.fromkeys(current))
    for event in reversed(later_events):
        name = event["label"].get("name")
        if event["event"] == "labeled" and name in labels:
            labels.remove(name)
        elif event["event"] == "unlabeled" and name not in labels:
            labels.append(name)
    return labels


def labels_after_people(start: Iterable[str], later_events: list[dict]) -> list[str]:
    """Apply `later_events` to `start`: additions by people, removals by anyone."""
    labels = list(dict.fromkeys(start))
    for event in later_events:
        name = event["label"].get("name")
        if event["event"] == "labeled" and not is_bot(event.get("actor")) and name not in labels:
            labels.append(name)
        elif event["event"] == "unlabeled" and name in labels:
            labels.remove(name)
    return labels


def triaged_by_people(later_events: list[dict], labels: LabelSet) -> bool:
    return any(
        event["event"] == "labeled"
        and not is_bot(event.get("actor"))
        and event["label"].get("name") in labels.names
        and event["label"].get("name") != labels.marker
        for event in later_events
    )


def skip_reason(events: list[dict], labels: LabelSet) -> str | None:
    """Why an issue cannot be replayed ("no_queue_event", "not_triaged_by_people"), or None."""
    ordered = label_events(events)
    index = queue_event_index(ordered, labels.queue_label)
    if index is None:
        return "no_queue_event"
    if not triaged_by_people(ordered[index + 1 :], labels):
        return "not_triaged_by_people"
    return None


def rebuild_row(repo: str, issue: dict, events: list[dict], comments: list[dict], bundle) -> dict:
    """The eval-format row for one issue that `skip_reason` accepts."""
    labels = bundle.labels
    ordered = label_events(events)
    index = queue_event_index(ordered, labels.queue_label)
    if index is None:
        raise ValueError(f"{repo}#{issue.get('number')}: no queue-label event")
    later = ordered[index + 1 :]
    queued_at = str(ordered[index].get("created_at") or "")
    current = [item["name"] if isinstance(item, dict) else item for item in issue.get("labels") or []]
    at_queue = labels_at(current, later)
    if labels.queue_label not in at_queue:
        at_queue.append(labels.queue_label)
    gold_labels = labels_after_people(at_queue, later)
    gold = derive_gold(gold_labels, bundle)
    kept = [c for c in comments if queued_at and str(c.get("created_at") or "") < queued_at]
    snapshot_issue = {key: issue[key] for key in ISSUE_FIELDS if key in issue}
    snapshot_issue.update(
        {
            # As if the queue label had just been added: the issue was open then, with these labels and comments.
            "state": "open",
            "labels": [{"name": name} for name in at_queue],
            "comments": len(kept),
        }
    )
    return {
        "id": f"{repo}#{issue['number']}",
        "chunk": "description",
        "issue": snapshot_issue,
        "comments": kept,
        "gold": {
            **gold.to_dict(),
            "performance": kind_label(labels, "performance") in gold_labels,
            "needs_reproduction": labels.reproduction in gold_labels,
        },
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
