"""What the triage service needs from GitHub, and nothing more (in the spirit of gidgethub's `abc.GitHubAPI`).

The service is typed against this protocol, not against the HTTP client: `triage.github.client.GitHubClient` is
one implementation (REST over HTTP, with retries, pacing and the rate-limit reserve), `tests/memory_github.py`
another (plain Python, so service tests need no server). A method here is a promise the service relies on:
- reads return GitHub's REST objects (dicts) as GitHub would; `list_*` return every item, however many pages;
- `search_page` returns one page (up to 100) of the search and GitHub's `total_count`, oldest first;
- the writes are additive only; `create_comment(..., own_login=)` after a failure GitHub may have acted on (5xx,
  timeout) takes as stored only a comment by `own_login` with exactly the body posted, and otherwise posts again
  (no login known: it does not retry); `claim_issue` is the comment claim (triage.service.claim): (True, reaction)
  to exactly one of two runs that react at once. The claim's two removals take only the bot's own:
  `release_claim` deletes one reaction of our account by id (False: already gone), `delete_own_comment` a comment
  whose author is the login given (False: already gone), the login being the bot's as configured;
- every failure is a `triage.http.errors.HTTPError`; `BudgetExhausted` means our own limit refused the call and
  nothing was sent (the service stops a sweep cleanly on it);
- `deadline(seconds)`: within the block, no call runs past `seconds` from now; `reserve(requests)`: within the
  block, calls refuse (BudgetExhausted) rather than spend the last `requests` of the hourly API budget. Both
  scope the limit to the block, so a sweep leaves the client as it found it;
- `request_count`: requests sent so far (the service reports each issue's cost).

Only the executor (triage.service.executor) calls the writes.

May import: the standard library.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol


class GitHubPort(Protocol):
    """The triage service's view of GitHub."""

    @property
    def request_count(self) -> int: ...

    def get_issue(self, repo: str, number: int) -> dict: ...

    def list_comments(self, repo: str, number: int) -> list[dict]: ...

    def list_events(self, repo: str, number: int) -> list[dict]: ...

    def search_page(self, query: str, *, sort: str = "created", order: str = "asc") -> tuple[list[dict], int]: ...

    def create_comment(self, repo: str, number: int, body: str, *, own_login: str | None = None) -> dict: ...

    def add_labels(self, repo: str, number: int, labels: list[str]) -> list[dict]: ...

    def add_reaction(self, repo: str, comment_id: int, content: str = "eyes") -> dict: ...

    def claim_issue(self, repo: str, number: int, content: str = "eyes") -> tuple[bool, dict]: ...

    def release_claim(self, repo: str, number: int, reaction_id: int) -> bool: ...

    def delete_own_comment(self, repo: str, comment: dict, login: str) -> bool: ...

    def deadline(self, seconds: float | None) -> AbstractContextManager[Any]: ...

    def reserve(self, requests: int) -> AbstractContextManager[Any]: ...

    def room_for(self, requests: int, writes: int) -> None:
        """BudgetExhausted (nothing sent) unless an issue's `requests` calls, `writes` of them writes, all fit."""


__all__ = ["GitHubPort"]
