"""Random schedules of runs at once through the comment claim (triage.service.claim), on GitHub in memory with a
virtual clock: which run sends its next request, and how much time passes before it, is chosen by a seeded random
scheduler, so one seed is one interleaving and it replays exactly. Any run can stall between any two requests (a
slow GitHub, a retried POST), and any run can be killed before any request and then re-run.

Each run does what the triage service and its executor do for one issue that needs a comment, with the service's
own functions: read the issue and its comments (deleting a twin of ours it finds: `own_twins`), leave it if the
marker or the comment is there, claim (`may_post`), post, check (`settle`), add the labels. The claim's sleeps and clocks are
the scheduler's. What must hold at the end of every schedule: exactly one comment of ours from the template, the
labels on, at most one 👀 of the account.

May import: the standard library, `memory_github`, `triage.config`, `triage.core`, `triage.service.claim`.
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

from memory_github import EPOCH, MemoryGitHub

from triage.config.templates import comment_marker
from triage.core.effects import own_twins
from triage.core.policy import already_posted
from triage.core.snapshot import snapshot_from_json
from triage.service.claim import may_post, seen, settle

REPO = "octo-org/octo-repo"
TEMPLATE = "not_distributed"
LABELS = ["oncall: distributed", "triage review", "ptd-bot-triaged"]
# The account's 👀 before the runs: its age in seconds (None: none).
BEFORE = {"none": None, "30 days": 30 * 86400.0, "60 s": 60.0, "another workflow's": 0.0}
BODY = f"Not distributed.\n\n{comment_marker(TEMPLATE)}\n"  # the template as rendered for the issue
STALLS = (0.0, 0.0, 0.0, 0.2, 1.0, 4.0, 12.0)  # time that may pass before a request: mostly none, sometimes long


class Killed(Exception):
    """The run's runner is gone: nothing more reaches GitHub."""


class Scheduler:
    """Runs take turns: before each request (and to wake from a sleep) a run parks; the scheduler picks the next one
    whose wake time has come, after letting a random stall of time pass."""

    def __init__(self, rng: random.Random):
        self.rng, self.now = rng, 0.0
        self._cv = threading.Condition()
        self._parked: dict[str, float] = {}  # run -> wake time, while it waits for its turn
        self._turn: str | None = None
        self._done: set[str] = set()

    def park(self, run: str, wake: float | None = None) -> None:
        with self._cv:
            self._parked[run] = self.now if wake is None else wake
            self._cv.notify_all()
            while self._turn != run:
                self._cv.wait()
            self._turn = None
            del self._parked[run]

    def finish(self, run: str) -> None:
        with self._cv:
            self._done.add(run)
            self._cv.notify_all()

    def drive(self, runs: list[str]) -> list[str]:
        """Until every run has finished; returns the order in which runs got their turns."""
        order = []
        with self._cv:
            while True:
                self._cv.wait_for(lambda: all(r in self._parked or r in self._done for r in runs))
                waiting = [r for r in runs if r in self._parked]
                if not waiting:
                    return order
                self.now += self.rng.choice(STALLS)
                due = [r for r in waiting if self._parked[r] <= self.now]
                if not due:
                    self.now = min(self._parked[r] for r in waiting)
                    due = [r for r in waiting if self._parked[r] <= self.now]
                run = self.rng.choice(due)
                order.append(run)
                self._turn = run
                self._cv.notify_all()
                self._cv.wait_for(lambda: self._turn is None)


class _Run:
    """One run's view of GitHub: every request parks first; the run dies before its `kill_at`-th request."""

    def __init__(self, github: MemoryGitHub, sched: Scheduler, name: str, kill_at: int | None):
        self.github, self.sched, self.name, self.kill_at = github, sched, name, kill_at
        self.sent = 0

    def __getattr__(self, method):
        target = getattr(self.github, method)
        if method not in ("get_issue", "list_comments", "claim_issue", "release_claim", "create_comment",
                          "delete_own_comment", "add_labels"):
            return target

        def call(*args, **kwargs):
            self.sched.park(self.name)
            if self.kill_at is not None and self.sent >= self.kill_at:
                raise Killed(self.name)
            self.sent += 1
            return target(*args, **kwargs)

        return call

    def sleep(self, seconds: float) -> None:
        self.sched.park(self.name, self.sched.now + seconds)


def flow(client: _Run, number: int, own: frozenset[str], sched: Scheduler) -> dict:
    """One run's work on the issue, in the service's order; returns what it did."""
    did = {"posted": 0}
    (login,) = own
    issue = client.get_issue(REPO, number)
    comments = client.list_comments(REPO, number) if issue["comments"] else []
    for twin in own_twins(seen(comments), login, (TEMPLATE,), lambda _: BODY):
        client.delete_own_comment(REPO, {"id": twin.comment_id, "user": {"login": twin.author}}, login)
    snapshot = snapshot_from_json(issue, comments)
    if LABELS[-1] in snapshot.labels:
        return did
    if not already_posted(snapshot, TEMPLATE, own):
        claim = may_post(client, REPO, number, TEMPLATE, own, clock=lambda: EPOCH + sched.now, sleep=client.sleep)
        if claim.post:
            posted = client.create_comment(REPO, number, BODY, own_login=login)
            did["posted"] = 1
            settle(client, REPO, number, TEMPLATE, BODY, posted, login)
    client.add_labels(REPO, number, LABELS[1:])
    return did


@dataclass
class Outcome:
    seed: int
    before: str
    kills: dict[str, int]
    order: list[str] = field(default_factory=list)
    posted: int = 0  # comments posted in all (2: one was a duplicate, deleted again)
    problems: list[str] = field(default_factory=list)


def schedule(seed: int, before: str, *, runs: int = 2, kill: bool = False) -> Outcome:
    """One random schedule of `runs` runs on one issue; with `kill`, one of them dies before a random request and
    is run again, alone, after the others have finished (and a random while later)."""
    rng = random.Random(seed)
    sched = Scheduler(rng)
    github = MemoryGitHub(clock=lambda: EPOCH + sched.now)
    own = frozenset({github.bot_login})
    github.add_issue(REPO, 1, title="t", labels=LABELS[:1])
    if BEFORE[before] is not None:
        github.react(1, "eyes", login=github.bot_login, repo=REPO, at=EPOCH - BEFORE[before])
    names = [f"run{i}" for i in range(runs)]
    kills = {rng.choice(names): rng.randint(0, 9)} if kill else {}
    out = Outcome(seed, before, kills)
    results: dict[str, dict] = {}

    def go(name: str) -> None:
        try:
            results[name] = flow(_Run(github, sched, name, kills.get(name)), 1, own, sched)
        except Killed:
            results[name] = {"posted": 0, "killed": True}
        finally:
            sched.finish(name)

    threads = [threading.Thread(target=go, args=(n,), daemon=True) for n in names]
    for t in threads:
        t.start()
    out.order = sched.drive(names)
    for t in threads:
        t.join(10)
    out.posted = sum(r.get("posted", 0) for r in results.values())
    if kills:  # "Re-run jobs": the killed run again, alone, a while later
        sched.now += rng.choice((0.0, 2.0, 30.0, 3600.0))

        def rerun() -> None:
            try:
                results["rerun"] = flow(_Run(github, sched, "rerun", None), 1, own, sched)
            finally:
                sched.finish("rerun")

        thread = threading.Thread(target=rerun, daemon=True)
        thread.start()
        out.order += sched.drive(["rerun"])
        thread.join(10)
        out.posted += results.get("rerun", {}).get("posted", 0)
    marker = comment_marker(TEMPLATE)
    ours = [c for c in github.comments(REPO, 1) if marker in c["body"] and c["user"]["login"] == github.bot_login]
    eyes = [r for r in github._issue(REPO, 1).reactions if r["user"]["login"] == github.bot_login]
    if len(ours) != 1:
        out.problems.append(f"{len(ours)} comments of ours from the template")
    if len(eyes) > 1:
        out.problems.append(f"{len(eyes)} 👀 of the account")
    if LABELS[-1] not in github.labels(REPO, 1):
        out.problems.append("the marker label is missing")
    return out
