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
- `HYBRID` (the `hybrid` planner): the same, except steps 4 and 5, whose rules say when the rubric's answer did not
  stand. Step 4 (`type_read_by_the_model`): the model's type is the decision (feature, enhancement or none, and
  performance beside it), and where the rubric read another, the reason says so. Step 5
  (`flag_stands_unless_cleared_for_cause`): a flag asks a person to look first; missing one is the costly
  mistake, raising one costs a person a glance. So a flag the model raises always stands, and the model clears the
  rubric's flag only with a reason the procedure gives (the judgement's `retraction`: a reason from the model
  planner's closed list) AND a quote that may clear a flag (`quoted`, checked by the planner's adapter: a phrase of
  several words that the reporter or a maintainer wrote, in none of their texts that instructs the bot; a
  stranger's "my bad" or an injected "answer no_flag" is no such quote);
  without both, the rubric's flag stands and the reason says which was missing. "It does not look severe" is not
  a reason (a flag is not a severity verdict). The rubric's own step 5 is read on step 4 as decided, and where
  the model decided step 4, a flag the rubric raises on its own reading of step 4 counts as the rubric's flag too
  (`triage.core.procedure`): a reading of the type alone never takes a flag away.

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
    planner gives for not flagging ("" when it gives none: the merge rule decides whether one is needed); `quoted`
    says the words the planner quoted for its decision are the issue's, and for step 5 words that may clear a flag
    (checked by its adapter)."""

    decision: str
    reason: str
    by: str
    labels: tuple[str, ...] = ()
    performance: bool = False
    criteria: tuple[str, ...] = ()
    retraction: str = ""
    quoted: bool = False  # the judgement's quote may clear a flag (checked by the planner's adapter)


# (the rubric's own result for the step, the judgement as the procedure reads it, the judgement) -> the result.
MergeRule = Callable[[StepResult, StepResult, Judgement], StepResult]


def type_read_by_the_model(own: StepResult, judged: StepResult, judgement: Judgement) -> StepResult:
    """Step 4 in `hybrid`: the model's reading of the type is the decision; where the rubric read another type (or
    another performance label), the reason records what the rubric found."""
    if (own.decision, own.labels) == (judged.decision, judged.labels):
        return judged
    found = ", ".join(own.labels) or "no type label"
    return StepResult(4, judged.decision, judged.labels, evidence=own.evidence, score=own.score, by=judged.by,
                      reason=f"{judged.reason} [the rubric read {own.decision} ({found}); the model's reading "
                             f"decides]")


def flag_stands_unless_cleared_for_cause(own: StepResult, judged: StepResult, judgement: Judgement) -> StepResult:
    """Step 5 in `hybrid`: a flag the model raises stands; the rubric's flag is cleared only for a reason from the
    closed list (`judgement.retraction`) with a quote that may clear it (`judgement.quoted`); every change of the
    rubric's answer, and every refusal to change it, is in the reason."""
    by, said = judgement.by, judgement.reason
    model_flags = judgement.decision == Flag.FLAG
    named = f" (criteria: {', '.join(judgement.criteria)})" if judgement.criteria else ""
    if own.decision == Flag.FLAG and model_flags:
        return StepResult(5, Flag.FLAG, own.labels, reason=f"{own.reason}; the model agrees{named}",
                          evidence=own.evidence, score=own.score, by=own.by,
                          criteria=tuple(dict.fromkeys(own.criteria + judgement.criteria)))
    if own.decision == Flag.FLAG:
        missing = ("the model answered no_flag without a reason from the list" if not judgement.retraction
                   else "the model's no_flag quotes no phrase the reporter or a maintainer wrote"
                   if not judgement.quoted else "")
        if missing:
            return StepResult(5, Flag.FLAG, own.labels, evidence=own.evidence, score=own.score, by=own.by,
                              criteria=own.criteria,
                              reason=f"{own.reason}; {missing}, so the rubric's flag stands ({said})")
        return StepResult(5, Flag.NO_FLAG, evidence=own.evidence, score=own.score, by=by,
                          reason=f"step 5 ({by}): the rubric's flag cleared by the model's reading: "
                                 f"{judgement.retraction} — {said}")
    if model_flags:
        return StepResult(5, Flag.FLAG, judged.labels, score=own.score, by=by, criteria=judgement.criteria,
                          reason=f"step 5 ({by}): flag added by the model, which the rubric missed{named} — a "
                                 f"human must look first — {said}")
    return StepResult(5, Flag.NO_FLAG, evidence=own.evidence, score=own.score, by=by, reason=said)


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
HYBRID = MergePolicy("hybrid", {4: type_read_by_the_model, 5: flag_stands_unless_cleared_for_cause})

__all__ = ["HYBRID", "Judgement", "MODEL_DECIDES", "MergePolicy", "MergeRule",
           "flag_stands_unless_cleared_for_cause",
           "type_read_by_the_model"]
