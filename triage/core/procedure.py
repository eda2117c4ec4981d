"""The seed's procedure (steps 0-6), written once. Every planner runs it; a planner only supplies decisions.

`run` walks the steps in order, once per issue whoever planned it, on the rubric's reading of the issue
(`triage.core.reading`: the issue read once, each step's own result computed once; a planner's gate reads the same
reading first, through `rubric_steps`). For each judgement step (1-6) a planner may hand in a `Judgement`
(`triage.core.merge`); a step without one is the rubric's own result, and a step with one is decided by the
planner's `MergePolicy` from the rubric's own result and the judgement. Each step is handed the decisions of the
steps it depends on, as decided here. The rules that tie the steps together are written here once, whoever decides:
where the procedure stops (step 0: a person classified it, before anything is read or any planner asked; step 1:
not in the queue), which steps a route's own team owns, an existing sub-oncall kept, the modules of the chosen
route only, a flag a person dismissed not raised again, no reproduction asked of a request, and which request for a
reproduction is posted (the performance wording for a report about speed or memory). `fold` turns the results into
the proposal a planner returns; the policy (`triage.core.policy`) still decides what is written.

May import: the standard library, `triage.config` (types), `triage.core`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from triage.config.bundle import Bundle
from triage.config.rubric import Rubric
from triage.core import steps
from triage.core.merge import MODEL_DECIDES, Judgement, MergePolicy
from triage.core.outcome import OutcomeFacts, derive_outcome
from triage.core.plan import Plan, PlannedComment
from triage.core.reading import Reading
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import Analysis, StepResult
from triage.core.vocab import CommentStep, Confidence, Flag, InQueue, Reproduction, Role, TypeKind

NOT_APPLICABLE = "not_applicable"  # a model's step-3 word: no module applies (the route's own team classifies)
Decisions = Mapping[int, Judgement]
NO_DECISIONS: Decisions = {}


@dataclass(frozen=True)
class Run:
    """The steps the procedure took for one issue, and the analysis they were decided on (None: step 0 stopped
    before the issue's text was read). `reading` holds the rubric's own step results it computed."""

    results: tuple[StepResult, ...]
    analysis: Analysis | None
    reading: Reading | None = field(default=None, compare=False, repr=False)


def reached_judgement(results: Sequence[StepResult]) -> bool:
    """Whether the procedure got past step 0 to the judgement steps. No planner is asked to judge an issue it did
    not (a person classified it, or no procedure ran because the issue is processed already): step 0 is a fact
    about labels, never a judgement."""
    return bool(results) and results[-1].step != 0


def step0(snapshot: IssueSnapshot, bundle: Bundle) -> StepResult:
    """Step 0 (a person classified it already): a fact about labels, never a judgement; it stops the procedure
    before the issue's text is read."""
    return steps.step0_already_triaged(snapshot, bundle.labels, bundle.rubric)


def reaches(route: StepResult, rubric: Rubric) -> frozenset[int]:
    """Which of steps 3-6 the procedure runs after step 2 decided `route`: all of them, or, on a route whose own
    team triages further, only the checks the rubric makes on every route (request types, possible high priority:
    facts about the issue, not triage the sub-team owns)."""
    if not route.stop:
        return _AFTER_ROUTE
    every = rubric.checks_on_every_route
    return frozenset(step for step, check in ((4, "types"), (5, "high_priority")) if check in every)


_AFTER_ROUTE = frozenset({3, 4, 5, 6})


@dataclass(frozen=True)
class _Context:
    snapshot: IssueSnapshot
    bundle: Bundle
    reading: Reading
    decisions: Decisions
    merge: MergePolicy

    def template(self, step: CommentStep) -> str | None:
        return self.bundle.step_templates.get(step)

    def decide(self, step: int, own: Callable[[], StepResult], read: Callable[[Judgement], StepResult],
               judgement: Judgement | None) -> StepResult:
        """The rubric's own result without a judgement; with one, the merge policy's rule for the step applied to
        the rubric's own result and the judgement as the procedure reads it (`read`), or, when the policy names no
        rule for the step, the judgement as read (the rubric's own result is then not computed)."""
        if judgement is None:
            return own()
        rule = self.merge.rule(step)
        return read(judgement) if rule is None else rule(own(), read(judgement), judgement)


def run(snapshot: IssueSnapshot, bundle: Bundle, decisions: Decisions = NO_DECISIONS, *,
        reading: Reading | None = None, analysis: Analysis | None = None,
        merge: MergePolicy = MODEL_DECIDES) -> Run:
    """Steps 0-6 in order, as far as the procedure goes for this issue. Step 0 (a person classified it already) is
    a fact about labels, never a judgement: no planner decides it. `merge` says how a judgement and the rubric's
    own result make a step's decision (`triage.core.merge`). `reading`: the rubric's reading of this issue that a
    planner already has (its gate read it), so no step is computed twice; `analysis`: an analysis to build one
    on."""
    first = step0(snapshot, bundle)
    if first.stop:
        return Run((first,), reading.analysis if reading is not None and reading.read else analysis, reading)
    if reading is None or not reading.fits(snapshot):
        reading = Reading(snapshot, bundle, analysis)
    c = _Context(snapshot, bundle, reading, decisions, merge)
    done = [first, _step1(c)]
    if done[-1].stop:
        return Run(tuple(done), reading.analysis, reading)
    route = _step2(c)
    reach = reaches(route, bundle.rubric)
    owned = f"{route.decision} owns further triage"
    modules = _step3(c, route.decision) if 3 in reach else steps.skipped(3, owned)
    types = _step4(c) if 4 in reach else steps.skipped(4, owned)
    flag = _step5(c, types) if 5 in reach else steps.skipped(5, owned)
    done += [route, modules, types, flag, _step6(c, types) if 6 in reach else steps.skipped(6, owned)]
    return Run(tuple(done), reading.analysis, reading)


def rubric_steps(reading: Reading) -> dict[int, StepResult]:
    """The rubric's own result of steps 1-5 along the rubric's own path (where `run` with no decisions would take
    the issue: no later step after step 1 sends it back, steps 3-5 only as `reaches` says), with the dismissed-flag
    rule: what a planner's gate reads before deciding what to ask (hybrid's `uncertain_steps`). Not a run: no
    plan is folded, and every result comes from `reading`, so no step is computed twice for the issue."""
    s1 = reading.step1()
    if s1.stop:
        return {1: s1}
    s2 = reading.step2()
    reach = reaches(s2, reading.bundle.rubric)
    found = {1: s1, 2: s2}
    if 3 in reach:
        found[3] = reading.step3(s2.decision)
    types = reading.step4() if 4 in reach else steps.skipped(4, f"{s2.decision} owns further triage")
    if 4 in reach:
        found[4] = types
    if 5 in reach:
        found[5] = _not_again(reading.step5(types), reading.snapshot, reading.bundle)
    return found


def _step1(c: _Context) -> StepResult:
    labels, template = c.bundle.labels, c.template(CommentStep.NOT_IN_QUEUE)

    def read(j: Judgement) -> StepResult:
        if j.decision == InQueue.NO:
            return StepResult(1, InQueue.NO, (labels.review, labels.marker), reason=j.reason, stop=True,
                              comment=template, by=j.by)
        return StepResult(1, InQueue.YES, reason=j.reason, by=j.by)

    return c.decide(1, c.reading.step1, read, c.decisions.get(1))


def _step2(c: _Context) -> StepResult:
    """An existing sub-oncall is always kept, whoever decides (the rubric's step 2 keeps it; so does the policy),
    and a route the queue does not have is no decision."""
    j, rubric = c.decisions.get(2), c.bundle.rubric
    existing = any(rubric.route_of_label(name) for name in c.snapshot.labels)

    def read(j: Judgement) -> StepResult:
        label = rubric.route_label(j.decision)  # None: the route's team adds no sub-oncall label
        return StepResult(2, j.decision, (label,) if label else (), reason=j.reason,
                          stop=j.decision in rubric.stop_after, by=j.by)

    judgement = None if j is None or existing or j.decision not in rubric.routes else j
    return c.decide(2, c.reading.step2, read, judgement)


def _step3(c: _Context, route: str) -> StepResult:
    """Only the route's own modules (or one the allowlist gives every route); none named: review, no guess."""
    labels = c.bundle.labels

    def read(j: Judgement) -> StepResult:
        chosen = tuple(dict.fromkeys(name for name in j.labels
                                     if labels.role(name) == Role.MODULE and labels.route(name) in (route, None)))
        if j.decision == NOT_APPLICABLE:  # "no module applies" cannot come with modules: its labels are not kept
            chosen = ()
        if j.decision == Confidence.LOW or not chosen:
            note = "" if j.decision == Confidence.LOW else f" [no module of route {route} named: sent to review]"
            return StepResult(3, Confidence.LOW, (labels.review,), reason=j.reason + note, by=j.by)
        # A word that claims no confidence (a model's not_applicable) is kept as said; the policy keeps only a
        # `Confidence` as the plan's confidence.
        decision = Confidence(j.decision) if j.decision in tuple(Confidence) else j.decision
        return StepResult(3, decision, chosen, reason=j.reason, by=j.by)

    return c.decide(3, lambda: c.reading.step3(route), read, c.decisions.get(3))


def _step4(c: _Context) -> StepResult:
    labels = c.bundle.labels

    def read(j: Judgement) -> StepResult:
        if j.decision == TypeKind.FEATURE:
            added: tuple[str, ...] = (labels.feature,)
        elif j.decision == TypeKind.ENHANCEMENT:
            added = (labels.enhancement,) + ((labels.performance,) if j.performance else ())
        else:
            added = ()
        return StepResult(4, j.decision, added, reason=j.reason, by=j.by)

    return c.decide(4, c.reading.step4, read, c.decisions.get(4))


def _step5(c: _Context, types: StepResult) -> StepResult:
    """Step 5 reads step 4 as decided (`types`). A flag a person already dismissed (they removed the review label
    the bot had added) is not raised again, whoever proposes it."""
    labels = c.bundle.labels

    def read(j: Judgement) -> StepResult:
        if j.decision != Flag.FLAG:
            return StepResult(5, Flag.NO_FLAG, reason=j.reason, by=j.by)
        return StepResult(5, Flag.FLAG, (labels.review,), reason=j.reason, by=j.by, criteria=j.criteria)

    result = c.decide(5, lambda: _own_step5(c, types), read, c.decisions.get(5))
    return _not_again(result, c.snapshot, c.bundle)


def _not_again(result: StepResult, snapshot: IssueSnapshot, bundle: Bundle) -> StepResult:
    """A flag a person dismissed is not raised again, whoever raised it."""
    if result.decision != Flag.FLAG or not snapshot.review_dismissed:
        return result
    return replace(result, decision=Flag.NO_FLAG, labels=(), criteria=(), reason=(
        f"{result.reason} [but a person already removed the bot's '{bundle.labels.review}' label: not flagged "
        "again]"))


def _own_step5(c: _Context, types: StepResult) -> StepResult:
    """The rubric's own step 5, on step 4 as decided. Where a merge rule weighs a judgement against it and another
    planner decided step 4, a flag the rubric raises on its own reading of step 4 is the rubric's flag too: a
    judgement about the type alone never takes a flag away without the rule's cause."""
    result = c.reading.step5(types)
    if result.decision == Flag.FLAG or c.merge.rule(5) is None or types.by == "rubric":
        return result
    alone = c.reading.step5(c.reading.step4())
    return alone if alone.decision == Flag.FLAG else result


def _step6(c: _Context, types: StepResult) -> StepResult:
    """Never for a request (step 4 found a type, whoever decided it); a missing reproduction of a slowdown gets the
    performance wording, whoever judged that it is missing."""
    labels, rubric = c.bundle.labels, c.bundle.rubric
    ask, ask_performance = c.template(CommentStep.NEEDS_REPRODUCTION), c.template(
        CommentStep.NEEDS_PERFORMANCE_REPRODUCTION)
    if types.labels:
        return StepResult(6, Reproduction.REQUEST, reason="step 6: a request, not a bug: no reproduction needed",
                          by=types.by)

    def read(j: Judgement) -> StepResult:
        if j.decision != Reproduction.NEEDS:
            return StepResult(6, Reproduction.HAS, reason=j.reason, by=j.by)
        return StepResult(6, Reproduction.NEEDS, (labels.reproduction,), reason=j.reason, by=j.by,
                          comment=steps.reproduction_template(c.reading.analysis, rubric, ask,  # type: ignore[arg-type]
                                                              ask_performance))

    return c.decide(6, c.reading.step6, read, c.decisions.get(6))


def fold(plan: Plan, results: tuple[StepResult, ...], bundle: Bundle, prefix: tuple[str, ...] = ()) -> Plan:
    """The steps' results as one proposal: their labels in order, the last comment, and the outcome the procedure
    reached (the policy derives the final outcome again, with the same `derive_outcome`, from the labels)."""
    by_step = {r.step: r for r in results}
    route, modules_step = by_step.get(2), by_step.get(3)
    flagged = 5 in by_step and by_step[5].decision == Flag.FLAG
    classified = modules_step is not None and not modules_step.skipped
    low = modules_step is not None and classified and modules_step.decision == Confidence.LOW
    add = [label for r in results for label in r.labels] + ([] if flagged else [bundle.labels.marker])
    comment_name = next((r.comment for r in reversed(results) if r.comment), None)
    outcome = derive_outcome(OutcomeFacts(
        flagged=flagged, not_in_queue=results[-1].step == 1, classified_by_person=results[-1].step == 0,
        route_stops=route is not None and route.stop, review=low, modules=classified and not low))
    stop_note = (f"stop: {route.decision} owns further triage",) if route is not None and route.stop \
        and not flagged else ()
    return plan.with_(
        outcome=outcome,
        add_labels=tuple(dict.fromkeys(add)),
        comment=PlannedComment(comment_name, "") if comment_name else None,  # the policy renders it
        sub_oncall=route.labels[0] if route is not None and route.labels else None,
        modules=tuple(modules_step.labels) if modules_step is not None and classified and not low else (),
        confidence=modules_step.decision if modules_step is not None and classified else None,
        reasons=prefix + tuple(r.reason for r in results if not r.skipped) + stop_note,
        steps=tuple(results),
    )


__all__ = ["Decisions", "Judgement", "NO_DECISIONS", "Run", "fold", "reached_judgement", "reaches", "rubric_steps",
           "run", "step0"]
