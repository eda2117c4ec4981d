"""Step 5 in the `hybrid` planner: what the model may do with the rubric's high-priority flag.

A flag asks a person to look first; missing one is the costly mistake, raising one costs a person a glance. So in
`hybrid`, whenever the model was asked at all:
- it may ADD a flag the rubric missed (it answered `flag`, naming criteria);
- it may REMOVE the rubric's flag only with a procedural reason from the schema (`removal_reason`: not a bug
  report; the matched words are not the reporter's account of this bug), recorded in the step's reason and so in
  the plan; "it does not look severe" is not one (a flag is not a severity verdict), so without such a reason the
  rubric's flag stands, and the plan says the model disagreed;
- a flag a person already dismissed is never raised again, whoever proposes it.

May import: the standard library, `triage.core`, `triage.llm.schema` (the reasons' names and texts).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from triage.core.steps import StepResult
from triage.core.vocab import Flag
from triage.llm.schema import REMOVAL_REASON_TEXT


def hybrid_step5(rubric: StepResult, part: Mapping[str, Any], *, review: str, dismissed: bool, by: str,
                 said: str) -> StepResult:
    """The step-5 result from the rubric's (`rubric`) and the model's answer (`part`, the schema's high_priority
    object); `said` is the model's reason as the plan shows it, `review` the review label."""
    model_flags = part.get("decision") == Flag.FLAG
    criteria = [str(c) for c in part.get("criteria") or []]
    named = f" (criteria: {', '.join(criteria)})" if criteria else ""
    if rubric.decision == Flag.FLAG:
        if model_flags:
            return StepResult(5, Flag.FLAG, rubric.labels, reason=f"{rubric.reason}; the model agrees{named}",
                              evidence=rubric.evidence, score=rubric.score, by=rubric.by,
                              criteria=tuple(dict.fromkeys(rubric.criteria + tuple(criteria))))
        why = REMOVAL_REASON_TEXT.get(str(part.get("removal_reason") or "none"))
        if why is None:
            return StepResult(5, Flag.FLAG, rubric.labels, evidence=rubric.evidence, score=rubric.score, by=rubric.by,
                              criteria=rubric.criteria, reason=f"{rubric.reason}; the model answered no_flag without a procedural reason, so "
                                     f"the rubric's flag stands ({said})")
        return StepResult(5, Flag.NO_FLAG, evidence=rubric.evidence, score=rubric.score, by=by,
                          reason=f"step 5 ({by}): the rubric's flag removed for a procedural reason: {why} — {said}")
    if not model_flags:
        return rubric
    if dismissed:
        return StepResult(5, Flag.NO_FLAG, score=rubric.score, by=by,
                          reason=f"step 5 ({by}): the model would flag{named}, but a person already removed the "
                                 f"bot's '{review}' label: not flagged again — {said}")
    return StepResult(5, Flag.FLAG, (review,), score=rubric.score, by=by, criteria=tuple(criteria),
                      reason=f"step 5 ({by}): flag added by the model, which the rubric missed{named} — a human "
                             f"must look first — {said}")


__all__ = ["hybrid_step5"]
