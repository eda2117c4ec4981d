"""GitHub in memory: a plain Python implementation of the service's port (triage.service.ports.GitHubPort), so
service tests run without a server. It keeps issues, comments, label events and reactions as GitHub's REST objects,
and answers the way GitHub does where the service depends on it:
- `get_issue` is the issue as it is now (labels, comment count, `updated_at` moved by every write);
- `search_page` understands exactly the qualifiers the service sends (`repo:`, `is:issue`, `is:open`, `label:`,
  `-label:`, `created:>=`/`created:<`), sorts by `created`, returns at most 100 items and GitHub's total; any
  other query is an error, so a service change this fake does not model fails loudly instead of matching wrongly.
  With `search_lags`, the index shows the labels as they were when the issue was seeded (or at `reindex()`), as
  GitHub's index does for a while after a write;
- `add_labels` adds (never replaces) and records a `labeled` event by the bot; `claim_issue` creates the bot's
  reaction once (True) and answers the existing one after that (False);
- `budget` is the hourly request budget: within `reserve(n)` a call that would leave fewer than n requests raises
  `BudgetExhausted` with nothing sent, as the HTTP client does; a call past the budget itself is GitHub's refusal
  (`RateLimited`) and is counted in `limits_tripped`, which a careful service never causes;
- `deadline(seconds)` raises `BudgetExhausted` for a call made after the deadline on `clock`.

What people do (add an issue, label it, dismiss a flag, comment) goes through the helpers below the port, which are
not requests and cost nothing.
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Iterator

from triage.http.errors import BudgetExhausted, HTTPError, NotFound, RateLimited

BOT = "ptd-bot[bot]"
PERSON = "a-maintainer"
PAGE = 100
EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
_QUALIFIER = re.compile(r'(-?)([a-z]+):("[^"]*"|\S+)')


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Call:
    """One request the service made: the port's method and what it named (an issue number, or a query)."""

    method: str
    target: object
    write: bool = False


@dataclass
class _Issue:
    obj: dict
    comments: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    reactions: list[dict] = field(default_factory=list)
    indexed_labels: tuple[str, ...] = ()  # what a lagging search index shows


class MemoryGitHub:
    def __init__(self, *, bot_login: str = BOT, budget: int | None = None, search_lags: bool = False,
                 clock: Callable[[], float] = time.time):
        self.bot_login = bot_login
        self.budget = budget
        self.search_lags = search_lags
        self.clock = clock
        self.request_count = 0
        self.calls: list[Call] = []
        self.limits_tripped = 0
        self._issues: dict[tuple[str, int], _Issue] = {}
        self._ids = 1000
        self._reserve = 0
        self._deadline_at: float | None = None
        self._failures: dict[str, HTTPError] = {}

    # ---- the port: limits ----------------------------------------------------------------------------------------

    @contextmanager
    def deadline(self, seconds: float | None) -> Iterator[MemoryGitHub]:
        previous = self._deadline_at
        if seconds is not None:
            at = self.clock() + seconds
            self._deadline_at = at if previous is None else min(previous, at)
        try:
            yield self
        finally:
            self._deadline_at = previous

    @contextmanager
    def reserve(self, requests: int) -> Iterator[MemoryGitHub]:
        previous = self._reserve
        self._reserve = max(previous, requests)
        try:
            yield self
        finally:
            self._reserve = previous

    def room_for(self, requests: int, writes: int) -> None:
        """As the HTTP client: refuse, with nothing sent, an issue whose calls would not all fit above the reserve."""
        if self.remaining is not None and self._reserve and self.remaining - requests < self._reserve:
            raise BudgetExhausted(None, "POST", "(the issue's writes)", f"{requests} requests would pass reserve "
                                  f"{self._reserve}; nothing sent", service="memory")

    @property
    def remaining(self) -> int | None:
        return None if self.budget is None else self.budget - self.request_count

    def _send(self, method: str, target: object, *, write: bool = False) -> None:
        """Account for one request before it is answered: our own limits refuse with nothing sent (not counted);
        past the budget GitHub refuses (counted: it was sent)."""
        if self._deadline_at is not None and self.clock() >= self._deadline_at:
            raise BudgetExhausted(None, method, str(target), "the deadline passed; nothing sent", service="memory")
        if self.remaining is not None and self._reserve and self.remaining <= self._reserve:
            raise BudgetExhausted(None, method, str(target), f"reserve {self._reserve} reached; nothing sent",
                                  service="memory")
        self.request_count += 1
        self.calls.append(Call(method, target, write))
        if self.remaining is not None and self.remaining < 0:
            self.limits_tripped += 1
            raise RateLimited(403, method, str(target), "API rate limit exceeded", service="memory")
        if method in self._failures:
            raise self._failures.pop(method)

    def fail_next(self, method: str, error: HTTPError) -> None:
        """The next call of `method` is sent and answered with `error` (a 5xx, a 403, ...)."""
        self._failures[method] = error

    # ---- the port: reads -----------------------------------------------------------------------------------------

    def get_issue(self, repo: str, number: int) -> dict:
        self._send("get_issue", number)
        return _copy(self._issue(repo, number).obj)

    def list_comments(self, repo: str, number: int) -> list[dict]:
        issue = self._issue(repo, number)
        for _ in range(max(1, -(-len(issue.comments) // PAGE))):  # one request per page of 100
            self._send("list_comments", number)
        return [_copy(c) for c in issue.comments]

    def list_events(self, repo: str, number: int) -> list[dict]:
        issue = self._issue(repo, number)
        for _ in range(max(1, -(-len(issue.events) // PAGE))):
            self._send("list_events", number)
        return [_copy(e) for e in issue.events]

    def search_page(self, query: str, *, sort: str = "created", order: str = "asc") -> tuple[list[dict], int]:
        if sort != "created" or order not in ("asc", "desc"):
            raise ValueError(f"this fake sorts by created only, asc or desc (got {sort!r}, {order!r})")
        test = _search_filter(query)
        self._send("search_page", query)
        found = [i for i in self._issues.values() if test(i.obj, self._search_labels(i))]
        found.sort(key=lambda i: (i.obj["created_at"], i.obj["number"]), reverse=order == "desc")
        return [_copy(i.obj) for i in found[:PAGE]], len(found)

    def _search_labels(self, issue: _Issue) -> tuple[str, ...]:
        return issue.indexed_labels if self.search_lags else _names(issue.obj)

    # ---- the port: additive writes -------------------------------------------------------------------------------

    def create_comment(self, repo: str, number: int, body: str, *, own_login: str | None = None) -> dict:
        issue = self._issue(repo, number)
        self._send("create_comment", number, write=True)
        comment = self._comment(issue, body, self.bot_login, "Bot")
        return _copy(comment)

    def add_reaction(self, repo: str, comment_id: int, content: str = "eyes") -> dict:
        self._send("add_reaction", comment_id, write=True)
        reaction = {"id": self._next_id(), "content": content, "user": {"login": self.bot_login, "type": "Bot"},
                    "created_at": stamp(self.clock())}
        for issue in self._issues.values():
            for comment in issue.comments:
                if comment["id"] == comment_id:
                    comment.setdefault("reactions_list", []).append(reaction)
        return dict(reaction)

    def add_labels(self, repo: str, number: int, labels: list[str]) -> list[dict]:
        if not labels:
            raise ValueError("add_labels needs at least one label")
        issue = self._issue(repo, number)
        self._send("add_labels", number, write=True)
        self._label(issue, labels, self.bot_login, "Bot")
        return [dict(label) for label in issue.obj["labels"]]

    def claim_issue(self, repo: str, number: int, content: str = "eyes") -> tuple[bool, dict]:
        issue = self._issue(repo, number)
        self._send("claim_issue", number, write=True)
        for reaction in issue.reactions:
            if reaction["content"] == content and reaction["user"]["login"] == self.bot_login:
                return False, _copy(reaction)
        reaction = self.react(number, content, login=self.bot_login, repo=repo)
        return True, _copy(reaction)

    def release_claim(self, repo: str, number: int, reaction_id: int) -> bool:
        issue = self._issue(repo, number)
        self._send("release_claim", number, write=True)
        kept = [r for r in issue.reactions if not (r["id"] == reaction_id and r["user"]["login"] == self.bot_login)]
        gone, issue.reactions = len(kept) < len(issue.reactions), kept
        return gone

    def delete_own_comment(self, repo: str, comment: dict, login: str) -> bool:
        if not login or (comment.get("user") or {}).get("login") != login:
            raise ValueError("refusing to delete a comment that is not ours")
        self._send("delete_own_comment", comment["id"], write=True)
        for (name, _), issue in self._issues.items():
            if name == repo and any(c["id"] == comment["id"] for c in issue.comments):
                issue.comments = [c for c in issue.comments if c["id"] != comment["id"]]
                issue.obj["comments"] = len(issue.comments)
                return True
        return False

    # ---- what people (and other runs) do: not requests -----------------------------------------------------------

    def add_issue(self, repo: str, number: int, *, title: str, body: str = "", labels=(), state: str = "open",
                  created_at: str | None = None, author: str = "reporter") -> dict:
        created = created_at or stamp(EPOCH + 60 * number)
        obj = {"id": self._next_id(), "number": number, "title": title, "body": body, "state": state,
               "labels": [{"name": n} for n in labels], "comments": 0, "created_at": created,
               "updated_at": created, "user": {"login": author, "type": "User"}, "author_association": "NONE",
               "html_url": f"https://github.com/{repo}/issues/{number}"}
        self._issues[(repo, number)] = _Issue(obj, indexed_labels=tuple(labels))
        return _copy(obj)

    def label_by_person(self, repo: str, number: int, *labels: str, login: str = PERSON) -> None:
        self._label(self._issue(repo, number), list(labels), login, "User")

    def unlabel_by_person(self, repo: str, number: int, label: str, *, login: str = PERSON) -> None:
        issue = self._issue(repo, number)
        issue.obj["labels"] = [x for x in issue.obj["labels"] if x["name"] != label]
        issue.events.append(self._event("unlabeled", label, login, "User"))
        self._touch(issue)

    def comment_by(self, repo: str, number: int, body: str, *, login: str = PERSON, kind: str = "User") -> dict:
        return self._comment(self._issue(repo, number), body, login, kind)

    def react(self, number: int, content: str = "eyes", *, login: str, repo: str,
              at: float | None = None) -> dict:
        reaction = {"id": self._next_id(), "content": content, "user": {"login": login, "type": "Bot"},
                    "created_at": stamp(self.clock() if at is None else at)}
        self._issue(repo, number).reactions.append(reaction)
        return reaction

    def reindex(self) -> None:
        """A lagging search index catches up with every write so far."""
        for issue in self._issues.values():
            issue.indexed_labels = _names(issue.obj)

    # ---- inspection ----------------------------------------------------------------------------------------------

    def labels(self, repo: str, number: int) -> list[str]:
        return list(_names(self._issue(repo, number).obj))

    def comments(self, repo: str, number: int) -> list[dict]:
        return [_copy(c) for c in self._issue(repo, number).comments]

    def issue(self, repo: str, number: int) -> dict:
        return _copy(self._issue(repo, number).obj)

    def writes(self) -> list[Call]:
        """The writes that change what people see (comments, labels); the claim reaction aside."""
        return [c for c in self.calls if c.write and c.method != "claim_issue"]

    # ---- inside --------------------------------------------------------------------------------------------------

    def _issue(self, repo: str, number: int) -> _Issue:
        try:
            return self._issues[(repo, int(number))]
        except KeyError:
            raise NotFound(404, "GET", f"/repos/{repo}/issues/{number}", "Not Found", service="memory") from None

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _touch(self, issue: _Issue) -> None:
        issue.obj["updated_at"] = stamp(self.clock())

    def _event(self, kind: str, label: str, login: str, user_type: str) -> dict:
        return {"id": self._next_id(), "event": kind, "label": {"name": label},
                "actor": {"login": login, "type": user_type}, "created_at": stamp(self.clock())}

    def _label(self, issue: _Issue, labels: list[str], login: str, user_type: str) -> None:
        have = set(_names(issue.obj))
        for name in labels:
            if name not in have:
                issue.obj["labels"].append({"name": name})
                issue.events.append(self._event("labeled", name, login, user_type))
                have.add(name)
        self._touch(issue)

    def _comment(self, issue: _Issue, body: str, login: str, user_type: str) -> dict:
        now = stamp(self.clock())
        comment = {"id": self._next_id(), "body": body, "user": {"login": login, "type": user_type},
                   "created_at": now, "updated_at": now, "author_association": "NONE"}
        issue.comments.append(comment)
        issue.obj["comments"] = len(issue.comments)
        self._touch(issue)
        return comment


def _names(obj: dict) -> tuple[str, ...]:
    return tuple(label["name"] for label in obj["labels"])


def _copy(obj: dict) -> dict:
    return {k: [dict(x) if isinstance(x, dict) else x for x in v] if isinstance(v, list)
            else dict(v) if isinstance(v, dict) else v for k, v in obj.items()}


def _search_filter(query: str) -> Callable[[dict, tuple[str, ...]], bool]:
    """The issues `query` matches, for the qualifiers the service sends; anything else is a ValueError."""
    tests: list[Callable[[dict, tuple[str, ...]], bool]] = []
    rest = _QUALIFIER.sub("", query).strip()
    if rest:
        raise ValueError(f"this fake does not search free text: {rest!r}")
    for negated, key, raw in _QUALIFIER.findall(query):
        value = raw.strip('"')
        if key == "repo" and not negated:
            tests.append(lambda obj, _, v=value: obj["html_url"].startswith(f"https://github.com/{v}/issues/"))
        elif (key, value, negated) == ("is", "issue", ""):
            tests.append(lambda obj, _: "pull_request" not in obj)
        elif key == "is" and value in ("open", "closed") and not negated:
            tests.append(lambda obj, _, v=value: obj["state"] == v)
        elif key == "label":
            tests.append(lambda _, names, v=value, n=bool(negated): (v in names) != n)
        elif key == "created" and value[:2] == ">=" and not negated:
            tests.append(lambda obj, _, v=value[2:]: obj["created_at"] >= v)
        elif key == "created" and value[:1] == "<" and value[:2] != "<=" and not negated:
            tests.append(lambda obj, _, v=value[1:]: obj["created_at"] < v)
        else:
            raise ValueError(f"this fake does not understand {negated}{key}:{raw}")
    return lambda obj, names: all(test(obj, names) for test in tests)
