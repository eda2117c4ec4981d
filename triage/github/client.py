"""GitHub REST client: the only module that talks HTTP to GitHub.

Why it is shaped like this:
- Only additive writes exist (comment, add labels, reaction, create label). There is deliberately no method that
  removes or replaces labels, closes, edits or assigns issues, so no bug or hostile issue text can make the bot do so.
- Retries follow GitHub's rate-limit guidance (tests/contract/rest/rate-limits.json): wait `retry-after` seconds,
  else until `x-ratelimit-reset`, else at least a minute for secondary limits, else exponential backoff; and give
  up quickly (instead of sleeping for an hour inside a CI job) when the wait exceeds `max_wait`.
- Creating a comment is not idempotent: after a 5xx/timeout GitHub may or may not have stored it, so it is only
  retried when a dedupe marker lets us look first. Rate-limit refusals were not processed and are always safe.
- The token lives only in the session headers; it never appears in errors, logs or reprs.
"""
from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import requests

from triage import __version__
from triage.github.names import DEFAULT_API_URL, validate_repo

__all__ = ["DEFAULT_API_URL", "GitHubClient", "GitHubError", "validate_repo"]
API_VERSION = "2022-11-28"
PER_PAGE = 100
SECONDARY_LIMIT_MIN_WAIT = 60.0  # docs: "otherwise wait at least one minute before retrying"

_LINK_NEXT_RE = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
_TRANSIENT_ERRORS = (requests.ConnectionError, requests.Timeout)


class GitHubError(Exception):
    """A failed GitHub call. `status` is None when no HTTP response arrived (connection error, timeout)."""

    def __init__(self, status: int | None, method: str, path: str, message: str):
        self.status = status
        self.method = method
        self.path = path
        self.message = " ".join(str(message).split())  # one line, whatever GitHub or requests said
        super().__init__(str(self))

    def __str__(self) -> str:
        status = self.status if self.status is not None else "no response"
        return f"GitHub API {self.method} {self.path} failed ({status}): {self.message}"


class _Transient(Exception):
    """Internal: an attempt failed in a way that may succeed on retry (5xx, connection error, timeout)."""

    def __init__(self, error: GitHubError, maybe_processed: bool):
        super().__init__(str(error))
        self.error = error
        self.maybe_processed = maybe_processed  # False when GitHub cannot have acted on the request


def _error_message(response: requests.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return (response.text or response.reason or "").strip()[:200]
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:300]
    return (response.reason or "").strip()


def _is_rate_limited(response: requests.Response) -> bool:
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    headers = response.headers
    if headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers:
        return True
    return "secondary rate limit" in _error_message(response).lower()


class GitHubClient:
    def __init__(
        self,
        token: str,
        api_url: str = DEFAULT_API_URL,
        *,
        timeout: float | tuple[float, float] = (5, 30),
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait: float = 120.0,
        backoff_base: float = 1.0,
        user_agent: str = f"ptd-triage/{__version__}",
        rng: random.Random | None = None,
    ):
        if not token:
            raise ValueError("a GitHub token is required")
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.backoff_base = backoff_base
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self.request_count = 0
        self._token = token  # only for scrubbing error text; never formatted anywhere
        self._session = requests.Session()
        self._session.headers.update({
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": user_agent,
        })

    def __repr__(self) -> str:
        return f"GitHubClient(api_url={self.api_url!r}, requests={self.request_count})"

    # ---- transport ---------------------------------------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        delay = self.backoff_base * (2 ** attempt)
        return delay + self._rng.uniform(0, delay / 10)  # jitter so parallel jobs do not retry in lockstep

    def _rate_limit_wait(self, response: requests.Response, attempt: int) -> float:
        headers = response.headers
        retry_after = headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(float(retry_after), 0.0)
            except ValueError:
                pass  # an HTTP-date retry-after: fall through to the other signals
        reset = headers.get("x-ratelimit-reset")
        if headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            try:
                return max(float(reset) - self._clock(), 0.0) + 1.0  # +1 s: reset is a whole-second timestamp
            except ValueError:
                pass
        return max(SECONDARY_LIMIT_MIN_WAIT, self._backoff(attempt))

    def _url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            # Pagination links must stay on the API host: the Authorization header goes wherever we send.
            if not path_or_url.startswith(self.api_url + "/"):
                raise GitHubError(None, "GET", path_or_url.split("?")[0], "refusing to follow a link off the API host")
            return path_or_url
        return self.api_url + path_or_url

    def _message(self, response: requests.Response) -> str:
        return _error_message(response).replace(self._token, "***")  # in case a proxy echoes the request back

    def _attempt(self, method: str, target: str, params, body, path: str) -> requests.Response:
        """One HTTP exchange to `target` (a path or a pagination URL; `path` names it in errors).
        Returns a success or rate-limited response; raises _Transient or GitHubError."""
        self.request_count += 1
        try:
            response = self._session.request(method, self._url(target), params=params, json=body, timeout=self.timeout)
        except _TRANSIENT_ERRORS as exc:
            # A connect timeout means nothing was sent; anything later may have reached GitHub.
            maybe_processed = not isinstance(exc, requests.ConnectTimeout)
            raise _Transient(GitHubError(None, method, path, type(exc).__name__), maybe_processed) from None
        if response.status_code >= 500:
            raise _Transient(GitHubError(response.status_code, method, path, self._message(response)), True)
        if response.status_code >= 400 and not _is_rate_limited(response):
            raise GitHubError(response.status_code, method, path, self._message(response))
        return response

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict | None = None,
        body: Any = None,
        on_maybe_processed: Callable[[GitHubError], Any] | None = None,
    ) -> requests.Response | Any:
        """Send with retries. `on_maybe_processed`, when given, decides what to do after a failure that GitHub may
        have acted on: it returns a value to use instead (a found duplicate), or None to allow a retry. Without it,
        such failures are retried (fine for reads and idempotent writes)."""
        display_path = path.removeprefix(self.api_url).split("?")[0]
        last_error: GitHubError | None = None
        for attempt in range(self.max_retries + 1):
            try:
                response = self._attempt(method, path, params, body, display_path)
            except _Transient as transient:
                last_error = transient.error
                if transient.maybe_processed and on_maybe_processed is not None:
                    found = on_maybe_processed(transient.error)
                    if found is not None:
                        return found
                wait = self._backoff(attempt)
            else:
                if response.status_code < 400:
                    return response
                wait = self._rate_limit_wait(response, attempt)
                last_error = GitHubError(response.status_code, method, display_path,
                                         f"rate limited: {self._message(response)}")
                if wait > self.max_wait:
                    raise GitHubError(response.status_code, method, display_path,
                                      f"rate limited and GitHub asks to wait {wait:.0f}s, more than max_wait "
                                      f"{self.max_wait:.0f}s; re-run later")
            if attempt < self.max_retries:
                self._sleep(wait)
        assert last_error is not None
        raise GitHubError(last_error.status, method, display_path,
                          f"{last_error.message} (gave up after {self.max_retries + 1} attempts)")

    def _json(self, method: str, path: str, **kwargs) -> Any:
        return self._request(method, path, **kwargs).json()

    def _paginate(self, path: str, params: dict | None = None, *, limit: int | None = None,
                  items_key: str | None = None) -> Iterator[dict]:
        """Follow `Link: rel="next"`; stop after `limit` items (a budget for both time and API calls)."""
        if limit is not None and limit <= 0:
            return
        yielded = 0
        url: str | None = path
        query = dict(params or {}, per_page=PER_PAGE)
        while url:
            response = self._request("GET", url, params=query)
            query = None  # the next link already carries the query
            data = response.json()
            items = data.get(items_key, []) if items_key else data
            for item in items:
                yield item
                yielded += 1
                if limit is not None and yielded >= limit:
                    return
            match = _LINK_NEXT_RE.search(response.headers.get("Link", ""))
            url = match.group(1) if match else None

    @staticmethod
    def _issue_path(repo: str, number: int, suffix: str = "") -> str:
        owner, name = validate_repo(repo)
        return f"/repos/{owner}/{name}/issues/{int(number)}{suffix}"

    @staticmethod
    def _repo_path(repo: str, suffix: str) -> str:
        owner, name = validate_repo(repo)
        return f"/repos/{owner}/{name}{suffix}"

    # ---- reads -------------------------------------------------------------------------------------------------

    def get_issue(self, repo: str, number: int) -> dict:
        return self._json("GET", self._issue_path(repo, number))

    def list_comments(self, repo: str, number: int) -> list[dict]:
        return list(self._paginate(self._issue_path(repo, number, "/comments")))

    def list_events(self, repo: str, number: int) -> list[dict]:
        return list(self._paginate(self._issue_path(repo, number, "/events")))

    def list_timeline(self, repo: str, number: int) -> list[dict]:
        return list(self._paginate(self._issue_path(repo, number, "/timeline")))

    def list_repo_labels(self, repo: str) -> list[dict]:
        return list(self._paginate(self._repo_path(repo, "/labels")))

    def get_permission(self, repo: str, username: str) -> dict:
        """The collaborator-permission response: `permission` (admin/write/read/none) and `role_name`."""
        return self._json("GET", self._repo_path(repo, f"/collaborators/{quote(username, safe='')}/permission"))

    def search_issues(self, query: str, *, limit: int | None) -> Iterator[dict]:
        return self._paginate("/search/issues", {"q": query}, limit=limit, items_key="items")

    def list_issues(self, repo: str, *, labels: list[str] | None = None, state: str = "open",
                    limit: int | None = None) -> Iterator[dict]:
        """Issues of a repository (pull requests, which this endpoint also returns, are skipped)."""
        params: dict[str, Any] = {"state": state}
        if labels:
            params["labels"] = ",".join(labels)
        issues = (item for item in self._paginate(self._repo_path(repo, "/issues"), params)
                  if "pull_request" not in item)
        for count, issue in enumerate(issues, start=1):
            yield issue
            if limit is not None and count >= limit:
                return

    # ---- additive writes ---------------------------------------------------------------------------------------

    def create_comment(self, repo: str, number: int, body: str, *, dedupe_marker: str | None = None) -> dict:
        path = self._issue_path(repo, number, "/comments")

        def after_uncertain_failure(error: GitHubError) -> dict | None:
            if dedupe_marker is None:
                raise GitHubError(error.status, error.method, error.path,
                                  f"{error.message}; the comment may or may not have been posted, not retrying")
            for comment in self.list_comments(repo, number):
                if dedupe_marker in (comment.get("body") or ""):
                    return comment
            return None

        result = self._request("POST", path, body={"body": body}, on_maybe_processed=after_uncertain_failure)
        return result if isinstance(result, dict) else result.json()

    def add_labels(self, repo: str, number: int, labels: list[str]) -> list[dict]:
        """Add (never replace) labels; idempotent, so safe to retry."""
        if not labels:
            raise ValueError("add_labels needs at least one label")
        return self._json("POST", self._issue_path(repo, number, "/labels"), body={"labels": list(labels)})

    def add_reaction(self, repo: str, comment_id: int, content: str = "eyes") -> dict:
        return self._json("POST", self._repo_path(repo, f"/issues/comments/{int(comment_id)}/reactions"),
                          body={"content": content})

    def create_label(self, repo: str, name: str, color: str, description: str) -> dict:
        return self._json("POST", self._repo_path(repo, "/labels"),
                          body={"name": name, "color": color.lstrip("#"), "description": description})
