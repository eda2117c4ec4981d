"""The one executor: the only place that writes to GitHub, and the only place that decides whether a run writes.

`executor_for(..., dry_run=...)` is where the dry run is decided, once per run: a live run gets a `LiveExecutor`
over the GitHub client; a dry run (and plan mode, which is a dry run; shadow mode writes through no executor at
all) gets a `DryRun`, which holds no client, so nothing it is handed can reach GitHub, by construction. Both record
what they applied (`Applied`), so a report says what reached GitHub, or what would have.

The live executor runs one issue's `Effects` (`triage.core.effects`) in their order, and owns around them:
- the request budget and the write pacing: before the first write, all of the issue's writes (the claim and its
  reads included) must fit in what is left, or none is started (`room_for`): never a comment without its labels
  because a budget ran out in between;
- the comment claim and its settle (`triage.service.claim`): only the run that wins the claim posts; after posting,
  a twin of the bot's own comment posted by another run at the same moment is deleted (the earlier kept);
- the record of what actually reached GitHub, filled in as each write succeeds, so a partial failure is reported
  truly. It stops at the first failure: the caller reports it, and a re-run completes it (the effects' order makes
  that safe).
Nothing here changes what was decided: a comment the claim gives to another run, or this run's copy deleted as the
later twin, is recorded in `Applied.notes`; the plan and its effects stay as the policy made them.

May import: the standard library, `triage.config.sync`, `triage.core`, `triage.service.claim`,
`triage.service.ports`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from triage.core.effects import AddLabels, DeleteTwin, Effects, PostComment, React
from triage.service.claim import CLAIM_REQUESTS, CLAIM_WAIT_SECONDS, CLAIM_WRITES, may_post, settle
from triage.service.ports import GitHubPort


@dataclass
class Applied:
    """What reached GitHub for one issue (filled in as writes succeed), or, in a dry run, nothing: `dry_run` says
    the effects were only recorded. `notes`: what the executor found that changed what was written (another run's
    claim, this run's comment deleted as the later twin)."""

    labels: tuple[str, ...] = ()
    comment_template: str | None = None
    comment_id: int | None = None
    reactions: tuple[str, ...] = ()
    deleted: tuple[int, ...] = ()  # ids of the bot's own comments deleted (twins)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False


class Executor(Protocol):
    """Runs what was decided: one issue's effects, and the labels-sync task's label creations."""

    @property
    def dry_run(self) -> bool: ...

    def execute(self, effects: Effects, applied: Applied | None = None) -> Applied: ...

    def sync_labels(self, changes: list[Any]) -> bool:
        """Create the labels `changes` (triage.config.sync) asks for; True when they were created."""


class DryRun:
    """Writes nothing, whatever it is handed: it has no client. Records the effects as not applied."""

    dry_run = True

    def execute(self, effects: Effects, applied: Applied | None = None) -> Applied:
        applied = applied if applied is not None else Applied()
        applied.dry_run = True
        return applied

    def sync_labels(self, changes: list[Any]) -> bool:
        return False


class LiveExecutor:
    """Writes one issue's effects to GitHub through `client`, as the bot's account `own_login`."""

    dry_run = False

    def __init__(self, client: GitHubPort, repo: str, *, own_login: str | None,
                 clock: Callable[[], float] = time.time, claim_wait: float = CLAIM_WAIT_SECONDS) -> None:
        self.client = client
        self.repo = repo
        self.own_login = own_login or None
        self.clock = clock
        self.claim_wait = claim_wait

    def execute(self, effects: Effects, applied: Applied | None = None) -> Applied:
        applied = applied if applied is not None else Applied()
        if not effects:
            return applied
        requests, writes = cost(effects)
        self.client.room_for(requests, writes)  # all of them fit, or BudgetExhausted with nothing sent
        for effect in effects.items:
            if isinstance(effect, React):
                self.client.add_reaction(self.repo, effect.comment_id, effect.content)
                applied.reactions += (effect.content,)
            elif isinstance(effect, DeleteTwin):
                # The author is the configured login's (own_twins checked it); the client checks it once more.
                comment = {"id": effect.comment_id, "user": {"login": effect.author}}
                self.client.delete_own_comment(self.repo, comment, self.own_login or "")
                applied.deleted += (effect.comment_id,)
            elif isinstance(effect, PostComment):
                self._comment(effects.issue, effect, applied)
            elif isinstance(effect, AddLabels):
                self.client.add_labels(self.repo, effects.issue, list(effect.labels))
                applied.labels = effect.labels
        return applied

    def _comment(self, number: int, post: PostComment, applied: Applied) -> None:
        """Claim, post, settle: two runs at once (a sweep beside an event run, a workflow without the per-issue
        group) post the comment once (triage.service.claim)."""
        own = frozenset({self.own_login}) if self.own_login else None
        if post.claim_first:
            claimed = may_post(self.client, self.repo, number, post.template, own, clock=self.clock,
                               wait=self.claim_wait)
            if not claimed.post:  # not planned again (a planner can be slow or paid): the comment is not posted
                applied.notes.append(claimed.why)
                return
        # After a failure GitHub may have acted on (5xx, timeout), the client reads the comments and takes only a
        # comment of this account with this very body as the one stored; otherwise it posts again.
        posted = self.client.create_comment(self.repo, number, post.body, own_login=self.own_login)
        posted = posted if isinstance(posted, dict) else {}
        applied.comment_template = post.template
        applied.comment_id = posted.get("id") if isinstance(posted.get("id"), int) else None
        why, removed = settle(self.client, self.repo, number, post.template, post.body, posted, self.own_login)
        applied.deleted += removed
        if why:  # ours was the later twin: another run's copy of the same comment stays
            applied.comment_template = applied.comment_id = None
            applied.notes.append(why)

    def sync_labels(self, changes: list[Any]) -> bool:
        from triage.config.sync import apply_sync

        apply_sync(self.client, self.repo, changes)
        return True


def cost(effects: Effects) -> tuple[int, int]:
    """(requests, writes among them) that `effects` can take at most: the claim's reads and take-over, and the
    read after posting with one twin deleted, included."""
    requests = writes = len(effects.items)
    if effects.comment is not None and effects.comment.claim_first:
        requests += CLAIM_REQUESTS
        writes += CLAIM_WRITES
    return requests, writes


def executor_for(client: GitHubPort, repo: str, *, dry_run: bool, own_login: str | None,
                 clock: Callable[[], float] = time.time, claim_wait: float = CLAIM_WAIT_SECONDS) -> Executor:
    """The run's executor: the one place the dry-run setting decides anything."""
    if dry_run:
        return DryRun()
    return LiveExecutor(client, repo, own_login=own_login, clock=clock, claim_wait=claim_wait)


__all__ = ["Applied", "DryRun", "Executor", "LiveExecutor", "cost", "executor_for"]
