"""The simulated world: the GitHub stand-in with timestamps a timeline can age, and what people do to issues.

`SimGitHub` is the stand-in unchanged except for two things a queue's life needs:
- time: timestamps are the wall clock (so the Action's "updated in the last few minutes" check means what it
  means on GitHub), and `age(seconds)` moves everything already recorded into the past, which is how "six hours
  pass before the next sweep" happens in milliseconds;
- death: `kill_after(n)` lets the next n requests take effect and then answers nothing at all, which is what
  GitHub sees of a runner killed after its n-th request (the run's client gives up; nothing else reaches GitHub).

People act on issues the way GitHub records it: adding or removing a label writes a `labeled`/`unlabeled` issue
event with the person as actor and bumps `updated_at`; a comment bumps the count and `updated_at`.

May import: the standard library, `fakegithub`.
"""
from __future__ import annotations

import copy
import threading
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from fakegithub.server import FakeGitHub

STAMP = "%Y-%m-%dT%H:%M:%SZ"


def _shift(value: Any, seconds: float) -> Any:
    """Every `*_at` ISO timestamp inside `value` (dicts and lists, in place) moved `seconds` into the past."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("_at") and isinstance(item, str):
                try:
                    when = datetime.strptime(item, STAMP).replace(tzinfo=timezone.utc)
                except ValueError:
                    continue
                value[key] = (when - timedelta(seconds=seconds)).strftime(STAMP)
            else:
                _shift(item, seconds)
    elif isinstance(value, list):
        for item in value:
            _shift(item, seconds)
    return value


class SimGitHub(FakeGitHub):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._death = threading.Lock()
        self._allowed: int | None = None  # requests that may still take effect before the "process" dies
        self._dying: str | None = None  # only the run using this token dies (None: any request counts)
        self.dropped = 0
        # Called after each request took effect, with (method, path): lets a test make something happen
        # "between two requests of a run" (another run's write, a person's click) deterministically.
        self.on_request = None

    # ---- time --------------------------------------------------------------------------------------------------

    def _now(self) -> str:
        return datetime.now(timezone.utc).strftime(STAMP)

    def age(self, seconds: float) -> None:
        """Let `seconds` pass: everything recorded so far happened that much earlier."""
        if seconds <= 0:
            return
        with self._lock:
            for repo in self._repos.values():
                for issue in repo.issues.values():
                    # comments and events are shared with the timeline list: shift each object once
                    seen: set[int] = set()
                    for obj in [issue.obj, *issue.comments, *issue.events, *issue.timeline]:
                        if id(obj) not in seen:
                            seen.add(id(obj))
                            _shift(obj, seconds)
                for reactions in [*repo.reactions.values(), *repo.issue_reactions.values()]:
                    for obj in reactions:  # a comment claim gets old too (triage.service.claim)
                        _shift(obj, seconds)
            for _, snapshot in self._search_index.values():
                _shift(snapshot, seconds)
            for _, _, _, _, snapshot in self._pending_index:
                _shift(snapshot, seconds)
            # the lagging index counts clock time too
            self._pending_index = [(at - seconds, *rest) for at, *rest in self._pending_index]

    def _op_issues_get(self, repo, params, **kwargs):
        # GitHub answers with the issue as it was when asked: a copy, so a write that lands while the answer is
        # on its way (another run's, in `on_request`) does not show up in it.
        status, headers, obj = super()._op_issues_get(repo, params, **kwargs)
        return status, headers, copy.deepcopy(obj)

    # ---- a run that dies ---------------------------------------------------------------------------------------

    def kill_after(self, requests: int | None, *, token: str | None = None) -> None:
        """The next `requests` requests take effect; after that the runner is gone and nothing reaches GitHub.
        None: alive again (the next run). `token`: only the run sending that token dies (two runs at once, of one
        account, each with its own token); the other's requests are neither counted nor dropped."""
        with self._death:
            self._allowed, self._dying = requests, token

    def handle(self, method, raw_path, headers, raw_body):
        with self._death:
            _, _, sent = (headers.get("Authorization") or "").partition(" ")
            if self._allowed is not None and (self._dying is None or sent.strip() == self._dying):
                if self._allowed <= 0:
                    self.dropped += 1
                    return -1, {}, None, True
                self._allowed -= 1
        answer = super().handle(method, raw_path, headers, raw_body)
        if self.on_request is not None:
            self.on_request(method, urlsplit(raw_path).path.rstrip("/"))
        return answer

    # ---- people ------------------------------------------------------------------------------------------------

    def person_adds_label(self, repo: str, number: int, label: str, actor: str, *, actor_type: str = "User") -> bool:
        with self._lock:
            issue = self._issue(repo, number)
            if any(l["name"] == label for l in issue.obj["labels"]):
                return False
            label_obj = self.add_label(repo, label)
            issue.obj["labels"].append(dict(label_obj))
            self._record_label_event(repo, number, label_obj, "labeled", self.add_user(actor, user_type=actor_type))
            return True

    def person_removes_label(self, repo: str, number: int, label: str, actor: str) -> bool:
        with self._lock:
            issue = self._issue(repo, number)
            kept = [l for l in issue.obj["labels"] if l["name"] != label]
            if len(kept) == len(issue.obj["labels"]):
                return False
            issue.obj["labels"] = kept
            self._record_label_event(repo, number, self.add_label(repo, label), "unlabeled", self.add_user(actor))
            return True

    def label_adders(self, repo: str, number: int) -> dict[str, str]:
        """label -> login of whoever added it last (for the labels the issue carries now)."""
        current = set(self.issue_labels(repo, number))
        adders: dict[str, str] = {}
        for event in self.events(repo, number):
            name = event["label"]["name"]
            if event["event"] == "labeled":
                adders[name] = event["actor"]["login"]
        return {name: who for name, who in adders.items() if name in current}
