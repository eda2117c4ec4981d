"""What the service returns: one issue's result and a sweep's, typed, for the Action and the CLI to report (the
service itself prints nothing). An issue's result says what reached GitHub, not only what was planned, so a run
that failed halfway reports the truth.

May import: the standard library, `triage.config.words`, `triage.core`, `triage.service.executor`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.config.words import QueueWords
from triage.core.effects import Effects
from triage.core.plan import Plan
from triage.core.vocab import Outcome
from triage.service.executor import Applied


@dataclass
class IssueResult:
    """One issue: its plan (the policy's), its effects (every write it decided), what was written (`applied`; in a
    dry run, nothing: the effects are what would have been), or why it failed or was left."""

    number: int | None
    title: str = ""
    url: str = ""
    plan: Plan | None = None
    effects: Effects | None = None
    applied: Applied = field(default_factory=Applied)
    dry_run: bool = False
    forced: bool = False
    error: str | None = None
    fatal: bool = False  # the error will repeat for every other issue (credentials, permission, budget)
    out_of_budget: bool = False  # our own budget (API reserve, pacing, time) refused the call: nothing was sent
    left: str | None = None  # not triaged on purpose (left the queue, waiting for a person, ...): why
    opted_out: bool = False  # it carries the opt-out label (then `left` says so, and nothing was written)
    updated_at: str = ""  # GitHub's `updated_at` of the issue as this run read it (the plans file records it)
    requests: int = 0  # API requests this issue cost
    before_cutoff: bool = False  # created before not-before (labels-only mode): its comment was dropped
    words: QueueWords | None = None  # the queue's words for the outcome (the plan keeps the stable value)
    marker: str = ""  # the queue's marker label (the summary names it once instead of in every row)
    criteria: dict[str, str] = field(default_factory=dict)  # step 5's criteria: id -> the rubric's description
    labels_before: tuple[str, ...] = ()  # the issue's labels as this run read them, before it wrote anything
    # Forced: labels of a team, module or type the issue keeps that the plan does not name.
    kept: tuple[str, ...] = ()

    @property
    def triaged(self) -> bool:
        """Planned through, neither failed nor left: what every count of "triaged" counts (the outputs, the log
        line, the step summary)."""
        return self.plan is not None and not self.error and not self.left

    @property
    def labels_written(self) -> tuple[str, ...]:
        if self.dry_run:
            return self.plan.add_labels if self.plan else ()
        return self.applied.labels

    @property
    def comment_posted(self) -> str | None:
        if self.dry_run:
            return self.plan.comment.template if self.plan and self.plan.comment else None
        return self.applied.comment_template

    @property
    def outcome(self) -> str:
        if self.error:
            return "error"
        if self.left:
            return "left"
        if not self.plan:
            return "nothing_to_do"
        return self.words.outcome(self.plan.outcome) if self.words else self.plan.outcome

    @property
    def needs_person(self) -> bool:
        return self.plan is not None and not self.error and self.plan.outcome in (
            Outcome.HIGH_PRIORITY, Outcome.NEEDS_REVIEW, Outcome.NOT_IN_QUEUE)


@dataclass
class SweepResult:
    query: str
    found: int = 0  # queue issues the search returned (all pages read before any write)
    results: list[IssueResult] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # why -> how many, not counted against the budget
    left: int = 0  # found but not reached: the budget (issues, time or API) ran out; the next sweep takes them
    stopped: str | None = None  # why the sweep ended early, if it did
    not_before: str | None = None  # the cut-off (not-before), if one was set
    not_before_mode: str = "skip"
    before_cutoff: int = 0  # queue issues created before the cut-off: not triaged (skip), or labelled only
    dry_run: bool = False  # nothing was written: every count is what the sweep would have done
    marker: str = ""  # the queue's marker label

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    @property
    def failed(self) -> list[IssueResult]:
        return [r for r in self.results if r.error]

    @property
    def triaged(self) -> list[IssueResult]:
        return [r for r in self.results if r.triaged]
