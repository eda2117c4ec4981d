"""The issue as the planner sees it: an immutable snapshot built from whatever JSON we were handed.

Accepted shapes (all are what GitHub or our own tools emit, so users can pipe them in unchanged):
- a GitHub REST issue object (`GET /repos/{o}/{r}/issues/{n}`);
- a snapshot `{"issue": {...}, "comments": [...]}` with REST comment objects;
- an Actions event payload (`issues`, `issue_comment`), which carries `issue` at the top level;
- a line of the eval dataset: a snapshot with extra keys (`id`, `chunk`, `gold`), which are ignored here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class InputError(ValueError):
    """The input is not an issue we can plan; the message is one line and names what is wrong."""


@dataclass(frozen=True)
class Comment:
    id: int | None
    author: str
    author_type: str  # "User", "Bot", "Organization"
    body: str


@dataclass(frozen=True)
class IssueSnapshot:
    number: int
    title: str
    body: str
    labels: tuple[str, ...]
    comments: tuple[Comment, ...] = field(default_factory=tuple)
    author: str = ""
    is_pull_request: bool = False
    state: str = "open"
    comment_count: int = 0

    def has_label(self, name: str) -> bool:
        return name in self.labels


def _label_names(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError("issue.labels must be a list")
    names: list[str] = []
    for item in raw:
        # REST gives objects; some tools (and GitHub's search highlights) give bare strings.
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name:
            raise InputError("issue.labels holds an item without a name")
        if name not in names:
            names.append(name)
    return tuple(names)


def _login(user: Any) -> tuple[str, str]:
    if isinstance(user, dict):
        return str(user.get("login") or ""), str(user.get("type") or "User")
    return "", "User"


def comment_from_json(obj: Any) -> Comment:
    if not isinstance(obj, dict):
        raise InputError("a comment must be a JSON object")
    body = obj.get("body")
    if body is not None and not isinstance(body, str):
        raise InputError("comment.body must be a string or null")
    login, kind = _login(obj.get("user"))
    cid = obj.get("id")
    return Comment(id=cid if isinstance(cid, int) else None, author=login, author_type=kind, body=body or "")


def _issue_object(obj: dict) -> dict:
    """Find the REST issue inside any accepted wrapper."""
    if "issue" in obj:
        issue = obj["issue"]
        if not isinstance(issue, dict):
            raise InputError("'issue' must be a JSON object")
        return issue
    if "number" in obj and "title" in obj:
        return obj
    raise InputError("not an issue: expected a REST issue object, a snapshot with 'issue', or an event payload")


def snapshot_from_json(obj: Any, comments: list[dict] | None = None) -> IssueSnapshot:
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object")
    issue = _issue_object(obj)
    number = issue.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError("issue.number must be a positive integer")
    title = issue.get("title")
    if not isinstance(title, str):
        raise InputError("issue.title must be a string")
    body = issue.get("body")
    if body is not None and not isinstance(body, str):
        raise InputError("issue.body must be a string or null")

    raw_comments = comments if comments is not None else obj.get("comments") if "issue" in obj else None
    if raw_comments is not None and not isinstance(raw_comments, list):
        raise InputError("'comments' must be a list of comment objects")
    parsed = tuple(comment_from_json(c) for c in raw_comments or ())

    count = issue.get("comments")
    login, _ = _login(issue.get("user"))
    return IssueSnapshot(
        number=number,
        title=title,
        body=body or "",
        labels=_label_names(issue.get("labels")),
        comments=parsed,
        author=login,
        is_pull_request="pull_request" in issue and issue.get("pull_request") is not None,
        state=str(issue.get("state") or "open"),
        comment_count=count if isinstance(count, int) and not isinstance(count, bool) else len(parsed),
    )
