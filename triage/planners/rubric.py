"""The rubric planner: the procedure (`triage.core.procedure`) with every step decided by the YAML rubric.

Deterministic, free and fast. It proposes; `triage.planners.plan_issue` passes the proposal through the
policy like any other planner's.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`.
"""

from __future__ import annotations

from triage.config.bundle import Bundle
from triage.core import procedure
from triage.core.plan import Plan
from triage.core.snapshot import IssueSnapshot
from triage.planners.base import Planner
from triage.core.steps import Analysis


class RubricPlanner(Planner):
    name = "rubric"

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        return propose(snapshot, bundle, force=force)


def propose(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
    return propose_with_analysis(snapshot, bundle, force=force)[0]


def propose_with_analysis(snapshot: IssueSnapshot, bundle: Bundle, *,
                          force: bool = False) -> tuple[Plan, Analysis | None]:
    """The rubric's proposal and the analysis it was decided on, so a planner that builds on it (llm, hybrid)
    reads the issue once (None: nothing was read, because the issue is processed already or a person classified
    it)."""
    labels = bundle.labels
    plan = Plan(issue=snapshot.number)
    prefix: tuple[str, ...] = ()
    if snapshot.clipped:  # hostile or huge text is read only up to GitHub's own limits
        prefix = (f"read within limits: {'; '.join(snapshot.clipped)}",)
    if labels.marker in snapshot.labels:
        if not force:
            return plan.with_(reasons=prefix + (
                f"already processed ('{labels.marker}' present); use a forced re-triage to redo",)), None
        prefix += (f"forced re-triage: ignoring '{labels.marker}'",)
    done = procedure.run(snapshot, bundle)
    return procedure.fold(plan, done.results, bundle, prefix), done.analysis
