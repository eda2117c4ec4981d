"""The one retry loop: send, decide, maybe wait, send again, within a number of tries, a longest single wait and
an absolute deadline.

Imports: the standard library and `triage.http` (decisions, errors) only. The loop knows nothing of HTTP
libraries: `send()` performs one attempt and returns whatever the caller's `decide` understands (a
`requests.Response`, a `(status, headers, body)` triple), or raises a transport error that `on_transport_error`
turns into a verdict. `decide(result, attempt)` returns a `Verdict`: done (with the value to return), retry (with
the error and an optional wait), or fail. `verdict_for_status` is the usual HTTP `decide`; `verdict_from_exception`
adapts a parser that raises typed errors with `retryable`/`retry_after` (the LLM protocol's shape).

Why a deadline as well as `max_retries` and `max_wait`: a sweep must move on from an issue that the API stalls on.
No wait ever runs past the deadline: when one would, the loop raises `BudgetExhausted` at once instead of sleeping.

Why `on_maybe_processed`: a POST that failed with a 5xx or a read timeout may still have been stored (GitHub then
has a comment we do not know of). Such a failure is retried only when the hook allows it: it returns a value to use
instead (the duplicate it found), or None to allow the retry, or raises to stop. Refusals that the server did not
process (rate limits, connect timeouts) are always safe to retry.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from triage.http.decisions import Backoff, ErrorKind, classify, error_message, wait_seconds
from triage.http.errors import BudgetExhausted, HTTPError, RateLimited, error_class

DONE, RETRY, FAIL = "done", "retry", "fail"


@dataclass(frozen=True)
class Verdict:
    action: str  # DONE, RETRY or FAIL
    value: Any = None  # what the loop returns (DONE)
    error: BaseException | None = None  # what it raises (FAIL, or RETRY when no try is left)
    wait: float | None = None  # RETRY: seconds the server asked for; None means "back off"
    maybe_processed: bool = False  # RETRY: the server may have acted on the request


def done(value: Any = None) -> Verdict:
    return Verdict(DONE, value=value)


def retry(error: BaseException, *, wait: float | None = None, maybe_processed: bool = False) -> Verdict:
    return Verdict(RETRY, error=error, wait=wait, maybe_processed=maybe_processed)


def fail(error: BaseException) -> Verdict:
    return Verdict(FAIL, error=error)


def _explain(error: BaseException, detail: str) -> BaseException:
    return error.with_detail(detail) if isinstance(error, HTTPError) else error


def call_with_retries(
    send: Callable[[], Any],
    decide: Callable[[Any, int], Verdict],
    *,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    max_retries: int = 5,
    max_wait: float = 120.0,
    deadline: float | None = None,
    backoff: Callable[[int], float] | None = None,
    on_transport_error: Callable[[BaseException], Verdict] | None = None,
    on_maybe_processed: Callable[[BaseException], Any] | None = None,
    what: str = "the call",
) -> Any:
    """Run `send` until `decide` says done or fail, or the tries, `max_wait` or the `deadline` (absolute `clock()`
    time) run out. `what` names the call in a BudgetExhausted message (e.g. "GET /repos/o/r/issues/1")."""
    backoff = backoff or Backoff()
    last: BaseException | None = None
    for attempt in range(max_retries + 1):
        if deadline is not None and clock() >= deadline:
            raise _out_of_time(what, last, before=attempt == 0)
        try:
            result = send()
        except Exception as exc:  # noqa: BLE001 - the caller's hook says which transport errors are retryable
            if on_transport_error is None:
                raise
            verdict = on_transport_error(exc)
        else:
            verdict = decide(result, attempt)
        if verdict.action == DONE:
            return verdict.value
        if verdict.action == FAIL:
            raise verdict.error
        last = verdict.error
        if verdict.maybe_processed and on_maybe_processed is not None:
            found = on_maybe_processed(verdict.error)
            if found is not None:
                return found
        wait = max(verdict.wait if verdict.wait is not None else backoff(attempt), 0.0)
        if wait > max_wait:  # said even on the last try: "re-run later" is what the caller needs to hear
            raise _explain(verdict.error, f"the server asks to wait {wait:.0f}s, more than max_wait "
                                          f"{max_wait:.0f}s; re-run later")
        if attempt == max_retries:
            break
        if deadline is not None and clock() + wait > deadline:
            raise _out_of_time(what, last, wait=wait)
        sleep(wait)
    assert last is not None
    raise _explain(last, f"gave up after {max_retries + 1} attempts")


def _out_of_time(what: str, last: BaseException | None, *, wait: float | None = None,
                 before: bool = False) -> BudgetExhausted:
    method, _, path = what.partition(" ")
    if before:
        why = "the deadline had passed before the call was sent"
    elif wait is not None:
        why = f"a retry would wait {wait:.0f}s, past the deadline"
    else:
        why = "the deadline passed while retrying"
    if last is not None:
        why += f"; last error: {getattr(last, 'message', None) or last}"
    status = getattr(last, "status", None) if last is not None else None
    service = getattr(last, "service", "HTTP") if last is not None else "HTTP"
    error = BudgetExhausted(status, method, path, why, service=service)
    error.__cause__ = last
    return error


def verdict_for_status(status: int, headers, body, *, attempt: int, now: float, backoff: Callable[[int], float],
                       method: str, path: str, service: str = "HTTP", secrets=(), reason: str | None = None,
                       value: Any = None, maybe_processed: bool = True) -> Verdict:
    """The usual HTTP verdict: success is done (with `value`); a rate limit is retried after the wait the server
    asked for (never processed); a 5xx or 408 is retried with backoff (the server `maybe_processed` it); anything
    else fails with its typed error."""
    kind = classify(status, headers, body)
    if status < 400:
        return done(value)
    message = error_message(body, status, reason)
    make = error_class(kind)
    if make is RateLimited:
        wait = wait_seconds(status, headers, body, now=now, attempt=attempt, backoff=backoff)
        return retry(RateLimited(status, method, path, f"rate limited: {message}", wait=wait, service=service,
                                 secrets=secrets), wait=wait)
    error = make(status, method, path, message, service=service, secrets=secrets)
    if kind is ErrorKind.TRANSIENT:
        return retry(error, maybe_processed=maybe_processed)
    return fail(error)


def verdict_from_exception(parse: Callable[[Any], Any]) -> Callable[[Any, int], Verdict]:
    """A `decide` for parsers that raise typed errors: an error with a true `retryable` attribute is retried after
    its `retry_after` (None: backoff); any other exception fails; a return value is done."""

    def decide(result: Any, attempt: int) -> Verdict:
        try:
            return done(parse(result))
        except Exception as exc:  # noqa: BLE001 - the error's own attributes say what to do
            if getattr(exc, "retryable", False):
                return retry(exc, wait=getattr(exc, "retry_after", None),
                             maybe_processed=bool(getattr(exc, "maybe_processed", False)))
            return fail(exc)

    return decide


__all__ = ["DONE", "FAIL", "RETRY", "Verdict", "call_with_retries", "done", "fail", "retry", "verdict_for_status",
           "verdict_from_exception"]
