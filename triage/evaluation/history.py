"""An issue's label history, read back: how it stood when the queue label was added, and what people did next.

`replay` (from the issue events endpoint) and `shadow` (from the timeline) both rebuild issues here, so the two
measure the same thing the same way. From an issue's label events (`labeled`/`unlabeled`, oldest first):
- the queue-label event: the first `labeled` event for the queue label;
- labels at queue time: the current labels with every later event undone (later additions removed, later
  removals put back). Undoing from the current state, rather than replaying from the first event, stays right
  when the oldest events are missing;
- people's labels: labels at queue time, then the later events up to the end of the window (`until`; all of them
  without one) applied, counting additions by people only (a bot, including this one, is not ground truth) and
  removals by anyone (a person undoing a bot's label is a correction). A label added and removed again before the
  end of the window does not count;
- "triaged by people": at least one allowlisted label (not the bot's marker) added after the queue label, and by
  the end of the window, by a person: not a bot (GitHub's `Bot` type or a `[bot]` login) and not one of the bot's
  own logins (`own_logins`: a machine user's token is a `User`). The others have no human answer to compare with;
- comments: those written before `comments_until` (replay: the queue-label event; shadow: people's first triage
  label), leaving out bots' comments written after the queue label (the bot's own among them: it could not have
  read them when it planned).

May import: the standard library, `triage.config`, `triage.evaluation.dataset`, `triage.evaluation.gold`,
`triage.github.names`.
"""

from __future__ import annotations

from typing import Any, Iterable

from triage.config.labels import LabelSet
from triage.evaluation.gold import derive_gold, kind_label
from triage.github.names import is_bot_account

# The REST issue fields a dataset row keeps (the rest is noise for planning and bloats the file).
ISSUE_FIELDS = ("number", "title", "body", "user", "author_association", "html_url")
NO_QUEUE_EVENT, NOT_TRIAGED = "no_queue_event", "not_triaged_by_people"


def is_bot(actor: Any, own_logins: Iterable[str] = ()) -> bool:
    """Not a person: a deleted ("ghost") or missing actor cannot vouch for a human decision either."""
    if not isinstance(actor, dict):
        return True
    login = str(actor.get("login") or "")
    return not login or is_bot_account(login, actor.get("type")) or login in set(own_logins)


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


def labels_after_people(start: Iterable[str], later_events: list[dict], own_logins: Iterable[str] = ()) -> list[str]:
    """Apply `later_events` to `start`: additions by people, removals by anyone."""
    labels = list(dict.fromkeys(start))
    for event in later_events:
        name = event["label"].get("name")
        if event["event"] == "labeled" and not is_bot(event.get("actor"), own_logins) and name not in labels:
            labels.append(name)
        elif event["event"] == "unlabeled" and name in labels:
            labels.remove(name)
    return labels


def triage_events(later_events: list[dict], labels: LabelSet, own_logins: Iterable[str] = ()) -> list[dict]:
    """People's additions of allowlisted labels other than the marker, oldest first."""
    return [event for event in later_events
            if event["event"] == "labeled" and not is_bot(event.get("actor"), own_logins)
            and event["label"].get("name") in labels.names and event["label"].get("name") != labels.marker]


def triaged_by_people(later_events: list[dict], labels: LabelSet, own_logins: Iterable[str] = ()) -> bool:
    return bool(triage_events(later_events, labels, own_logins))


class History:
    """One issue's label events split at its queue-label event (`index` None when it has none), with the events
    after it that fall within the window (`until`, an ISO 8601 time; every later event without one)."""

    def __init__(self, events: Iterable[dict], labels: LabelSet, *, until: str | None = None,
                 own_logins: Iterable[str] = ()):
        self.labels, self.own_logins = labels, tuple(own_logins)
        self.ordered = label_events(events)
        self.index = queue_event_index(self.ordered, labels.queue_label)
        self.later = self.ordered[self.index + 1:] if self.index is not None else []
        self.in_window = [e for e in self.later if until is None or str(e.get("created_at") or "") <= until]

    @property
    def queued_at(self) -> str:
        return str(self.ordered[self.index].get("created_at") or "") if self.index is not None else ""

    def skip_reason(self) -> str | None:
        """Why the issue has no human answer to compare with (NO_QUEUE_EVENT, NOT_TRIAGED), or None."""
        if self.index is None:
            return NO_QUEUE_EVENT
        return None if self.triage_events() else NOT_TRIAGED

    def triage_events(self) -> list[dict]:
        return triage_events(self.in_window, self.labels, self.own_logins)

    def first_triage_at(self) -> str | None:
        found = self.triage_events()
        return str(found[0].get("created_at") or "") if found else None


def skip_reason(events: list[dict], labels: LabelSet) -> str | None:
    """Why an issue cannot be replayed ("no_queue_event", "not_triaged_by_people"), or None."""
    return History(events, labels).skip_reason()


def rebuild_row(repo: str, issue: dict, events: list[dict], comments: list[dict], bundle, *,
                until: str | None = None, own_logins: Iterable[str] = (), comments_until: str | None = None) -> dict:
    """The eval-format row for one issue with a queue-label event: as it stood then, and its gold answer (people's
    labels at the end of the window). `comments_until`: keep comments written before it (default: the queue-label
    event)."""
    labels = bundle.labels
    history = History(events, labels, until=until, own_logins=own_logins)
    if history.index is None:
        raise ValueError(f"{repo}#{issue.get('number')}: no queue-label event")
    queued_at = history.queued_at
    current = [item["name"] if isinstance(item, dict) else item for item in issue.get("labels") or []]
    at_queue = labels_at(current, history.later)
    if labels.queue_label not in at_queue:
        at_queue.append(labels.queue_label)
    gold_labels = labels_after_people(at_queue, history.in_window, own_logins)
    gold = derive_gold(gold_labels, bundle)
    kept = kept_comments(comments, queued_at, comments_until or queued_at, own_logins)
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


def kept_comments(comments: list[dict], queued_at: str, before: str, own_logins: Iterable[str] = ()) -> list[dict]:
    """The comments written before `before`; after the queue label, people's only (see the module doc)."""
    if not queued_at:
        return []
    return [c for c in comments if str(c.get("created_at") or "") < before
            and (str(c.get("created_at") or "") < queued_at or not is_bot(c.get("user"), own_logins))]
