"""How a step is decided when a planner other than the rubric judged it: a `Judgement`, and the merge rules that
put it together with the rubric's own result for the step.

The procedure (`triage.core.procedure`) decides every judged step the same way: it reads the planner's judgement
as a step result (`judged`: the labels, template and guards the procedure gives that decision) and applies the
planner's `MergePolicy` for that step, a rule `(own, judged, judgement) -> result` over the rubric's own result
(`own`); where the policy names no rule, `judged` is the decision (and `own` is not computed). The rules are named
here, so "how hybrid decides step 5" is read in one place. Whatever a step ends with says in its reason who decided
it, and a rule that overrides the rubric's own result says why the rubric's answer did not stand. The procedure's
own guards (an existing sub-oncall kept, the route's modules only, a dismissed flag not raised again, no
reproduction asked of a request) hold whatever a rule returns.

- `MODEL_DECIDES` (the `llm` planner): no rule; a judgement is its step's decision.
- `HYBRID` (the `hybrid` planner): the same, except step 5, which `flag_added_or_removed_for_cause` decides: a flag
  asks a person to look first; missing one is the costly mistake, raising one costs a person a glance. So the
  model may ADD a flag the rubric missed, and REMOVE the rubric's only with a procedural reason (the judgement's
  `retraction`: not a bug report; the matched words are not the reporter's account of this bug), recorded in the
  step's reason and so in the plan; "it does not look severe" is not one (a flag is not a severity verdict), so
  without one the rubric's flag stands and the plan says the model disagreed.

May import: the standard library, `triage.core.steps` (StepResult), `triage.core.vocab`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from triage.core.steps import StepResult
from triage.core.vocab import Flag


@dataclass(frozen=True)
class Judgement:
    """One step's decision from a planner other than the rubric (a model's answer, through its adapter).

    `decision` is the step's word (a `triage.core.vocab` member, or a route name for step 2); `reason` is how the
    plan shows it; `labels` are step 3's module labels; `performance` says a step-4 enhancement is about speed or
    memory; `criteria` are the step-5 criteria a flag names; `retraction` is the procedural reason, in words, the
    planner gives for taking back the rubric's decision ("" when it gives none: the merge rule decides whether one
    is needed)."""

    decision: str
    reason: str
    by: str
    labels: tuple[str, ...] = ()
    performance: bool = False
    criteria: tuple[str, ...] = ()
    retraction: str = ""
    quoted: bool = False  # the judgement's quote is words of the issue (checked by the planner's adapter)


# (the rubric's own result for the step, the judgement as the procedure reads it, the judgement) -> the result.
MergeRule = Callable[[StepResult, StepResult, Judgement], StepResult]


def flag_added_or_removed_for_cause(own: StepResult, judged: StepResult, judgement: Judgement) -> StepResult:
    """Step 5 in `hybrid`: the model may add a flag the rubric missed, and remove the rubric's flag only for a
    procedural reason (`judgement.retraction`); every change of the rubric's answer is in the reason."""
    by, said = judgement.by, judgement.reason
    model_flags = judgement.decision == Flag.FLAG
    named = f" (criteria: {', '.join(judgement.criteria)})" if judgement.criteria else ""
    if own.decision == Flag.FLAG:
        if model_flags:
            return StepResult(5, Flag.FLAG, own.labels, reason=f"{own.reason}; the model agrees{named}",
                              evidence=own.evidence, score=own.score, by=own.by,
                              criteria=tuple(dict.fromkeys(own.criteria + judgement.criteria)))
        if not judgement.retraction:
            return StepResult(5, Flag.FLAG, own.labels, evidence=own.evidence, score=own.score, by=own.by,
                              criteria=own.criteria,
                              reason=f"{own.reason}; the model answered no_flag without a procedural reason, so "
                                     f"the rubric's flag stands ({said})")
        return StepResult(5, Flag.NO_FLAG, evidence=own.evidence, score=own.score, by=by,
                          reason=f"step 5 ({by}): the rubric's flag removed for a procedural reason: "
                                 f"{judgement.retraction} — {said}")
    if not model_flags:
        return own
    return StepResult(5, Flag.FLAG, judged.labels, score=own.score, by=by, criteria=judgement.criteria,
                      reason=f"step 5 ({by}): flag added by the model, which the rubric missed{named} — a human "
                             f"must look first — {said}")


@dataclass(frozen=True)
class MergePolicy:
    """Per step, the rule that merges a judgement with the rubric's own result. On a step it names no rule for,
    the judgement is the step's decision (its reason names the planner that decided), and the rubric's own result
    for that step is not computed."""

    name: str
    rules: Mapping[int, MergeRule] = field(default_factory=dict)

    def rule(self, step: int) -> MergeRule | None:
        return self.rules.get(step)


MODEL_DECIDES = MergePolicy("model decides")
HYBRID = MergePolicy("hybrid", {5: flag_added_or_removed_for_cause})

__all__ = ["HYBRID", "Judgement", "MODEL_DECIDES", "MergePolicy", "MergeRule", "flag_added_or_removed_for_cause"]
