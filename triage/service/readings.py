"""Readings of GitHub's REST objects that the service decides on: who last added each label and whether a person
dismissed the bot's flag (an issue's events), and how long ago something happened (an issue's `updated_at`, a
reaction's `created_at`). Pure: the objects come in, facts go out.

May import: the standard library, `triage.github.names`, `triage.service.cutoff`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from triage.github.names import is_bot_account
from triage.service.cutoff import github_time

RECENT = "updated in the last few minutes: left to its own event run"  # a sweep leaves it to its own event run


def label_history(events: Iterable[Mapping[str, Any]], review_label: str) -> tuple[frozenset[str], bool]:
    """From an issue's events: which labels were last added by a bot, and whether a person removed the review
    label after a bot had added it (a person looked at a flag and dismissed it)."""
    last_adder: dict[str, bool] = {}
    review_by_bot = dismissed = False
    for event in events:
        kind = event.get("event")
        name = (event.get("label") or {}).get("name")
        actor = event.get("actor") or {}
        by_bot = is_bot_account(str(actor.get("login") or ""), actor.get("type"))
        if not isinstance(name, str):
            continue
        if kind == "labeled":
            last_adder[name] = by_bot
            if name == review_label:
                review_by_bot, dismissed = by_bot, False if by_bot else dismissed
        elif kind == "unlabeled" and name == review_label and review_by_bot and not by_bot:
            dismissed = True
    return frozenset(n for n, bot in last_adder.items() if bot), dismissed


def updated_seconds_ago(issue: Mapping[str, Any], now: float) -> float | None:
    """Seconds since GitHub last changed the issue (`updated_at`), or None when it does not say."""
    return seconds_since(issue.get("updated_at"), now)


def seconds_since(stamp: Any, now: float) -> float | None:
    """Seconds from a GitHub timestamp to `now` (a timestamp without a zone is UTC), or None when it is none."""
    when = github_time(stamp)
    return None if when is None else now - when.timestamp()
