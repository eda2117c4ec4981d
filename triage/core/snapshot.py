"""The issue as the planner sees it: an immutable snapshot built from whatever JSON we were handed.

Accepted shapes (all are what GitHub or our own tools emit, so users can pipe them in unchanged):
- a GitHub REST issue object (`GET /repos/{o}/{r}/issues/{n}`);
- a snapshot `{"issue": {...}, "comments": [...]}` with REST comment objects;
- an Actions event payload (`issues`, `issue_comment`), which carries `issue` at the top level;
- a line of the eval dataset: a snapshot with extra keys (`id`, `chunk`, `gold`), which are ignored here.

Issue text is hostile, so the snapshot is where it is made safe, before anything reads it:
- bounded to GitHub's own limits, so a 10 MB body costs what a 64 KB one does: the title to 256
  characters, the body and each comment to 65,536 (what GitHub accepts); of the comments by people,
  the first `max_comments` (100 by default) in the order they were written, and no more than
  `MAX_COMMENT_TEXT` characters of them in all. Comments by bot accounts are all kept (clipped too):
  they are never matched, and they carry the markers of templates already posted. What was clipped
  is recorded in `IssueSnapshot.clipped`, so a reason can say so.
- each comment keeps who wrote it: the login, the account type and GitHub's `author_association` (OWNER, MEMBER,
  COLLABORATOR, CONTRIBUTOR, NONE, ...), from which `triage.core.authors` tells the reporter, a maintainer and
  anyone else apart (what lowers a criterion counts only from the first two);
- every string (title, body, comment bodies, logins, label names, state) is valid Unicode: a lone
  surrogate, which JSON allows and UTF-8 cannot encode, becomes U+FFFD, so no output, log line or
  encoder downstream can fail on it.

May import: the standard library and `triage.github.names`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from triage.github.names import is_bot_account


class InputError(ValueError):
    """The input is not an issue we can plan; the message is one line and names what is wrong."""


TITLE_LIMIT = 256  # GitHub's limit for an issue title
TEXT_LIMIT = 65_536  # GitHub's limit for an issue body and for a comment body
MAX_COMMENTS = 100  # comments by people read per issue, the first ones (configurable per call)
# All the text of the comments by people that is read: four full-size comments' worth. Planning costs
# time in proportion to the text (up to about 1.5 ms of CPU per KB of hostile text: bench/redos.py), and
# the first comments are where reproductions and corrections arrive; a long thread's tail adds little.
MAX_COMMENT_TEXT = 4 * TEXT_LIMIT
_ISSUE_NOTES = ("title clipped", "body clipped")  # what `clipped` says about the issue itself, not its comments

# Lone surrogates (U+D800-U+DFFF) are the only code points a Python str can hold that UTF-8 cannot encode.
_SURROGATES = dict.fromkeys(range(0xD800, 0xE000), "\ufffd")


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD; one for one, so lengths are kept."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(_SURROGATES)
    return text


def _bounded(text: str, limit: int) -> tuple[str, bool]:
    """Clip first, then clean: the clean-up then costs what the limit allows, whatever was sent."""
    return clean_text(text[:limit]), len(text) > limit


@dataclass(frozen=True)
class Comment:
    id: int | None
    author: str
    author_type: str  # "User", "Bot", "Organization"
    body: str
    association: str = ""  # GitHub's author_association of the comment ("" when the source did not say)

    @property
    def by_bot(self) -> bool:
        return is_bot_account(self.author, self.author_type)


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
    # Labels on the issue whose latest `labeled` event was by a bot account (this one included), when the caller
    # read the issue's label events; step 0 does not count them as a human's classification.
    labels_added_by_bots: frozenset[str] = frozenset()
    # A person removed the review label after a bot had added it: they looked at a flag and dismissed it.
    review_dismissed: bool = False
    history_read: bool = False  # the two fields above come from the issue's label events
    # What was clipped to keep the work per issue bounded (see the module docstring), in words; empty if nothing.
    clipped: tuple[str, ...] = ()

    def has_label(self, name: str) -> bool:
        return name in self.labels

    def with_comments(self, raw: Any, *, max_comments: int = MAX_COMMENTS) -> IssueSnapshot:
        """The same issue with these comments (REST comment objects) read in place of its own, within the same
        limits, so a caller that read the issue first and its comments later parses the issue once."""
        if not isinstance(raw, list):
            raise InputError("'comments' must be a list of comment objects")
        notes = [n for n in self.clipped if n.startswith(_ISSUE_NOTES)]  # the comments' own notes are read anew
        parsed = _read_comments(raw, max_comments, notes)
        return replace(self, comments=parsed, clipped=tuple(notes), comment_count=self.comment_count or len(raw))


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
        name = clean_text(name)
        if name not in names:
            names.append(name)
    return tuple(names)


def _login(user: Any) -> tuple[str, str]:
    if isinstance(user, dict):
        return clean_text(str(user.get("login") or "")), clean_text(str(user.get("type") or "User"))
    return "", "User"


def _comment(obj: Any) -> tuple[Comment, bool]:
    """The comment, and whether its body was clipped."""
    if not isinstance(obj, dict):
        raise InputError("a comment must be a JSON object")
    body = obj.get("body")
    if body is not None and not isinstance(body, str):
        raise InputError("comment.body must be a string or null")
    login, kind = _login(obj.get("user"))
    cid = obj.get("id")
    text, clipped = _bounded(body or "", TEXT_LIMIT)
    association = obj.get("author_association")
    association = clean_text(association[:40]).upper() if isinstance(association, str) else ""
    return Comment(id=cid if isinstance(cid, int) else None, author=login, author_type=kind, body=text,
                   association=association), clipped


def _read_comments(raw: list, max_comments: int, notes: list[str]) -> tuple[Comment, ...]:
    """All comments by bots, and the first comments by people within `max_comments` and MAX_COMMENT_TEXT."""
    kept: list[Comment] = []
    people = dropped = clipped = 0
    budget = MAX_COMMENT_TEXT
    for item in raw:
        comment, was_clipped = _comment(item)  # validates every item, kept or not
        clipped += was_clipped
        if comment.by_bot:
            kept.append(comment)
            continue
        if people >= max_comments or budget <= 0:
            dropped += 1
            continue
        people += 1
        if len(comment.body) > budget:
            comment = replace(comment, body=comment.body[:budget])
            notes.append(f"comments by people: read the first {MAX_COMMENT_TEXT:,} characters")
        budget -= len(comment.body)
        kept.append(comment)
    if clipped:
        notes.append(f"{clipped} comment{'s' if clipped > 1 else ''} clipped to {TEXT_LIMIT:,} characters")
    if dropped:
        notes.append(f"read {people} of {people + dropped} comments by people")
    return tuple(kept)


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


def snapshot_from_json(obj: Any, comments: list[dict] | None = None, *,
                       max_comments: int = MAX_COMMENTS) -> IssueSnapshot:
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
    notes: list[str] = []
    title, clipped_title = _bounded(title, TITLE_LIMIT)
    body, clipped_body = _bounded(body or "", TEXT_LIMIT)
    if clipped_title:
        notes.append(f"title clipped to {TITLE_LIMIT} characters")
    if clipped_body:
        notes.append(f"body clipped to {TEXT_LIMIT:,} characters")
    parsed = _read_comments(raw_comments or [], max_comments, notes)

    count = issue.get("comments")
    login, _ = _login(issue.get("user"))
    return IssueSnapshot(
        number=number,
        title=title,
        body=body,
        labels=_label_names(issue.get("labels")),
        comments=parsed,
        author=login,
        is_pull_request="pull_request" in issue and issue.get("pull_request") is not None,
        state=clean_text(str(issue.get("state") or "open")),
        comment_count=count if isinstance(count, int) and not isinstance(count, bool) else len(raw_comments or ()),
        clipped=tuple(notes),
    )
