"""Cases: each dataset row planned as it stood when the queue label was added, and what its plan says.

A `Case` holds the gold answer, the labels the issue had when planned, and the plan as `Plan.to_dict()`; the
figures compare the label state after the plan (labels it had + labels the plan adds) with the gold answer, so a
label already present at queue time counts as the bot's answer too.

May import: the standard library, `triage.config.bundle` (the queue's patterns compiled before timing), `triage.planners`,
`triage.evaluation.gold`, `triage.evaluation.dataset`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from triage.evaluation.dataset import DatasetRow
from triage.evaluation.gold import Gold
from triage.planners import plan_issue


@dataclass(frozen=True)
class Case:
    """One replayed issue: its gold answer, the labels it had when planned, and the plan (as `Plan.to_dict()`)."""

    id: str
    title: str
    gold: Gold
    plan: Mapping[str, Any]
    labels_before: tuple[str, ...] = ()
    elapsed_ms: float | None = None


def plan_rows(rows: Iterable[DatasetRow], bundle, planner=None,
              on_plan: Callable[[DatasetRow, Any], None] | None = None) -> list[Case]:
    """Plan each row (as it stood when the queue label was added), timing the planner alone: the queue's patterns
    are compiled first (`compile_patterns`), once, so no row pays for the compile of patterns a row before it did not
    happen to use. `on_plan(row, plan)`: sees each `Plan` itself (its steps' evidence, which a Case does not keep)."""
    from triage.config.bundle import compile_patterns

    compile_patterns(bundle)
    cases = []
    for row in rows:
        started = time.perf_counter()
        plan = plan_issue(row.snapshot, bundle, planner=planner)
        elapsed = (time.perf_counter() - started) * 1000
        if on_plan is not None:
            on_plan(row, plan)
        cases.append(Case(id=row.id, title=row.snapshot.title, gold=row.gold, plan=plan.to_dict(),
                          labels_before=row.snapshot.labels, elapsed_ms=elapsed))
    return cases


def added_labels(case: Case) -> list[str]:
    return list(case.plan.get("add_labels") or [])


def labels_after(case: Case) -> list[str]:
    return list(dict.fromkeys([*case.labels_before, *added_labels(case)]))


def high_priority_score(case: Case) -> float | None:
    """Step 5's score as the plan kept it (`Plan.high_priority_score`); None when step 5 did not run."""
    for step in case.plan.get("steps") or ():
        if step.get("step") == 5:
            return step.get("score")
    return None
