"""Two runs at once on one issue, and runs killed after any request, measured with the real entrypoint: the trials
behind docs/duplicates-and-concurrency.md (bench/duplicates.py runs them in full; tests/test_claim_races.py runs a
few of each in the default test run).

A trial is a fresh issue on the GitHub stand-in (tests/sim/world.py: wall-clock timestamps) that asks for a comment
(not_distributed), and two runs started at the same moment (two threads, each starting `python entrypoint.py` with
the runner's environment, or calling `main(environ)` in-process). The two runs write as one account (the bot) with
two tokens, so the request log tells them apart. Pairs:

- event+sweep: the issue's `issues.labeled` run and a scheduled sweep;
- retriage+sweep: a maintainer's `/ptd-retriage` run (on an issue in the queue no run has processed) and a sweep;
- two-events: `issues.opened` and `issues.labeled` runs of a workflow WITHOUT the per-issue concurrency group.

Windows: "late" = the runs start 15 minutes after the event that triggered them (a run that waited behind others of
its group, or a "Re-run jobs"): the issue looks old to the sweep, which therefore takes it too. "fresh" = right
after the event: the sweep leaves the issue to its event run. "late, aligned" = late, and the stand-in holds each
run's first read of the issue until the other's arrives (at most 30 s), so both plan from the issue before either
writes: every trial is the race.

The account's 👀 before the runs (issue 30: GitHub keeps one per account and issue, so once it is there no claim is
ever "created" again): none; 30 days old (an earlier comment's claim); 60 s old; another workflow's, made as the runs
start (a 👀 nobody of ours is posting under, and young). `delay`: seconds the stand-in waits before every answer.

Counted per trial: contested (both runs asked for the claim), posted twice (two comments were posted, one then
deleted: subscribers were notified twice), a duplicate left at the end, no comment at the end, failed runs.

May import: the standard library, `actionrun`, `fakegithub`, `sim.driver`, `sim.world`.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

from actionrun import NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, issues_payload, schedule_payload
from fakegithub.server import RateLimits
from sim.driver import Driver, Launch
from sim.world import STAMP, SimGitHub

PAIRS = ("event+sweep", "retriage+sweep", "two-events")
WINDOWS = {"late": 15 * 60, "late, aligned": 15 * 60, "fresh": 0}
# The account's 👀 on the issue before the runs: its age in seconds (None: there is none).
REACTIONS = {"none": None, "30 days": 30 * 86400, "60 s": 60, "another workflow's": 0}
TEMPLATE_MARK = "<!-- ptd-triage:not_distributed -->"
SECOND_TOKEN = "ghs_fakegithub_second_run_token"  # the second run's token: the same account, told apart in the log
SWEEP = {"max-issues": "50"}


@dataclass
class Row:
    pair: str
    window: str
    reaction: str
    delay: float
    trials: int = 0
    contested: int = 0
    posted_twice: int = 0
    duplicates: int = 0
    missing: int = 0
    failed_runs: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def world(delay: float = 0.0) -> SimGitHub:
    """The stand-in with limits out of the way (hundreds of runs a minute would meet the search limit, which is not
    what is measured) and the second run's token."""
    fake = SimGitHub(rate_limits=RateLimits(core_per_hour=10**6, search_per_minute=10**6), request_delay=delay)
    fake.add_token(SECOND_TOKEN, fake.bot_login)
    fake.set_role(REPO, "maintainer-person", "maintain")
    return fake


def react_before(fake, n: int, reaction: str) -> None:
    """The account's 👀 on issue n, `REACTIONS[reaction]` seconds old now."""
    age = REACTIONS[reaction]
    if age is None:
        return
    obj = fake.add_issue_reaction(REPO, n, "eyes", author=fake.bot_login)
    when = datetime.now(timezone.utc) - timedelta(seconds=age)
    fake.set_issue_reaction_time(REPO, n, obj["id"], when.strftime(STAMP))


def launches(fake, pair: str, n: int, window: str, reaction: str = "none") -> tuple[Launch, Launch]:
    title, body = NOT_DISTRIBUTED
    if pair == "retriage+sweep":
        # In the queue for hours, never processed (its label run failed, say); then a maintainer asks.
        fake.add_issue(REPO, n, title=title, body=body, labels=[QUEUE])
        fake.age(6 * 3600)
        comment = fake.add_comment(REPO, n, "/ptd-retriage", author="maintainer-person")
        first = Launch("issue_comment", comment_payload(fake, n, comment), label=f"/ptd-retriage #{n}")
    else:
        fake.add_issue(REPO, n, title=title, body=body, labels=[QUEUE])
        first = Launch("issues", issues_payload(fake, n, "labeled", label=QUEUE), label=f"labeled #{n}")
    if pair == "two-events":
        second = Launch("issues", issues_payload(fake, n, "opened"), {"github-token": SECOND_TOKEN},
                        label=f"opened #{n}")
    else:
        second = Launch("schedule", schedule_payload(), dict(SWEEP, **{"github-token": SECOND_TOKEN}),
                        label="sweep")
    fake.age(WINDOWS[window])
    react_before(fake, n, reaction)
    return first, second


def ours(fake, n: int) -> int:
    return sum(1 for c in fake.comments(REPO, n)
               if TEMPLATE_MARK in (c["body"] or "") and c["user"]["login"] == fake.bot_login)


def _issue_requests(requests, n: int, method: str, suffix: str) -> list:
    path = f"/repos/{REPO}/issues/{n}{suffix}"
    return [r for r in requests if r.method == method and r.path == path]


def without_claim(fake) -> None:
    """The control: every claim is "created" (201), so no run ever learns that another one claimed first."""
    original = fake._op_reactions_create_for_issue

    def always_created(repo, params, body, user, **rest):
        _, headers, obj = original(repo, params, body, user, **rest)
        return 201, headers, obj

    fake._op_reactions_create_for_issue = always_created


class ReadGate:
    """Holds the first two reads of one issue (GET /repos/R/issues/N) until both have arrived, then lets them
    through together: two runs that read the issue at the same moment. The stand-in answers on a thread per
    request, so a held read blocks nobody else."""

    def __init__(self, fake):
        self._handle, self._lock = fake.handle, threading.Lock()
        self._path, self._barrier, self._held = None, threading.Barrier(2), 0
        fake.handle = self.handle

    def arm(self, number: int) -> None:
        with self._lock:
            self._path, self._barrier, self._held = f"/repos/{REPO}/issues/{number}", threading.Barrier(2), 0

    def handle(self, method, raw_path, headers, raw_body):
        with self._lock:
            wait = method == "GET" and urlsplit(raw_path).path.rstrip("/") == self._path and self._held < 2
            if wait:
                self._held += 1
                barrier = self._barrier
        if wait:
            try:
                barrier.wait(timeout=30)
            except threading.BrokenBarrierError:
                pass  # the other run never read the issue (it stopped before): no race to align
        return self._handle(method, raw_path, headers, raw_body)


def measure(pair: str, window: str, trials: int, *, reaction: str = "none", delay: float = 0.0, claim: bool = True,
            mode: str = "subprocess", first: int = 1) -> Row:
    """`trials` trials of one row (issues numbered from `first`)."""
    row = Row(pair, window, reaction, delay, trials)
    started = time.monotonic()
    with world(delay) as fake:
        if not claim:
            without_claim(fake)
        gate = ReadGate(fake) if "aligned" in window else None
        driver = Driver(fake, mode)
        try:
            for n in range(first, first + trials):
                pair_launches = launches(fake, pair, n, window, reaction)
                if gate is not None:
                    gate.arm(n)
                records = driver.run_together(*pair_launches)
                _count(row, fake, records, n)
        finally:
            driver.close()
        row.notes += fake.take_violations()
    row.seconds = time.monotonic() - started
    return row


def _count(row: Row, fake, records, n: int) -> None:
    requests = records[0].requests  # `shared`: both runs' requests together
    claims = _issue_requests(requests, n, "POST", "/reactions")
    row.failed_runs += sum(1 for r in records if r.returncode != 0)
    row.contested += len({r.token for r in claims}) == 2
    row.posted_twice += len(_issue_requests(requests, n, "POST", "/comments")) > 1
    count = ours(fake, n)
    row.duplicates += count > 1
    row.missing += count == 0


# ---- a run killed after any request, then run again ------------------------------------------------------------


def state(fake, n: int) -> tuple:
    """What a person sees of issue n, without ids and times: its labels, each comment's author and template, and
    the reactions on the issue."""
    comments = tuple((c["user"]["login"], TEMPLATE_MARK in (c["body"] or "")) for c in fake.comments(REPO, n))
    reactions = tuple(sorted((r["user"]["login"], r["content"]) for r in fake.issue_reactions(REPO, n)))
    return tuple(sorted(fake.issue_labels(REPO, n))), comments, reactions


@dataclass
class KillTrial:
    reaction: str
    after: int  # requests the killed run got through
    concurrent: bool  # another run (the same account, its own token) ran beside the killed one
    same: bool  # the re-run ended in the uninterrupted run's state
    detail: str = ""


def kill_trials(reaction: str, *, concurrent: bool = False, mode: str = "in_process",
                points: list[int] | None = None) -> list[KillTrial]:
    """For each k (every request of an uninterrupted run, or `points`): a fresh issue with the account's 👀 as
    `reaction` says, a `labeled` run killed after its k-th request (beside an `opened` run of the same account when
    `concurrent`), then "Re-run jobs" of the killed run; the issue must end as the uninterrupted run leaves it."""
    out = []
    with world() as fake:
        driver = Driver(fake, mode)
        try:
            reference, length = _uninterrupted(fake, driver, reaction)
            n = 100
            for k in (range(length) if points is None else points):
                n += 1
                labeled, opened = launches(fake, "two-events", n, "fresh", reaction)
                fake.kill_after(k, token=fake.token)
                if concurrent:
                    driver.run_together(labeled, opened)
                else:
                    driver.run(labeled)
                fake.kill_after(None)
                rerun = driver.run(labeled.with_attempt(2))
                got = state(fake, n)
                out.append(KillTrial(reaction, k, concurrent, got == reference,
                                     "" if got == reference else f"exit {rerun.returncode}: {got} != {reference}"))
        finally:
            driver.close()
        assert not fake.violations, fake.violations
    return out


def _uninterrupted(fake, driver, reaction: str) -> tuple[tuple, int]:
    labeled, _ = launches(fake, "two-events", 1, "fresh", reaction)
    record = driver.run(labeled)
    assert record.returncode == 0 and ours(fake, 1) == 1, record.output
    return state(fake, 1), len(record.requests)
