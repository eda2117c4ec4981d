"""What a planner is: something that decides, once per issue, what it asks of the one procedure. Its proposal is a
request, never a decision.

A planner says what it decides in `decide` (a `Decided`: its judgements of the steps it was asked, the merge rule
that weighs them against the rubric's own results, what it spent); `Decided.proposal` runs the procedure
(`triage.core.procedure.run`) on them once and folds the result into a `Plan` (labels to add, perhaps a template,
the outcome it claims, reasons). A planner that supplies a whole proposal instead (the replay of a saved plan, a
fork's own) overrides `propose`; its `decide` then proposes when asked. Whatever comes out,
`triage.planners.plan_issue` passes it through `triage.core.policy.enforce` before anything is written.

Deciding and proposing are two calls so that the service can propose again for the same issue once it has read
more of it (a flag proposed, then the label events read: a person dismissed an earlier flag) without asking the
planner again: a model is paid once per issue.

A planner also says what the CLI and the Action need to know about it before and after a run, through this
interface (nobody probes a planner for its parts): whether it asks a model (`needs_prompt`: its queue's prompt is
checked before any issue) and what it spent (`usage_totals`: run totals; each plan carries its own issue's usage,
a failed model call's cost included).

May import: the standard library, `triage.config`, `triage.core`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from triage.config.bundle import Bundle
from triage.core import procedure
from triage.core.merge import MODEL_DECIDES, MergePolicy
from triage.core.plan import ModelFallback, Plan
from triage.core.procedure import NO_DECISIONS, Decisions
from triage.core.reading import Reading
from triage.core.snapshot import IssueSnapshot


class Decided:
    """A planner's decisions for one issue, made once; `proposal(snapshot)` is the plan they make on the issue as
    read (the same issue, perhaps with more of it read since: its label events)."""

    def proposal(self, snapshot: IssueSnapshot) -> Plan:
        raise NotImplementedError


@dataclass(frozen=True)
class Fixed(Decided):
    """A proposal that needs no procedure (the issue is processed already, or a saved plan)."""

    plan: Plan

    def proposal(self, snapshot: IssueSnapshot) -> Plan:
        return self.plan


@dataclass(frozen=True)
class Judged(Decided):
    """Judgements for the procedure: `decisions` (none: the rubric decides every step) merged by `merge`, on the
    rubric's `reading` of the issue. The plan says who decided (`planner`), starts with `prefix` and ends with
    `after` among its reasons, and carries what the planner spent (`usage`) and why it fell back (`fallback`)."""

    bundle: Bundle
    reading: Reading | None = field(default=None, repr=False)
    decisions: Decisions = field(default_factory=lambda: NO_DECISIONS)
    merge: MergePolicy = MODEL_DECIDES
    planner: str = "rubric"
    prefix: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    usage: dict[str, Any] | None = None
    fallback: ModelFallback | None = None

    def proposal(self, snapshot: IssueSnapshot) -> Plan:
        done = procedure.run(snapshot, self.bundle, self.decisions, reading=self.reading, merge=self.merge)
        plan = procedure.fold(Plan(issue=snapshot.number), done.results, self.bundle, self.prefix)
        changes: dict[str, Any] = {}
        if self.planner != plan.planner:
            changes["planner"] = self.planner
        if self.after:
            changes["reasons"] = plan.reasons + self.after
        if self.usage is not None:
            changes["usage"] = self.usage
        if self.fallback is not None:
            changes["fallback"] = self.fallback
        return plan.with_(**changes) if changes else plan


class Planner:
    """The base every planner derives from (a fork's too): override `decide` (judgements for the procedure) or
    `propose` (a whole proposal)."""

    name: str = ""
    # A planner that asks a model: the queue's prompt template must exist and parse before any issue is planned.
    needs_prompt: bool = False

    def decide(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Decided:
        """What this planner decides for the issue, once (a model is asked here, at most once)."""
        if type(self).propose is Planner.propose:
            raise NotImplementedError(f"planner {self.name!r} defines neither decide nor propose")
        return Proposing(self, bundle, force)

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        return self.decide(snapshot, bundle, force=force).proposal(snapshot)

    def usage_totals(self) -> dict[str, Any] | None:
        """What the run spent so far (issues asked, calls, tokens, estimated cost, fallbacks, latency); None for a
        planner that spends nothing."""
        return None


@dataclass(frozen=True)
class Proposing(Decided):
    """A planner that proposes whole plans (replay, a fork's): each proposal is asked of it."""

    planner: Any  # a Planner, or any object with its `propose`
    bundle: Bundle
    force: bool

    def proposal(self, snapshot: IssueSnapshot) -> Plan:
        return self.planner.propose(snapshot, self.bundle, force=self.force)


__all__ = ["Decided", "Fixed", "Judged", "Planner", "Proposing"]
