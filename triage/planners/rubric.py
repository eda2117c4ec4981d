"""The rubric planner: the seed's procedure (steps 0-6) as a straight sequence over the YAML rubric.

Deterministic, free and fast. It proposes; `triage.planners.plan_issue` passes the proposal through the
policy like any other planner's.

May import: the standard library, `triage.config`, `triage.core`.
"""

from __future__ import annotations

from triage.config.bundle import Bundle
from triage.core import steps
from triage.core.plan import Plan, PlannedComment
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import StepResult


class RubricPlanner:
    name = "rubric"

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        return propose(snapshot, bundle, force=force)


def run_steps(snapshot: IssueSnapshot, bundle: Bundle) -> list[StepResult]:
    """Steps 0-6 in order, as far as the procedure goes for this issue."""
    rubric, labels, comments = bundle.rubric, bundle.labels, bundle.step_templates
    done = [steps.step0_already_triaged(snapshot, labels, rubric)]
    if done[-1].stop:
        return done
    analysis = steps.analyse(snapshot, rubric, bundle.templates.names)
    done.append(steps.step1_not_distributed(analysis, rubric, labels, comments["not_distributed"]))
    if done[-1].stop:
        return done
    route = steps.step2_route(snapshot, analysis, rubric, labels)
    done.append(route)
    sub_team_owns_it = route.stop
    if sub_team_owns_it:
        done.append(steps.skipped(3, f"{route.decision} owns further triage"))
    else:
        done.append(steps.step3_modules(snapshot, analysis, rubric, labels, route.decision))
    # Request types and possible high priority are facts about the issue, not triage the sub-team owns:
    # the rubric says on which routes they are checked.
    every_route = rubric.checks_on_every_route
    types = steps.step4_types(analysis, rubric, labels) if not sub_team_owns_it or "types" in every_route \
        else steps.skipped(4, f"{route.decision} owns further triage")
    done.append(types)
    done.append(steps.step5_high_priority(analysis, rubric, labels, snapshot)
                if not sub_team_owns_it or "high_priority" in every_route
                else steps.skipped(5, f"{route.decision} owns further triage"))
    if sub_team_owns_it:
        done.append(steps.skipped(6, f"{route.decision} owns further triage"))
    else:
        done.append(steps.step6_needs_reproduction(analysis, rubric, labels, types, comments["needs_reproduction"],
                                                   comments.get("needs_reproduction_performance")))
    return done


def propose(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
    labels = bundle.labels
    plan = Plan(issue=snapshot.number)
    prefix: tuple[str, ...] = ()
    if snapshot.clipped:  # hostile or huge text is read only up to GitHub's own limits
        prefix = (f"read within limits: {'; '.join(snapshot.clipped)}",)
    if labels.marker in snapshot.labels:
        if not force:
            return plan.with_(reasons=prefix + (f"already processed ('{labels.marker}' present); use a forced re-triage to redo",))
        prefix += (f"forced re-triage: ignoring '{labels.marker}'",)
    return plan_from_steps(plan, run_steps(snapshot, bundle), bundle, snapshot, prefix)


def plan_from_steps(plan: Plan, results: list[StepResult], bundle: Bundle, snapshot: IssueSnapshot,
                    prefix: tuple[str, ...] = ()) -> Plan:
    """Fold the steps' results into one proposal: their labels in order, the last comment, and the outcome the
    procedure reached (the policy derives the final outcome again from the labels)."""
    labels = bundle.labels
    by_step = {r.step: r for r in results}
    add = [label for r in results for label in r.labels]
    flagged = by_step.get(5) is not None and by_step[5].decision == "flag"
    comment_name = next((r.comment for r in reversed(results) if r.comment), None)
    last = results[-1]
    if last.step == 0:
        outcome = "already_triaged"
    elif last.step == 1:
        outcome = "not_distributed"
    elif flagged:
        outcome = "high_priority"
    elif by_step[2].stop:
        outcome = "routed"
    else:
        outcome = "needs_review" if by_step[3].decision == "low" else "classified"
    if not flagged:
        add.append(labels.marker)
    route = by_step.get(2)
    modules = by_step[3].labels if 3 in by_step and not by_step[3].skipped and by_step[3].decision != "low" else ()
    confidence = by_step[3].decision if 3 in by_step and not by_step[3].skipped else None
    return plan.with_(
        outcome=outcome,
        add_labels=tuple(dict.fromkeys(add)),
        comment=PlannedComment(comment_name, "") if comment_name else None,  # the policy renders it
        sub_oncall=route.labels[0] if route is not None and route.labels else None,
        modules=tuple(modules),
        confidence=confidence,
        reasons=prefix + tuple(r.reason for r in results if not r.skipped) + (
            (f"stop: {route.decision} owns further triage",) if route is not None and route.stop and not flagged else ()),
        steps=tuple(results),
    )
