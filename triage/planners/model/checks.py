"""An answer that contradicts itself: the checks a schema cannot express (strict structured output has no
conditional keywords), run on every answer that matches the plan schema.

A contradiction is treated like an answer that does not match the schema: the consultant asks once more with the
problems listed (the one repair call), and an answer that still contradicts itself is not used (the rubric plans
the issue, and the plan says why). It is never written, and never half-used: which part of a contradictory answer
is the model's reading cannot be known.

The checks (each a sentence of the prompt's output contract):
- step 3: `not_applicable` or `low` with module labels;
- step 4: `performance` with a decision other than `enhancement`;
- step 5: a flag without criteria, or with a no_flag_reason; a `no_flag` with criteria, or without a reason from
  the closed list;
- step 6: `needs_reproduction` for a request (the procedure never asks a request for one);
- across steps: after `not_distributed`, module labels or a flag; the no_flag_reason `not_distributed` when step 1
  says the issue is the queue's.

May import: the standard library, `triage.core.vocab`, `triage.planners.model.schema`.
"""
from __future__ import annotations

from typing import Any

from triage.core.vocab import Confidence, Flag, InQueue, Reproduction, TypeKind
from triage.planners.model.schema import NO_FLAG_NONE, NO_FLAG_REASONS, NOT_APPLICABLE

NOT_DISTRIBUTED_REASON = str(InQueue.NO)  # the no_flag_reason that step 1's `not_distributed` gives


def answer_problems(answer: dict[str, Any]) -> list[str]:
    """Where a schema-conforming answer contradicts itself, one line each ([] when it agrees with itself)."""
    step1 = answer["not_distributed"]["decision"]
    modules, kind, high = answer["modules"], answer["type"], answer["high_priority"]
    labels, criteria = list(modules["labels"]), list(high["criteria"])
    flagged, reason = high["decision"] == Flag.FLAG, high["no_flag_reason"]
    problems = []
    if modules["decision"] in (NOT_APPLICABLE, Confidence.LOW) and labels:
        problems.append(f"modules: '{modules['decision']}' names no label, but the answer lists {len(labels)}")
    if kind["performance"] and kind["decision"] != TypeKind.ENHANCEMENT:
        problems.append(f"type: performance is only for an enhancement, but the decision is '{kind['decision']}'")
    if flagged and not criteria:
        problems.append("high_priority: a flag names at least one criterion, but criteria is empty")
    if flagged and reason != NO_FLAG_NONE:
        problems.append(f"high_priority: a flag's no_flag_reason is '{NO_FLAG_NONE}', not '{reason}'")
    if not flagged and criteria:
        problems.append("high_priority: no_flag names no criterion, but criteria lists "
                        + ", ".join(map(str, criteria)))
    if not flagged and reason not in NO_FLAG_REASONS:
        problems.append(f"high_priority: no_flag needs a no_flag_reason from the list, not '{reason}'")
    if answer["reproduction"]["decision"] == Reproduction.NEEDS and kind["decision"] != TypeKind.NONE:
        problems.append(f"reproduction: a request ({kind['decision']}) is never asked for a reproduction")
    if step1 == InQueue.NO and labels:
        problems.append("not_distributed: an issue that is not the queue's gets no module label")
    if step1 == InQueue.NO and flagged:
        problems.append("not_distributed: an issue that is not the queue's is not flagged (no_flag, "
                        "not_distributed)")
    if step1 == InQueue.YES and not flagged and reason == NOT_DISTRIBUTED_REASON:
        problems.append("high_priority: no_flag_reason 'not_distributed' contradicts step 1's 'distributed'")
    return problems


__all__ = ["NOT_DISTRIBUTED_REASON", "answer_problems"]
