"""The seed's procedure (steps 0-6), written once. Every planner runs it; a planner only supplies decisions.

`run` reads the issue once (one `Analysis`, or the one the caller already has) and walks the steps in order. For
each judgement step (1-6) a planner may hand in a `Judgement`; a step without one is decided by the rubric's own
step function (`triage.core.steps`). The sequencing is the same whoever decides: where the procedure stops, which
steps a route's own team owns, an existing sub-oncall kept, the modules of the chosen route only, a flag a person
dismissed not raised again, no reproduction asked of a request, and which request for a reproduction is posted
(the performance wording for a report about speed or memory). `fold` turns the results into the proposal a
planner returns; the policy (`triage.core.policy`) still decides what is written.

May import: the standard library, `triage.config` (types), `triage.core`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from triage.config.bundle import Bundle
from triage.core import steps
from triage.core.outcome import OutcomeFacts, derive_outcome
from triage.core.plan import Plan, PlannedComment
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import Analysis, StepResult
from triage.core.vocab import CommentStep, Confidence, Distributed, Flag, Reproduction, Role, TypeKind


@dataclass(frozen=True)
class Judgement:
    """One step's decision from a planner other than the rubric (a model's answer, through its adapter).

    `decision` is the step's word (a `triage.core.vocab` member, or a route name for step 2); `reason` is how the
    plan shows it; `labels` are step 3's module labels; `performance` says a step-4 enhancement is about speed or
    memory; `criteria` are the step-5 criteria a flag names; `combine`, when given, decides the step from the
    rubric's own result for it (the hybrid planner's rule for step 5: the model may add a flag, and remove one only
    for a procedural reason)."""

    decision: str
    reason: str
    by: str
    labels: tuple[str, ...] = ()
    performance: bool = False
    criteria: tuple[str, ...] = ()  # step 5: the criteria a flag names
    combine: Callable[[StepResult], StepResult] | None = None


NOT_APPLICABLE = "not_applicable"  # a model's step-3 word: no module applies (the route's own team classifies)
Decisions = Mapping[int, Judgement]
NO_DECISIONS: Decisions = {}


@dataclass(frozen=True)
class Run:
    """The steps the procedure took for one issue, and the analysis they were decided on (None: step 0 stopped
    before the issue's text was read)."""

    results: tuple[StepResult, ...]
    analysis: Analysis | None


@dataclass(frozen=True)
class _Context:
    snapshot: IssueSnapshot
    bundle: Bundle
    analysis: Analysis
    decisions: Decisions

    def template(self, step: CommentStep) -> str | None:
        return self.bundle.step_templates.get(step)


def run(snapshot: IssueSnapshot, bundle: Bundle, decisions: Decisions = NO_DECISIONS, *,
        analysis: Analysis | None = None) -> Run:
    """Steps 0-6 in order, as far as the procedure goes for this issue. Step 0 (a person classified it already)
    is a fact about labels, never a judgement: no planner decides it."""
    rubric = bundle.rubric
    first = steps.step0_already_triaged(snapshot, bundle.labels, rubric)
    if first.stop:
        return Run((first,), analysis)
    analysis = analysis or steps.analyse(snapshot, rubric, bundle.templates.names)
    c = _Context(snapshot, bundle, analysis, decisions)
    done = [first, _step1(c)]
    if done[-1].stop:
        return Run(tuple(done), analysis)
    route = _step2(c)
    owns = route.stop  # the route's team triages further itself
    owned = f"{route.decision} owns further triage"
    # Request types and possible high priority are facts about the issue, not triage the sub-team owns:
    # the rubric says on which routes they are checked.
    every_route = rubric.checks_on_every_route
    types = steps.skipped(4, owned) if owns and "types" not in every_route else _step4(c)
    done += [route, steps.skipped(3, owned) if owns else _step3(c, route.decision), types,
             steps.skipped(5, owned) if owns and "high_priority" not in every_route else _step5(c),
             steps.skipped(6, owned) if owns else _step6(c, types)]
    return Run(tuple(done), analysis)


def _step1(c: _Context) -> StepResult:
    j, labels = c.decisions.get(1), c.bundle.labels
    if j is None:
        return steps.step1_not_distributed(c.analysis, c.bundle.rubric, labels,
                                           c.template(CommentStep.NOT_DISTRIBUTED))
    if j.decision == Distributed.NO:
        return StepResult(1, Distributed.NO, (labels.review, labels.marker), reason=j.reason, stop=True,
                          comment=c.template(CommentStep.NOT_DISTRIBUTED), by=j.by)
    return StepResult(1, Distributed.YES, reason=j.reason, by=j.by)


def _step2(c: _Context) -> StepResult:
    """An existing sub-oncall is always kept, whoever decides (the rubric's step 2 keeps it; so does the policy)."""
    j, rubric = c.decisions.get(2), c.bundle.rubric
    existing = any(rubric.route_of_label(name) for name in c.snapshot.labels)
    if j is None or existing or j.decision not in rubric.routes:
        return steps.step2_route(c.snapshot, c.analysis, rubric, c.bundle.labels)
    label = rubric.route_label(j.decision)  # None: the route's team adds no sub-oncall label
    return StepResult(2, j.decision, (label,) if label else (), reason=j.reason,
                      stop=j.decision in rubric.stop_after, by=j.by)


def _step3(c: _Context, route: str) -> StepResult:
    """Only the route's own modules (or one the allowlist gives every route); none named: review, no guess."""
    j, labels = c.decisions.get(3), c.bundle.labels
    if j is None:
        return steps.step3_modules(c.snapshot, c.analysis, c.bundle.rubric, labels, route)
    chosen = tuple(dict.fromkeys(l for l in j.labels
                                 if labels.role(l) == Role.MODULE and labels.route(l) in (route, None)))
    if j.decision == NOT_APPLICABLE:  # "no module applies" cannot come with modules: its labels are not kept
        chosen = ()
    if j.decision == Confidence.LOW or not chosen:
        note = "" if j.decision == Confidence.LOW else f" [no module of route {route} named: sent to review]"
        return StepResult(3, Confidence.LOW, (labels.review,), reason=j.reason + note, by=j.by)
    # A word that claims no confidence (a model's not_applicable) is kept as said; the policy keeps only a
    # `Confidence` as the plan's confidence.
    decision = Confidence(j.decision) if j.decision in tuple(Confidence) else j.decision
    return StepResult(3, decision, chosen, reason=j.reason, by=j.by)


def _step4(c: _Context) -> StepResult:
    j, labels = c.decisions.get(4), c.bundle.labels
    if j is None:
        return steps.step4_types(c.analysis, c.bundle.rubric, labels)
    if j.decision == TypeKind.FEATURE:
        added: tuple[str, ...] = (labels.feature,)
    elif j.decision == TypeKind.ENHANCEMENT:
        added = (labels.enhancement,) + ((labels.performance,) if j.performance else ())
    else:
        added = ()
    return StepResult(4, j.decision, added, reason=j.reason, by=j.by)


def _step5(c: _Context) -> StepResult:
    """A flag a person already dismissed (they removed the review label the bot had added) is not raised again,
    whoever proposes it."""
    j, labels = c.decisions.get(5), c.bundle.labels
    if j is None or j.combine is not None:
        own = steps.step5_high_priority(c.analysis, c.bundle.rubric, labels, c.snapshot)
        return own if j is None else j.combine(own)
    if j.decision != Flag.FLAG:
        return StepResult(5, Flag.NO_FLAG, reason=j.reason, by=j.by)
    if c.snapshot.review_dismissed:
        return StepResult(5, Flag.NO_FLAG, by=j.by, reason=j.reason + (
            f" [a person already removed the bot's '{labels.review}' label: not flagged again]"))
    return StepResult(5, Flag.FLAG, (labels.review,), reason=j.reason, by=j.by, criteria=j.criteria)


def _step6(c: _Context, types: StepResult) -> StepResult:
    """Never for a request (step 4 found a type); a missing reproduction of a slowdown gets the performance
    wording, whoever judged that it is missing."""
    j, labels, rubric = c.decisions.get(6), c.bundle.labels, c.bundle.rubric
    ask, ask_performance = c.template(CommentStep.NEEDS_REPRODUCTION), c.template(
        CommentStep.NEEDS_PERFORMANCE_REPRODUCTION)
    if types.labels:
        return StepResult(6, Reproduction.REQUEST, reason="step 6: a request, not a bug: no reproduction needed",
                          by=types.by)
    if j is None:
        return steps.step6_needs_reproduction(c.analysis, rubric, labels, types, ask, ask_performance)
    if j.decision != Reproduction.NEEDS:
        return StepResult(6, Reproduction.HAS, reason=j.reason, by=j.by)
    return StepResult(6, Reproduction.NEEDS, (labels.reproduction,), reason=j.reason, by=j.by,
                      comment=steps.reproduction_template(c.analysis, rubric, ask, ask_performance))


def fold(plan: Plan, results: tuple[StepResult, ...], bundle: Bundle, prefix: tuple[str, ...] = ()) -> Plan:
    """The steps' results as one proposal: their labels in order, the last comment, and the outcome the procedure
    reached (the policy derives the final outcome again, with the same `derive_outcome`, from the labels)."""
    by_step = {r.step: r for r in results}
    route, modules_step = by_step.get(2), by_step.get(3)
    flagged = 5 in by_step and by_step[5].decision == Flag.FLAG
    classified = modules_step is not None and not modules_step.skipped
    low = classified and modules_step.decision == Confidence.LOW
    add = [label for r in results for label in r.labels] + ([] if flagged else [bundle.labels.marker])
    comment_name = next((r.comment for r in reversed(results) if r.comment), None)
    outcome = derive_outcome(OutcomeFacts(
        flagged=flagged, not_distributed=results[-1].step == 1, classified_by_person=results[-1].step == 0,
        route_stops=route is not None and route.stop, review=low, modules=classified and not low))
    stop_note = (f"stop: {route.decision} owns further triage",) if route is not None and route.stop \
        and not flagged else ()
    return plan.with_(
        outcome=outcome,
        add_labels=tuple(dict.fromkeys(add)),
        comment=PlannedComment(comment_name, "") if comment_name else None,  # the policy renders it
        sub_oncall=route.labels[0] if route is not None and route.labels else None,
        modules=tuple(modules_step.labels) if classified and not low else (),
        confidence=modules_step.decision if classified else None,
        reasons=prefix + tuple(r.reason for r in results if not r.skipped) + stop_note,
        steps=tuple(results),
    )


__all__ = ["Decisions", "Judgement", "NO_DECISIONS", "Run", "fold", "run"]
