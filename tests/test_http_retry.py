"""Pure tests of triage.http: decisions over (status, headers, body), typed errors, the retry loop and the write
pacer, with an injected clock and sleep (no server, no real waiting)."""
from __future__ import annotations

import copy
import pickle
import random
from email.utils import format_datetime
from datetime import datetime, timezone

import pytest

from triage.http import decisions as d
from triage.http.errors import (AuthError, BadRequest, BudgetExhausted, HTTPError, NotFound, RateLimited, Transient,
                                error_class, is_fatal_for_run, scrub)
from triage.http.pacing import WritePacer
from triage.http.retry import call_with_retries, done, fail, retry, verdict_for_status, verdict_from_exception

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z
SECONDARY = b'{"message": "You have exceeded a secondary rate limit. Please wait a few minutes."}'


class Clock:
    """A virtual clock whose sleep advances it, recording every sleep."""

    def __init__(self, now: float = NOW):
        self.now, self.slept = now, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def no_jitter(attempt: int) -> float:
    return 2.0 ** attempt


# ---- decisions ------------------------------------------------------------------------------------------------


def test_retry_after_in_seconds_and_as_http_date():
    assert d.retry_after_seconds("7", now=NOW) == 7.0
    in_90s = format_datetime(datetime.fromtimestamp(NOW + 90, timezone.utc), usegmt=True)
    assert in_90s.endswith("GMT")
    assert d.retry_after_seconds(in_90s, now=NOW) == pytest.approx(90.0)
    assert d.retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=NOW) == 0.0  # in the past: now
    assert d.retry_after_seconds("soon", now=NOW) is None
    assert d.retry_after_seconds("-5", now=NOW) is None
    assert d.retry_after_seconds(None, now=NOW) is None


def test_wait_follows_githubs_order_retry_after_then_reset_then_a_minute_then_backoff():
    date = format_datetime(datetime.fromtimestamp(NOW + 42, timezone.utc), usegmt=True)
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}

    def wait(status, headers, body=b"", attempt=0):
        return d.wait_seconds(status, headers, body, now=NOW, attempt=attempt, backoff=no_jitter)

    assert wait(429, {"Retry-After": "3", **reset}) == 3.0  # retry-after wins over the reset
    assert wait(403, {"retry-after": date}) == pytest.approx(42.0)  # the HTTP-date form, case-insensitively
    assert wait(403, {"Retry-After": "garbage", **reset}) == 31.0  # unreadable: fall through to the reset (+1 s)
    assert wait(403, {}, SECONDARY) == 60.0  # a secondary limit without headers: at least a minute
    assert wait(403, {}, SECONDARY, attempt=7) == 128.0  # ... or the backoff when that is longer
    assert wait(502, {}, b"", attempt=3) == 8.0  # a server error: plain backoff


@pytest.mark.parametrize("status,headers,body,kind", [
    (200, {}, b"{}", d.ErrorKind.OK),
    (304, {}, b"", d.ErrorKind.OK),
    (429, {}, b"", d.ErrorKind.RATE_LIMITED),
    (403, {"X-RateLimit-Remaining": "0"}, b'{"message": "API rate limit exceeded"}', d.ErrorKind.RATE_LIMITED),
    (403, {"retry-after": "5"}, b"", d.ErrorKind.RATE_LIMITED),
    (403, {}, SECONDARY, d.ErrorKind.RATE_LIMITED),
    (403, {"x-ratelimit-remaining": "12"}, b'{"message": "Resource not accessible by integration"}',
     d.ErrorKind.AUTH),
    (401, {}, b'{"message": "Bad credentials"}', d.ErrorKind.AUTH),
    (404, {}, b'{"message": "Not Found"}', d.ErrorKind.NOT_FOUND),
    (422, {}, b'{"message": "Validation Failed"}', d.ErrorKind.BAD_REQUEST),
    (410, {}, b"", d.ErrorKind.BAD_REQUEST),
    (408, {}, b"", d.ErrorKind.TRANSIENT),
    (500, {}, b"", d.ErrorKind.TRANSIENT),
    (503, {}, "<html>down</html>", d.ErrorKind.TRANSIENT),
])
def test_classify(status, headers, body, kind):
    assert d.classify(status, headers, body) is kind


def test_secondary_versus_primary_limit():
    assert d.is_secondary_limit(403, {"x-ratelimit-remaining": "3"}, SECONDARY)
    assert d.is_secondary_limit(429, {"retry-after": "60"}, b"")
    assert not d.is_secondary_limit(403, {"x-ratelimit-remaining": "0"}, b'{"message": "API rate limit exceeded"}')
    assert not d.is_secondary_limit(403, {}, b'{"message": "Must have admin rights"}')
    assert not d.is_rate_limited(500, {"retry-after": "1"}, b"")


@pytest.mark.parametrize("link,expected", [
    ('<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"',
     "https://api.github.com/x?page=2"),
    ('<https://api.github.com/x?page=1>; rel="prev", <https://api.github.com/x?page=3>; rel=next',
     "https://api.github.com/x?page=3"),
    ('<https://api.github.com/x?page=3>; rel="next last"', "https://api.github.com/x?page=3"),
    ('<https://api.github.com/x?page=1>; rel="first", <https://api.github.com/x?page=1>; rel="prev"', None),
    ('<https://api.github.com/x?a=1,2&page=2>; title="a, b"; rel="next"', "https://api.github.com/x?a=1,2&page=2"),
    ("", None),
    ("garbage without brackets; rel=next", None),
])
def test_next_page(link, expected):
    assert d.next_page({"Link": link}) == expected
    assert d.next_page({"link": link}) == expected  # any case


def test_next_page_of_a_huge_hostile_header_is_quick():
    import time

    started = time.perf_counter()
    assert d.next_page({"Link": "<" * 200_000 + ";rel=" * 100_000}) is None
    assert time.perf_counter() - started < 10  # a hang guard: quadratic work on 700,000 characters takes hours


def test_error_message_is_one_bounded_line():
    assert d.error_message(b'{"message": "Validation Failed", "errors": [{"code": "already_exists"}]}', 422,
                           "Unprocessable") == "Validation Failed (already_exists)"
    assert d.error_message('{"message": "two\\nlines\\there"}', 400) == "two lines here"
    assert d.error_message(b"plain text\r\nfrom a proxy", 502, "Bad Gateway") == "plain text from a proxy"
    assert d.error_message(b"<html><body>nginx</body></html>", 502, "Bad Gateway") == "Bad Gateway"
    assert d.error_message(b"", 504, None) == "HTTP 504"
    long = d.error_message(('{"message": "%s"}' % ("x" * 10_000)).encode(), 400)
    assert len(long) <= d.MAX_MESSAGE and "\n" not in long
    assert d.error_message(b"\xff\xfe not utf-8", 500) .startswith("\ufffd")


def test_rate_from_headers():
    info = d.rate_from_headers({"X-RateLimit-Limit": "1000", "X-RateLimit-Remaining": "998",
                                "X-RateLimit-Reset": "1767229200", "X-RateLimit-Used": "2",
                                "X-RateLimit-Resource": "core"})
    assert info == d.RateInfo(limit=1000, remaining=998, reset=1767229200.0, used=2, resource="core")
    assert d.rate_from_headers({"x-ratelimit-limit": "30"}) is None  # incomplete: unknown, not zero
    assert d.rate_from_headers({"x-ratelimit-limit": "x", "x-ratelimit-remaining": "1",
                                "x-ratelimit-reset": "1"}) is None


def test_backoff_is_exponential_capped_and_jittered_by_the_injected_rng():
    backoff = d.Backoff(base=1.0, cap=10.0, jitter=0.1, rng=random.Random(0))
    waits = [backoff(n) for n in range(6)]
    assert all(2 ** n <= w <= 2 ** n * 1.1 for n, w in enumerate(waits[:4]))
    assert all(10.0 <= w <= 11.0 for w in waits[4:])
    again = d.Backoff(base=1.0, cap=10.0, jitter=0.1, rng=random.Random(0))
    assert waits == [again(n) for n in range(6)]  # the same rng seed, the same waits


# ---- errors ---------------------------------------------------------------------------------------------------


def test_errors_are_scrubbed_when_built_and_stay_one_line():
    token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
    err = Transient(502, "GET", f"/repos/o/r?access_token={token}", f"proxy echoed\nAuthorization: Bearer {token}",
                    service="GitHub API")
    for text in (str(err), repr(err), err.message, err.path, repr(err.args)):
        assert token not in text and "\n" not in text
    assert "***" in str(err)
    other = BadRequest(400, "POST", "/x", "my-secret-value and github_pat_11ABCDEFG0123456789_abcdef",
                       secrets=["my-secret-value"])
    assert "my-secret-value" not in str(other) and "github_pat_" not in str(other)
    assert len(scrub("y" * 10_000)) <= 500


def test_with_detail_copy_and_pickle_keep_the_type_and_fields():
    err = RateLimited(429, "GET", "/x", "slow down", wait=30.0, service="GitHub API")
    detailed = err.with_detail("gave up after 3 attempts")
    assert type(detailed) is RateLimited and detailed.wait == 30.0 and detailed.status == 429
    assert str(detailed) == "GitHub API GET /x failed (429): slow down; gave up after 3 attempts"
    assert str(err) == "GitHub API GET /x failed (429): slow down"  # the original is unchanged
    for clone in (copy.copy(err), pickle.loads(pickle.dumps(err))):
        assert type(clone) is RateLimited and str(clone) == str(err) and clone.wait == 30.0


def test_error_class_per_kind_and_which_errors_end_a_run():
    assert error_class(d.ErrorKind.AUTH) is AuthError and error_class(d.ErrorKind.NOT_FOUND) is NotFound
    with pytest.raises(ValueError):
        error_class(d.ErrorKind.OK)
    fatal = [AuthError(401, "GET", "/", "x"), RateLimited(403, "GET", "/", "x"), BudgetExhausted(None, "GET", "/", "x")]
    not_fatal = [NotFound(404, "GET", "/", "x"), Transient(None, "GET", "/", "x"), BadRequest(422, "GET", "/", "x"),
                 ValueError("x")]
    assert all(is_fatal_for_run(e) for e in fatal) and not any(is_fatal_for_run(e) for e in not_fatal)
    assert all(isinstance(e, HTTPError) for e in fatal + not_fatal[:3])


# ---- the retry loop -------------------------------------------------------------------------------------------


def scripted(*answers):
    """A `send` that answers from a script: (status, headers, body) triples, or exceptions to raise."""
    sent = []

    def send():
        answer = answers[len(sent)]
        sent.append(answer)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    send.sent = sent
    return send


def http_decide(clock):
    def decide(result, attempt):
        status, headers, body = result
        return verdict_for_status(status, headers, body, attempt=attempt, now=clock(), backoff=no_jitter,
                                  method="GET", path="/x", value=body)
    return decide


def loop(send, clock, **kwargs):
    kwargs.setdefault("max_retries", 5)
    kwargs.setdefault("max_wait", 120.0)
    return call_with_retries(send, http_decide(clock), sleep=clock.sleep, clock=clock, backoff=no_jitter,
                             what="GET /x", **kwargs)


def test_loop_retries_rate_limits_and_server_errors_then_returns():
    clock = Clock()
    date = format_datetime(datetime.fromtimestamp(NOW + 20, timezone.utc), usegmt=True)
    send = scripted((429, {"Retry-After": "5"}, b""), (503, {}, b""), (403, {"Retry-After": date}, SECONDARY),
                    (200, {}, b"ok"))
    assert loop(send, clock) == b"ok"
    assert clock.slept == [5.0, 2.0, pytest.approx(13.0)]  # 5 s; backoff 2**1; the date is 20 s after start
    assert len(send.sent) == 4


def test_loop_fails_at_once_on_errors_retrying_cannot_fix():
    for status, cls in ((401, AuthError), (403, AuthError), (404, NotFound), (422, BadRequest)):
        clock = Clock()
        send = scripted((status, {}, b'{"message": "no"}'))
        with pytest.raises(cls, match=r"\(%d\): no" % status):
            loop(send, clock)
        assert clock.slept == [] and len(send.sent) == 1


def test_loop_gives_up_after_max_retries_keeping_the_type():
    clock = Clock()
    send = scripted(*[(502, {}, b"")] * 3)
    with pytest.raises(Transient, match="gave up after 3 attempts"):
        loop(send, clock, max_retries=2)
    assert clock.slept == [1.0, 2.0]


def test_loop_refuses_a_wait_longer_than_max_wait_without_sleeping():
    clock = Clock()
    send = scripted((403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)}, b""))
    with pytest.raises(RateLimited, match="more than max_wait 120s; re-run later") as info:
        loop(send, clock)
    assert info.value.wait == 3601.0 and clock.slept == []


def test_no_sleep_runs_past_the_deadline():
    clock = Clock()
    send = scripted((502, {}, b""), (502, {}, b""), (502, {}, b""), (200, {}, b"late"))
    with pytest.raises(BudgetExhausted, match="past the deadline") as info:
        loop(send, clock, deadline=NOW + 2.5)  # backoff 1 s, then 2 s would end at 3 s > 2.5 s
    assert clock.slept == [1.0] and len(send.sent) == 2 and clock.now <= NOW + 2.5
    assert isinstance(info.value.__cause__, Transient)
    assert is_fatal_for_run(info.value)


def test_a_passed_deadline_sends_nothing():
    clock = Clock()
    send = scripted((200, {}, b"never"))
    with pytest.raises(BudgetExhausted, match="before the call was sent"):
        loop(send, clock, deadline=NOW - 1)
    assert send.sent == []


def test_a_rate_limit_wait_past_the_deadline_is_budget_exhausted_not_a_sleep():
    clock = Clock()
    send = scripted((429, {"Retry-After": "60"}, b""))
    with pytest.raises(BudgetExhausted):
        loop(send, clock, deadline=NOW + 30)
    assert clock.slept == []


def test_transport_errors_become_verdicts_only_through_the_hook():
    clock = Clock()
    send = scripted(ConnectionResetError("reset"), (200, {}, b"ok"))
    assert loop(send, clock, on_transport_error=lambda exc: retry(Transient(None, "GET", "/x", type(exc).__name__),
                                                                    maybe_processed=True)) == b"ok"
    with pytest.raises(ConnectionResetError):  # without a hook a transport error is not swallowed
        loop(scripted(ConnectionResetError("reset")), Clock())


def test_maybe_processed_hook_can_return_a_found_result_allow_a_retry_or_stop():
    asked = []

    def found_it(error):
        asked.append(error)
        return "the comment that was stored"

    clock = Clock()
    send = scripted((502, {}, b""))
    assert loop(send, clock, on_maybe_processed=found_it) == "the comment that was stored"
    assert len(send.sent) == 1 and clock.slept == [] and isinstance(asked[0], Transient)

    send = scripted((502, {}, b""), (201, {}, b"posted"))
    assert loop(send, Clock(), on_maybe_processed=lambda error: None) == b"posted"

    def refuse(error):
        raise error.with_detail("may or may not have been posted")

    with pytest.raises(Transient, match="may or may not have been posted"):
        loop(scripted((502, {}, b"")), Clock(), on_maybe_processed=refuse)

    # a rate-limit refusal was not processed: the hook is not asked
    asked.clear()
    assert loop(scripted((429, {"retry-after": "1"}, b""), (201, {}, b"ok")), Clock(),
                on_maybe_processed=found_it) == b"ok"
    assert asked == []


class FakeProviderError(Exception):
    """The shape of the LLM protocol's typed errors: `retryable` and an optional `retry_after`."""

    def __init__(self, message, retryable, retry_after=None):
        super().__init__(message)
        self.retryable, self.retry_after = retryable, retry_after


def test_the_loop_serves_parsers_that_raise_typed_errors():
    def parse(result):
        status, _, body = result
        if status == 429:
            raise FakeProviderError("slow down", True, retry_after=4.0)
        if status == 529:
            raise FakeProviderError("overloaded", True)
        if status == 400:
            raise FakeProviderError("bad request", False)
        return body.upper()

    clock = Clock()
    send = scripted((429, {}, b""), (529, {}, b""), (200, {}, b"plan"))
    result = call_with_retries(send, verdict_from_exception(parse), sleep=clock.sleep, clock=clock,
                               backoff=no_jitter, max_retries=3, max_wait=60)
    assert result == b"PLAN" and clock.slept == [4.0, 2.0]
    with pytest.raises(FakeProviderError, match="bad request"):
        call_with_retries(scripted((400, {}, b"")), verdict_from_exception(parse), sleep=clock.sleep, clock=clock)


def test_verdict_constructors():
    assert done(3).value == 3 and fail(ValueError()).action == "fail"
    assert retry(ValueError(), wait=2).wait == 2


# ---- the write pacer ------------------------------------------------------------------------------------------


def test_pacer_allows_a_burst_up_to_the_minute_cap_then_spaces_writes():
    clock = Clock()
    pacer = WritePacer(per_minute=60, per_hour=450, clock=clock, sleep=clock.sleep)
    for _ in range(60):
        pacer.acquire()
    assert clock.slept == []  # one issue's few writes never wait
    pacer.acquire()
    assert clock.slept == [60.0]  # the 61st waits until the burst leaves the window
    assert [sum(t > clock() - window for t in pacer._sent) for window in (60, 3600)] == [1, 61]


def test_pacer_keeps_every_window_under_its_caps_over_a_long_run():
    clock = Clock()
    pacer = WritePacer(per_minute=60, per_hour=450, clock=clock, sleep=clock.sleep, max_wait=3600)
    sent = []
    rng = random.Random(1)
    for _ in range(1200):
        clock.now += rng.choice([0.0, 0.0, 0.1, 0.5, 2.0])  # the work between writes
        pacer.acquire()
        sent.append(clock.now)
    for i, t in enumerate(sent):
        assert sum(1 for u in sent[i:] if u < t + 60) <= 60
        assert sum(1 for u in sent[i:] if u < t + 3600) <= 450
    assert sent[-1] - sent[0] > 2 * 3600  # 1,200 writes at 450 an hour take more than two hours


def test_pacer_refuses_to_sleep_past_the_deadline_or_max_wait():
    clock = Clock()
    pacer = WritePacer(per_minute=2, per_hour=3, clock=clock, sleep=clock.sleep, max_wait=120)
    pacer.acquire()
    pacer.acquire()
    with pytest.raises(BudgetExhausted, match="past the deadline"):
        pacer.acquire(deadline=NOW + 10, what="POST /repos/o/r/issues/1/comments")
    assert clock.slept == []
    pacer.acquire()  # no deadline: waits out the minute
    assert clock.slept == [60.0]
    with pytest.raises(BudgetExhausted, match="more than 120s"):  # the hourly cap: most of an hour
        pacer.acquire()
    assert clock.slept == [60.0]


def test_pacer_rejects_nonsense_caps():
    with pytest.raises(ValueError):
        WritePacer(per_minute=0, per_hour=10, clock=Clock(), sleep=lambda s: None)
