"""A sliding-window pacer for content-creating requests.

Imports: the standard library and `triage.http.errors` only.

Why: GitHub's secondary limits allow about 80 content-creating requests a minute and 500 an hour
(tests/contract/rest/rate-limits.json), there is no way to ask how much of them is left, and tripping them costs at
least a minute's wait (and, repeated, a ban). So we count our own writes and stay under lower caps (defaults 60 a
minute, 450 an hour). Bursts are allowed up to the cap, so one issue's two or three writes never wait; a sweep
is spread out. A wait that would end past the deadline, or that is longer than `max_wait` (the hourly cap can mean
most of an hour), raises `BudgetExhausted` at once instead of sleeping: the run stops cleanly and the next one goes
on.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable

from triage.http.errors import BudgetExhausted

MINUTE, HOUR = 60.0, 3600.0


class WritePacer:
    def __init__(self, *, per_minute: int = 60, per_hour: int = 450, clock: Callable[[], float],
                 sleep: Callable[[float], None], max_wait: float = 120.0, service: str = "HTTP"):
        if per_minute < 1 or per_hour < 1:
            raise ValueError("write caps must be at least 1 per minute and per hour")
        self.per_minute, self.per_hour = per_minute, per_hour
        self.max_wait = max_wait
        self.service = service  # names the API in a BudgetExhausted message
        self._clock, self._sleep = clock, sleep
        self._sent: deque[float] = deque()  # send times of the last hour, oldest first
        self.waited = 0.0  # total seconds slept for pacing (reported by benchmarks)

    def _forget_old(self, now: float) -> None:
        while self._sent and self._sent[0] <= now - HOUR:
            self._sent.popleft()

    def wait_needed(self, now: float) -> float:
        """Seconds until one more write fits under both caps (0 when it fits now)."""
        return self.wait_for(1, now)

    def wait_for(self, count: int, now: float) -> float:
        """Seconds until `count` more writes, sent one after another, have all fit under both caps (0: now).
        More writes than a cap allows at once wait at least that cap's whole window (an upper bound is enough:
        it only decides whether an issue's writes are started at all)."""
        self._forget_old(now)
        sent = list(self._sent)
        wait = 0.0
        for cap, window in ((self.per_minute, MINUTE), (self.per_hour, HOUR)):
            recent = [t for t in sent if t > now - window]
            # How many of the recent writes must leave the window first (one write: the (len - cap + 1)-th oldest).
            over = len(recent) + count - cap
            if over > len(recent):
                wait = max(wait, window * ((over - len(recent) + cap - 1) // cap) + (window if recent else 0.0))
            elif over > 0:
                wait = max(wait, recent[over - 1] + window - now)
        return wait

    def acquire(self, *, deadline: float | None = None, what: str = "write") -> None:
        """Block (with the injected sleep) until one more write fits, then count it as sent."""
        now = self._clock()
        wait = self.wait_needed(now)
        if wait > 0:
            method, _, path = what.partition(" ")
            if deadline is not None and now + wait > deadline:
                raise BudgetExhausted(None, method, path, f"pacing writes ({self.per_minute}/min, "
                                      f"{self.per_hour}/h) would wait {wait:.0f}s, past the deadline; nothing sent",
                                      service=self.service)
            if wait > self.max_wait:
                raise BudgetExhausted(None, method, path, f"pacing writes ({self.per_minute}/min, "
                                      f"{self.per_hour}/h) would wait {wait:.0f}s, more than {self.max_wait:.0f}s; "
                                      "nothing sent, re-run later", service=self.service)
            self._sleep(wait)
            self.waited += wait
            now = self._clock()
        self._sent.append(now)


__all__ = ["HOUR", "MINUTE", "WritePacer"]
