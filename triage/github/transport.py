"""The GitHub REST client's transport: every HTTP exchange with GitHub goes through `GitHubTransport._request`.
`triage.github.client.GitHubClient` builds the endpoints on it.

Why it is shaped like this:
- Every retry decision is a pure function in `triage.http.decisions`, and every retry goes through the one loop in
  `triage.http.retry` (GitHub's order: `retry-after`, then `x-ratelimit-reset`, then a minute for secondary
  limits, then backoff; give up instead of sleeping past `max_wait` or the deadline).
- Every request has a connect and a read timeout, both cut to what is left of the current deadline
  (`with client.deadline(seconds):`), so one stalled issue ends as `BudgetExhausted` and a sweep goes on.
- The primary budget is read from the `x-ratelimit-*` headers of every response (`client.rate`); once the reserve
  (`min_remaining`, or more within `with client.reserve(n):`) is reached, calls raise `BudgetExhausted` with nothing
  sent (unless the window resets within `max_wait`), so a sweep stops cleanly with what is left reported.
- Content-creating requests are paced under GitHub's secondary limits (`WritePacer`); reads are not.
- A failure GitHub may have acted on (a timeout, a 5xx) is retried only when the caller says how to look first
  (`on_maybe_processed`); rate-limit refusals were not processed and are always safe to retry.
- Pagination links are followed only on the API host (the Authorization header goes wherever we send), and never
  back to a page already read (nor on from a page that repeats one): a self-linking page would read on forever.
- A read-only client (`read_only=True`: a dry run, plan mode, shadow mode) refuses every request that is not a GET
  or HEAD with `ReadOnly`, before anything is sent: the second line of defence behind the executor, which in those
  modes holds no client at all.
- The token lives only in the session headers; errors are scrubbed of it when built; it is in no repr.

Imports: requests, `triage.http` (decisions, errors, retry loop, pacer), `triage.github.names` and `triage`'s
version.
"""
from __future__ import annotations

import hashlib
import random
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import requests

from triage import __version__
from triage.github.names import DEFAULT_API_URL, validate_repo
from triage.http.decisions import Backoff, RateInfo, next_page, rate_from_headers
from triage.http.errors import BadRequest, BudgetExhausted, HTTPError, ReadOnly, Transient
from triage.http.pacing import WritePacer
from triage.http.retry import Verdict, call_with_retries, retry, verdict_for_status

API_VERSION = "2022-11-28"
PER_PAGE = 100
SERVICE = "GitHub API"
DEFAULT_TIMEOUT = (5.0, 20.0)  # (connect, read) seconds; a read timeout applies to each wait for bytes
_TRANSPORT_ERRORS = (requests.ConnectionError, requests.Timeout)


def _wrong_address(exc: BaseException) -> str | None:
    """Why nothing can ever answer at the API URL, or None when a retry may help: the connection was refused
    (ECONNREFUSED: nothing listens there) or the host name does not exist (EAI_NONAME; a resolver that is only
    failing for now says EAI_AGAIN, which is retried). Found through requests' and urllib3's wrappers."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, ConnectionRefusedError):
            return "connection refused by"
        if isinstance(item, socket.gaierror) and item.errno == socket.EAI_NONAME:
            return "no such host name:"
        todo += [item.__cause__, item.__context__, getattr(item, "reason", None), *item.args]
    return None


def _page_key(url: str) -> str:
    """A page's URL with its query in a canonical order: the same page however its link spells the query."""
    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path.rstrip('/')}?{urlencode(sorted(parse_qsl(parts.query)))}"


class GitHubTransport:
    """The HTTP side of the client: the session, the budgets (deadline, rate-limit reserve, write pacing), the
    retry loop and pagination. `GitHubClient` adds the endpoints."""

    def __init__(
        self,
        token: str,
        api_url: str = DEFAULT_API_URL,
        *,
        timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait: float = 120.0,
        backoff_base: float = 1.0,
        user_agent: str = f"ptd-triage/{__version__}",
        rng: random.Random | None = None,
        min_remaining: int = 0,
        writes_per_minute: int = 60,
        writes_per_hour: int = 450,
        read_only: bool = False,
    ):
        if not token:
            raise ValueError("a GitHub token is required")
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.min_remaining = min_remaining
        self.read_only = read_only  # refuse every write, nothing sent (see the module's docstring)
        self.scoped_reserve = 0  # see reserve()
        self.deadline_at: float | None = None  # absolute clock() time; see deadline()
        self._sleep = sleep
        self._clock = clock
        self._backoff = Backoff(base=backoff_base, rng=rng or random.Random())
        self.pacer = WritePacer(per_minute=writes_per_minute, per_hour=writes_per_hour, clock=clock, sleep=sleep,
                                max_wait=max_wait, service=SERVICE)
        self.request_count = 0
        self.requests_by_kind = {"read": 0, "write": 0, "search": 0}
        self.rates: dict[str, RateInfo] = {}  # resource ("core", "search") -> the last headers' view of it
        self._token = token  # only for scrubbing error text; never formatted anywhere
        self._session = requests.Session()
        self._session.headers.update({
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": user_agent,
        })

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"{type(self).__name__}(api_url={self.api_url!r}, requests={self.request_count}{mode})"

    # ---- budget ------------------------------------------------------------------------------------------------

    @property
    def rate(self) -> RateInfo | None:
        """The core budget (remaining, limit, reset, used) as GitHub last reported it; None before any answer."""
        return self.rates.get("core")

    @contextmanager
    def deadline(self, seconds: float | None):
        """Within the block, no call of this client runs (or waits) past `seconds` from now: it raises
        `BudgetExhausted` instead. Nested deadlines keep the earlier one."""
        previous = self.deadline_at
        if seconds is not None:
            at = self._clock() + max(seconds, 0.0)
            self.deadline_at = at if previous is None else min(previous, at)
        try:
            yield self
        finally:
            self.deadline_at = previous

    @contextmanager
    def reserve(self, requests: int):
        """Within the block, calls leave at least `requests` of the budget unused (or `min_remaining`, if larger):
        a sweep keeps a reserve for the event runs after it without changing the client for whoever uses it next.
        Nested reserves keep the larger one."""
        previous = self.scoped_reserve
        self.scoped_reserve = max(previous, requests)
        try:
            yield self
        finally:
            self.scoped_reserve = previous

    def room_for(self, requests: int, writes: int) -> None:
        """Before an issue's writes (`writes` of them among `requests` calls): `BudgetExhausted`, nothing sent,
        unless all of them fit — above the rate-limit reserve and under write pacing, without a wait past the
        deadline or `max_wait`. An issue is then written whole or not at all: a sweep that runs out stops
        cleanly before an issue, never between its comment and its labels (a failed issue, a red run)."""
        now = self._clock()
        wait = max(self.pacer.wait_for(writes, now) if writes else 0.0, self._reserve_wait(self.rate, requests, now))
        if wait > 0 and not self._may_wait(wait, now):
            raise self._error(BudgetExhausted, None, "POST", "(the issue's writes)",
                              f"{writes} writes in {requests} requests would wait {wait:.0f}s (write pacing "
                              f"{self.pacer.per_minute}/min, {self.pacer.per_hour}/h; reserve {self._reserve()}), "
                              "past the deadline; nothing sent")

    def _reserve(self) -> int:
        return max(self.min_remaining, self.scoped_reserve)

    def _reserve_wait(self, rate: RateInfo | None, requests: int, now: float, reserve: int | None = None) -> float:
        """Seconds until `requests` more calls leave the reserve (`reserve`, default the core budget's) untouched:
        0 when they do now (or the window has reset since GitHub's last answer), else until the window resets (a
        whole-second timestamp)."""
        keep = self._reserve() if reserve is None else reserve
        if rate is None or rate.remaining - requests >= keep or now >= rate.reset:
            return 0.0
        return rate.reset - now + 1.0

    def _may_wait(self, wait: float, now: float) -> bool:
        """Whether a wait of `wait` seconds is one to take: within `max_wait` and not past the deadline."""
        return wait <= self.max_wait and (self.deadline_at is None or now + wait <= self.deadline_at)

    def stats(self) -> dict[str, Any]:
        """What this client spent: requests by kind, the last known budget, seconds waited for write pacing."""
        rate = self.rate
        return {"requests": self.request_count, **self.requests_by_kind,
                "rate_remaining": rate.remaining if rate else None, "rate_limit": rate.limit if rate else None,
                "rate_reset": rate.reset if rate else None, "pacing_wait_s": round(self.pacer.waited, 3)}

    # ---- transport ---------------------------------------------------------------------------------------------

    def _error(self, cls: type[HTTPError], status: int | None, method: str, path: str, message: str,
               **kwargs) -> HTTPError:
        return cls(status, method, path, message, service=SERVICE, secrets=(self._token,), **kwargs)

    def _url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            # Pagination links must stay on the API host: the Authorization header goes wherever we send.
            if not path_or_url.startswith(self.api_url + "/"):
                raise self._error(BadRequest, None, "GET", urlsplit(path_or_url).path or "/",
                                  "refusing to follow a link off the API host")
            return path_or_url
        return self.api_url + path_or_url

    def _timeouts(self, method: str, path: str) -> tuple[float, float]:
        connect, read = self.timeout if isinstance(self.timeout, tuple) else (self.timeout, self.timeout)
        if self.deadline_at is None:
            return connect, read
        left = self.deadline_at - self._clock()
        if left <= 0:
            raise self._error(BudgetExhausted, None, method, path, "the deadline passed; nothing sent")
        return min(connect, left), min(read, left)

    def _check_reserve(self, kind: str, method: str, path: str) -> None:
        """Before sending: when the budget is down to the reserve, wait for the window to reset if that is soon
        (and within the deadline), else refuse with nothing sent."""
        rate = self.rates.get("search" if kind == "search" else "core")
        now = self._clock()
        # The reserve is kept in the hourly core budget, which the event runs after a sweep spend; the search
        # budget (30 a minute) is only waited for once it is spent: a reserve of 50 in it would wait every time.
        wait = self._reserve_wait(rate, 1, now, 0 if kind == "search" else None)
        if wait <= 0:
            return
        if self._may_wait(wait, now):
            self._sleep(wait)
            return
        raise self._error(BudgetExhausted, None, method, path,
                          f"rate-limit reserve reached: {rate.remaining} of {rate.limit} {rate.resource} requests "
                          f"left (reserve {self._reserve()}), window resets in {wait:.0f}s; nothing sent")

    def _send(self, method: str, target: str, params, body, path: str, kind: str) -> requests.Response:
        """One HTTP exchange (the retry loop's `send`)."""
        url = self._url(target)
        self._check_reserve(kind, method, path)
        if kind == "write":
            self.pacer.acquire(deadline=self.deadline_at, what=f"{method} {path}")
        timeout = self._timeouts(method, path)
        self.request_count += 1
        self.requests_by_kind[kind] += 1
        response = self._session.request(method, url, params=params, json=body, timeout=timeout)
        rate = rate_from_headers(response.headers)
        if rate is not None:
            self.rates[rate.resource] = rate
        return response

    def _transport_verdict(self, method: str, path: str) -> Callable[[BaseException], Verdict]:
        def verdict(exc: BaseException) -> Verdict:
            if not isinstance(exc, _TRANSPORT_ERRORS):
                raise exc  # our own refusals (budget, off-host link) and bugs are not retried
            wrong = _wrong_address(exc)
            if wrong:  # a wrong API URL, not a blip: retrying only makes it slow (about 33 s)
                raise self._error(Transient, None, method, path,
                                  f"{wrong} {urlsplit(self.api_url).netloc}: is the API URL right?")
            # A connect timeout means nothing was sent; anything later may have reached GitHub.
            maybe_processed = not isinstance(exc, requests.ConnectTimeout)
            return retry(self._error(Transient, None, method, path, type(exc).__name__),
                         maybe_processed=maybe_processed)
        return verdict

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict | None = None,
        body: Any = None,
        on_maybe_processed: Callable[[BaseException], Any] | None = None,
    ) -> requests.Response | Any:
        """Send with retries. `on_maybe_processed`, when given, decides what to do after a failure that GitHub may
        have acted on: it returns a value to use instead (a found duplicate), or None to allow a retry. Without it,
        such failures are retried (fine for reads and idempotent writes)."""
        display_path = urlsplit(path.removeprefix(self.api_url)).path or "/"
        kind = "write" if method not in ("GET", "HEAD") else "search" if display_path.startswith("/search/") \
            else "read"
        if kind == "write" and self.read_only:
            raise self._error(ReadOnly, None, method, display_path, "this client is read-only (a dry run, plan or "
                              "shadow mode): no write is ever sent")

        def decide(response: requests.Response, attempt: int) -> Verdict:
            return verdict_for_status(response.status_code, response.headers, response.content, attempt=attempt,
                                      now=self._clock(), backoff=self._backoff, method=method, path=display_path,
                                      service=SERVICE, secrets=(self._token,), reason=response.reason,
                                      value=response)

        return call_with_retries(
            lambda: self._send(method, path, params, body, display_path, kind), decide,
            sleep=self._sleep, clock=self._clock, max_retries=self.max_retries, max_wait=self.max_wait,
            deadline=self.deadline_at, backoff=self._backoff,
            on_transport_error=self._transport_verdict(method, display_path),
            on_maybe_processed=on_maybe_processed, what=f"{method} {display_path}")

    def _json(self, method: str, path: str, **kwargs) -> Any:
        return self._request(method, path, **kwargs).json()

    def _paginate(self, path: str, params: dict | None = None, *, limit: int | None = None,
                  items_key: str | None = None) -> Iterator[dict]:
        """Follow `Link: rel="next"`; stop after `limit` items (a budget for both time and API calls). A next link
        to a page already read, or a page whose body repeats one already read, is refused (`BadRequest`): a page
        that links to itself (or a ring of them) would otherwise be read until the budget runs out."""
        if limit is not None and limit <= 0:
            return
        yielded = 0
        url: str | None = path
        query = dict(params or {}, per_page=PER_PAGE)
        seen_urls: set[str] = set()
        seen_bodies: set[bytes] = set()
        while url:
            response = self._request("GET", url, params=query)
            query = None  # the next link already carries the query
            seen_urls.add(_page_key(response.url or self._url(url)))
            digest = hashlib.sha256(response.content or b"").digest()
            if digest in seen_bodies:
                raise self._error(BadRequest, response.status_code, "GET", urlsplit(url).path or "/",
                                  f"page {len(seen_urls)} repeats a page already read; refusing to read on")
            seen_bodies.add(digest)
            data = response.json()
            items = (data.get(items_key, []) if isinstance(data, dict) else None) if items_key else data
            if not isinstance(items, list):
                raise self._error(BadRequest, response.status_code, "GET", urlsplit(url).path or "/",
                                  f"page {len(seen_urls)} is not a list of items")
            for item in items:
                yield item
                yielded += 1
                if limit is not None and yielded >= limit:
                    return
            url = next_page(response.headers)
            if url is not None and _page_key(self._url(url)) in seen_urls:
                raise self._error(BadRequest, response.status_code, "GET", urlsplit(url).path or "/",
                                  f"page {len(seen_urls)} links to a page already read; refusing to read it again")

    @staticmethod
    def _issue_path(repo: str, number: int, suffix: str = "") -> str:
        owner, name = validate_repo(repo)
        return f"/repos/{owner}/{name}/issues/{int(number)}{suffix}"

    @staticmethod
    def _repo_path(repo: str, suffix: str) -> str:
        owner, name = validate_repo(repo)
        return f"/repos/{owner}/{name}{suffix}"
