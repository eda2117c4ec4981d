"""Pure HTTP decisions over `(status, headers, body)`: is it a rate limit, how long to wait, where the next page is,
what the error says, what kind of failure it is, and what the rate-limit headers tell about the budget.

Imports: the standard library only. No HTTP library and no I/O, so the GitHub client and the LLM clients (which
hold a `requests.Response`, an `http.client` response or a plain triple) can all share these rules, and the tests
can check them without a server. Header lookups are case-insensitive whatever mapping is passed (a plain dict,
requests' CaseInsensitiveDict, http.client's message).

The order of the waits follows GitHub's rate-limit guidance (tests/contract/rest/rate-limits.json): `retry-after`
first (integer seconds, or an HTTP date as RFC 9110 allows), then `x-ratelimit-reset` when `x-ratelimit-remaining`
is 0, then at least a minute for a secondary limit, then exponential backoff with jitter.
"""
from __future__ import annotations

import enum
import json
import math
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timezone
from email.utils import parsedate_to_datetime

SECONDARY_LIMIT_MIN_WAIT = 60.0  # docs: "otherwise wait at least one minute before retrying"
MAX_MESSAGE = 300  # characters of a server's error message we keep: enough to act on, never a whole page
RESET_SLACK = 1.0  # x-ratelimit-reset is a whole-second timestamp: wait one more second to be past it

Body = bytes | str | None


class ErrorKind(enum.Enum):
    OK = "ok"
    RATE_LIMITED = "rate_limited"  # 429, or 403 with a rate-limit signal: wait, then the same request may pass
    AUTH = "auth"  # 401, or 403 that is not a rate limit: the credentials or the permissions are wrong
    NOT_FOUND = "not_found"  # 404
    TRANSIENT = "transient"  # 5xx and 408: the server failed; it may or may not have acted on the request
    BAD_REQUEST = "bad_request"  # any other 4xx: our request is wrong, retrying cannot help


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """Case-insensitive lookup in any mapping of header names to values."""
    if not headers:
        return None
    value = headers.get(name)
    if value is not None:
        return value
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def _text(body: Body) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace")
    return str(body)


def _json_message(body: Body) -> tuple[str | None, list]:
    """The `message` and `errors` of a GitHub-shaped error body, (None, []) when it is not one."""
    try:
        data = json.loads(_text(body)) if body else None
    except ValueError:
        return None, []
    if not isinstance(data, dict):
        return None, []
    message = data.get("message")
    errors = data.get("errors") if isinstance(data.get("errors"), list) else []
    return (str(message) if message else None), errors


def _one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    text = " ".join(text.split())  # whatever a server or a proxy said, it becomes one line
    return text if len(text) <= limit else text[:limit - 1] + "…"


def error_message(body: Body, status: int | None, reason: str | None = None) -> str:
    """One bounded line saying what went wrong: GitHub's `message` (plus the codes of its `errors`, e.g.
    `already_exists`), else the start of the body, else the reason phrase, else the status."""
    message, errors = _json_message(body)
    if message:
        codes = [str(e.get("code") or e.get("message") or "") for e in errors[:3] if isinstance(e, dict)]
        codes = [c for c in codes if c]
        return _one_line(message + (f" ({', '.join(codes)})" if codes else ""))
    text = _one_line(_text(body), 200)
    if text and not text.lstrip().startswith("<"):  # an HTML error page says nothing useful in one line
        return text
    if reason:
        return _one_line(reason)
    return f"HTTP {status}" if status is not None else "no response"


def _mentions_secondary_limit(body: Body) -> bool:
    message, _ = _json_message(body)
    return "secondary rate limit" in (message if message is not None else _text(body)[:1000]).lower()


def is_rate_limited(status: int, headers: Mapping[str, str] | None, body: Body) -> bool:
    """429 always; 403 only with a rate-limit signal (remaining 0, a retry-after, or the secondary-limit message),
    because a plain 403 is a permission error that no wait will fix."""
    if status == 429:
        return True
    if status != 403:
        return False
    if header(headers, "x-ratelimit-remaining") == "0" or header(headers, "retry-after") is not None:
        return True
    return _mentions_secondary_limit(body)


def is_secondary_limit(status: int, headers: Mapping[str, str] | None, body: Body) -> bool:
    """A rate limit that is not the primary hourly budget running out (remaining is not 0)."""
    if not is_rate_limited(status, headers, body):
        return False
    return _mentions_secondary_limit(body) or header(headers, "x-ratelimit-remaining") != "0"


def classify(status: int, headers: Mapping[str, str] | None, body: Body) -> ErrorKind:
    if status < 400:
        return ErrorKind.OK
    if is_rate_limited(status, headers, body):
        return ErrorKind.RATE_LIMITED
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status >= 500 or status == 408:
        return ErrorKind.TRANSIENT
    return ErrorKind.BAD_REQUEST


@dataclass
class Backoff:
    """Exponential backoff with up to `jitter` (a fraction) added at random, so parallel jobs that failed together
    do not retry in lockstep. The rng is injected so tests see fixed numbers."""

    base: float = 1.0
    factor: float = 2.0
    cap: float = 300.0
    jitter: float = 0.1
    rng: random.Random | None = None

    def __call__(self, attempt: int) -> float:
        delay = min(self.base * (self.factor ** max(attempt, 0)), self.cap)
        return delay + (self.rng or random).uniform(0, delay * self.jitter)


def retry_after_seconds(value: str | None, *, now: float) -> float | None:
    """`Retry-After` as seconds to wait: an integer number of seconds or an HTTP date (RFC 9110 allows both);
    None when absent or unreadable. A date in the past means "now" (0)."""
    if value is None:
        return None
    value = value.strip()
    if re.fullmatch(r"\d{1,10}(?:\.\d+)?", value):
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # "-0000" dates parse as naive; HTTP dates are always UTC
        when = when.replace(tzinfo=timezone.utc)
    return max(when.timestamp() - now, 0.0)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def wait_seconds(status: int, headers: Mapping[str, str] | None, body: Body, *, now: float, attempt: int,
                 backoff: Callable[[int], float]) -> float:
    """How long to wait before retrying this response (see the module docstring for the order)."""
    retry_after = retry_after_seconds(header(headers, "retry-after"), now=now)
    if retry_after is not None:
        return retry_after
    reset = _number(header(headers, "x-ratelimit-reset"))
    if header(headers, "x-ratelimit-remaining") == "0" and reset is not None:
        return max(reset - now, 0.0) + RESET_SLACK
    if is_rate_limited(status, headers, body):
        return max(SECONDARY_LIMIT_MIN_WAIT, backoff(attempt))
    return backoff(attempt)


_LINK_RE = re.compile(r"<([^<>]*)>([^<>]*)")  # a URI in angle brackets, then its parameters up to the next one
_REL_RE = re.compile(r"""(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))""", re.I)


def next_page(headers: Mapping[str, str] | None) -> str | None:
    """The URL of the `Link` header's rel="next" (rel may list several relation types), None on the last page."""
    link = header(headers, "link")
    if not link:
        return None
    for url, params in _LINK_RE.findall(link[:20_000]):
        rel = _REL_RE.search(params)
        if rel and "next" in (rel.group(1) or rel.group(2) or "").lower().split():
            return url.strip()
    return None


@dataclass(frozen=True)
class RateInfo:
    """The primary rate limit as the `x-ratelimit-*` headers of one response describe it."""

    limit: int
    remaining: int
    reset: float  # UTC epoch seconds
    used: int | None = None
    resource: str = "core"


def rate_from_headers(headers: Mapping[str, str] | None) -> RateInfo | None:
    """None when the response carried no (or unreadable) rate-limit headers."""
    limit = _number(header(headers, "x-ratelimit-limit"))
    remaining = _number(header(headers, "x-ratelimit-remaining"))
    reset = _number(header(headers, "x-ratelimit-reset"))
    if limit is None or remaining is None or reset is None:
        return None
    used = _number(header(headers, "x-ratelimit-used"))
    resource = (header(headers, "x-ratelimit-resource") or "core").strip().lower()[:40] or "core"
    return RateInfo(int(limit), int(remaining), reset, int(used) if used is not None else None, resource)


__all__ = ["Backoff", "ErrorKind", "RateInfo", "SECONDARY_LIMIT_MIN_WAIT", "classify", "error_message", "header",
           "is_rate_limited", "is_secondary_limit", "next_page", "rate_from_headers", "retry_after_seconds",
           "wait_seconds"]
