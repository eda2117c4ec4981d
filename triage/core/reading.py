"""The issue as the rubric reads it, once per issue: its `Analysis` and the rubric's own result of each step.

Every result is computed the first time something asks for it and kept, per step and per the input the step takes
from an earlier one (step 3 the route, step 5 step 4's decision). The procedure (`triage.core.procedure.run`) takes
a step's own result from here wherever it needs it (the rubric decides the step, or a merge rule weighs a
planner's judgement against it), and a planner's gate (hybrid's `uncertain_steps`) reads the same results before
the procedure runs: the issue is read once, each step function runs at most once per input, and the procedure's
flow runs once with whatever decisions the planner supplies.

A reading belongs to one issue as read: its title, body, comments and labels (`fits`). The label history (who
added each label, a dismissed flag) is not read here: step 0 and the dismissed-flag rule are the procedure's, on
the snapshot it is given, so the same reading serves the snapshot after its label events were read.

May import: the standard library, `triage.config` (types), `triage.core.snapshot`, `triage.core.steps`,
`triage.core.vocab`.
"""

from __future__ import annotations

from collections.abc import Callable

from triage.config.bundle import Bundle
from triage.core import steps
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import Analysis, StepResult
from triage.core.vocab import CommentStep

_Key = tuple[int, str]


class Reading:
    """The rubric's reading of one issue: `analysis` and `step1()` ... `step6()`, each computed once."""

    def __init__(self, snapshot: IssueSnapshot, bundle: Bundle, analysis: Analysis | None = None) -> None:
        self.snapshot = snapshot
        self.bundle = bundle
        self._analysis = analysis
        self._own: dict[_Key, StepResult] = {}

    @property
    def analysis(self) -> Analysis:
        """The issue read once and scored against every rubric topic (`triage.core.steps.analyse`)."""
        if self._analysis is None:
            self._analysis = steps.analyse(self.snapshot, self.bundle.rubric, self.bundle.templates.names)
        return self._analysis

    @property
    def read(self) -> bool:
        """Whether the issue's text has been read (the analysis made)."""
        return self._analysis is not None

    def fits(self, snapshot: IssueSnapshot) -> bool:
        """Whether this reading is of `snapshot`: the same text, comments and labels (its label history aside)."""
        mine = self.snapshot
        return snapshot is mine or (snapshot.number, snapshot.title, snapshot.body, snapshot.labels,
                                    snapshot.comments) == (mine.number, mine.title, mine.body, mine.labels,
                                                           mine.comments)

    def _kept(self, key: _Key, compute: Callable[[], StepResult]) -> StepResult:
        if key not in self._own:
            self._own[key] = compute()
        return self._own[key]

    def template(self, step: CommentStep) -> str | None:
        return self.bundle.step_templates.get(step)

    def step1(self) -> StepResult:
        b = self.bundle
        return self._kept((1, ""), lambda: steps.step1_not_in_queue(
            self.analysis, b.rubric, b.labels, self.template(CommentStep.NOT_IN_QUEUE)))  # type: ignore[arg-type]

    def step2(self) -> StepResult:
        b = self.bundle
        return self._kept((2, ""), lambda: steps.step2_route(self.snapshot, self.analysis, b.rubric, b.labels))

    def step3(self, route: str) -> StepResult:
        b = self.bundle
        return self._kept((3, route), lambda: steps.step3_modules(self.snapshot, self.analysis, b.rubric, b.labels,
                                                                  route))

    def step4(self) -> StepResult:
        b = self.bundle
        return self._kept((4, ""), lambda: steps.step4_types(self.analysis, b.rubric, b.labels))

    def step5(self, types: StepResult) -> StepResult:
        """Step 5 on step 4 as decided: the step reads only step 4's decision (is it a request?)."""
        b = self.bundle
        return self._kept((5, str(types.decision)), lambda: steps.step5_high_priority(
            self.analysis, b.rubric, b.labels, types))

    def step6(self) -> StepResult:
        b = self.bundle
        ask = self.template(CommentStep.NEEDS_REPRODUCTION)
        ask_performance = self.template(CommentStep.NEEDS_PERFORMANCE_REPRODUCTION)
        return self._kept((6, ""), lambda: steps.step6_needs_reproduction(
            self.analysis, b.rubric, b.labels, ask, ask_performance))  # type: ignore[arg-type]


__all__ = ["Reading"]
