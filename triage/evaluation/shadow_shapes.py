"""What shadow accepts from GitHub (and from its own cache): the shapes of a search result's issue and of a
timeline, checked before anything is rebuilt from them. Each check returns the first problem in words (naming the
field or the item), or None.

GitHub documents these shapes; an answer that breaks them (a proxy's page, a changed API, a hostile stand-in, a
cache file someone edited) must cost the issue it belongs to, with one line saying why, and never the run: the
rebuild (`triage.evaluation.history`) and the planner then only ever see the fields they read in the types they
expect. Only what shadow reads is checked: a timeline item of a kind it does not read need only be an object.

Pure. May import: the standard library.
"""

from __future__ import annotations

import re
from typing import Any

# GitHub's timestamps: ISO 8601, UTC, whole seconds. Compared as strings (the window, the cut-offs), so the shape
# must be exactly this.
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
LABEL_EVENTS = ("labeled", "unlabeled")


def _stamp(value: Any) -> bool:
    return isinstance(value, str) and STAMP.fullmatch(value) is not None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _account(value: Any) -> bool:
    """A user or actor: null (a deleted account) or an object whose login, when given, is a string."""
    if value is None:
        return True
    return isinstance(value, dict) and isinstance(value.get("login", ""), (str, type(None))) \
        and isinstance(value.get("type", ""), (str, type(None)))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def issue_problem(item: Any) -> str | None:
    """Why a search result is not an issue shadow can rebuild, or None."""
    if not isinstance(item, dict):
        return f"is not an object ({_kind(item)})"
    if not _count(item.get("number")):
        return f"has no issue number ({_kind(item.get('number'))})"
    if "pull_request" in item:
        return "is a pull request"
    if not isinstance(item.get("title"), str):
        return f"has no title ({_kind(item.get('title'))})"
    if not isinstance(item.get("body"), (str, type(None))):
        return f"has a body that is not text ({_kind(item.get('body'))})"
    for key in ("created_at", "updated_at"):
        if not _stamp(item.get(key)):
            return f"has no {key} timestamp ({_kind(item.get(key))})"
    labels = item.get("labels", [])
    if not isinstance(labels, list):
        return f"has labels that are not a list ({_kind(labels)})"
    for index, label in enumerate(labels):
        if not (isinstance(label, str) or isinstance(label, dict) and isinstance(label.get("name"), str)):
            return f"has a label (item {index}) with no name"
    if not _account(item.get("user")):
        return "has a user that is not an account"
    if not isinstance(item.get("html_url", ""), (str, type(None))):
        return "has an html_url that is not text"
    return None


def timeline_problem(timeline: Any) -> str | None:
    """Why a timeline cannot be read back (see the module doc), or None."""
    if not isinstance(timeline, list):
        return f"is not a list ({_kind(timeline)})"
    for index, item in enumerate(timeline):
        problem = _item_problem(item)
        if problem:
            return f"item {index} {problem}"
    return None


def _item_problem(item: Any) -> str | None:
    if not isinstance(item, dict):
        return f"is not an object ({_kind(item)})"
    event = item.get("event")
    if not isinstance(event, (str, type(None))):
        return f"has an event name that is not text ({_kind(event)})"
    if event in LABEL_EVENTS:
        label = item.get("label")
        if not isinstance(label, dict) or not isinstance(label.get("name"), str):
            return f"({event}) names no label"
        if not _stamp(item.get("created_at")):
            return f"({event}) has no created_at timestamp"
        if not _account(item.get("actor")):
            return f"({event}) has an actor that is not an account"
    elif event == "commented":
        if not _stamp(item.get("created_at")):
            return "(commented) has no created_at timestamp"
        if item.get("updated_at") is not None and not _stamp(item.get("updated_at")):
            return "(commented) has an updated_at that is not a timestamp"
        if not isinstance(item.get("body"), (str, type(None))):
            return f"(commented) has a body that is not text ({_kind(item.get('body'))})"
        if not _account(item.get("user")) or not _account(item.get("actor")):
            return "(commented) has an author that is not an account"
    return None
