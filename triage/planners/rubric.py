"""The rubric planner: the procedure (`triage.core.procedure`) with every step decided by the YAML rubric.

Deterministic, free and fast. It proposes; `triage.planners.plan_issue` passes the proposal through the
policy like any other planner's. `opening` is what every procedure planner (rubric, llm, hybrid) does before the
procedure: an issue processed already gets no procedure at all, and every plan of an issue read within limits, or
forced, says so first.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`.
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.config.bundle import Bundle
from triage.core.plan import Plan
from triage.core.reading import Reading
from triage.core.snapshot import IssueSnapshot
from triage.planners.base import Decided, Fixed, Judged, Planner


@dataclass(frozen=True)
class Opening:
    """Before the procedure: the plan of an issue processed already (None: the procedure runs), the note that the
    issue was read within limits, and the note that a forced re-triage ignores the marker."""

    processed: Plan | None
    clipped: tuple[str, ...] = ()
    forced: tuple[str, ...] = ()


def opening(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Opening:
    marker = bundle.labels.marker
    clipped: tuple[str, ...] = ()
    if snapshot.clipped:  # hostile or huge text is read only up to GitHub's own limits
        clipped = (f"read within limits: {'; '.join(snapshot.clipped)}",)
    if marker not in snapshot.labels:
        return Opening(None, clipped)
    if not force:
        return Opening(Plan(issue=snapshot.number, reasons=clipped + (
            f"already processed ('{marker}' present); use a forced re-triage to redo",)), clipped)
    return Opening(None, clipped, (f"forced re-triage: ignoring '{marker}'",))


def rubric_decided(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False,
                   reading: Reading | None = None) -> Decided:
    """The rubric deciding every step (the procedure runs on `reading` when the caller has one)."""
    start = opening(snapshot, bundle, force=force)
    if start.processed is not None:
        return Fixed(start.processed)
    return Judged(bundle, reading, prefix=start.clipped + start.forced)


class RubricPlanner(Planner):
    name = "rubric"

    def decide(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Decided:
        return rubric_decided(snapshot, bundle, force=force)


def propose(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
    return rubric_decided(snapshot, bundle, force=force).proposal(snapshot)


__all__ = ["Opening", "RubricPlanner", "opening", "propose", "rubric_decided"]
