"""What one step of the procedure decided (`StepResult`), whoever decided it: the rubric's step function
(`triage.core.steps`, which re-exports both names), or the procedure from a planner's judgement.

May import: the standard library, `triage.core.vocab`, `triage.text.matching` (the evidence type).
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.core.vocab import SKIPPED
from triage.text.matching import Evidence


@dataclass(frozen=True)
class StepResult:
    """What one step decided. `stop` ends the procedure after this step; `skipped` says the step did not
    apply (its reason says why) and decided nothing."""

    step: int
    decision: str
    labels: tuple[str, ...] = ()
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()
    comment: str | None = None  # a template name
    stop: bool = False
    skipped: bool = False
    score: float | None = None  # the decision's score, where the step has one (step 5: the high-priority score)
    by: str = "rubric"  # which planner decided this step (hybrid plans mix the rubric's and the model's)
    criteria: tuple[str, ...] = ()  # step 5's flag: the criteria it names (the rubric's best, or the model's)


def skipped(step: int, why: str) -> StepResult:
    return StepResult(step, SKIPPED, reason=f"step {step}: {why}", skipped=True)


__all__ = ["StepResult", "skipped"]
