"""The planner: (issue snapshot, bundle) -> plan, following the seed's steps in order.

`propose` is the deterministic rubric planner. Whatever proposes a plan (this, or a future LLM
planner), `plan_issue` passes it through `triage.core.policy.enforce`, the one gate that decides what
may actually be written.
"""

from __future__ import annotations

import time

from triage.core import steps
from triage.config.bundle import Bundle
from triage.core.plan import Plan, PlannedComment
from triage.core.policy import enforce
from triage.core.snapshot import IssueSnapshot


def _comment(bundle: Bundle, name: str, snapshot: IssueSnapshot) -> PlannedComment:
    return PlannedComment(name, bundle.templates.render(name, author=snapshot.author))


def propose(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
    rubric, labels = bundle.rubric, bundle.labels
    plan = Plan(issue=snapshot.number)
    reasons: list[str] = []

    if labels.marker in snapshot.labels and not force:
        return plan.with_(reasons=(f"already processed ('{labels.marker}' present); use a forced re-triage to redo",))
    if force and labels.marker in snapshot.labels:
        reasons.append(f"forced re-triage: ignoring '{labels.marker}'")

    done, why = steps.step0_already_triaged(snapshot, labels)
    reasons.append(why)
    if done:
        return plan.with_(outcome="already_triaged", add_labels=(labels.marker,), reasons=tuple(reasons))

    analysis = steps.analyse(snapshot, rubric, bundle.templates.names)

    not_dist, why = steps.step1_not_distributed(analysis, rubric)
    reasons.append(why)
    if not_dist:
        return plan.with_(
            outcome="not_distributed",
            add_labels=(labels.review, labels.marker),
            comment=_comment(bundle, "not_distributed", snapshot),
            reasons=tuple(reasons),
        )

    route, _, why = steps.step2_route(snapshot, analysis, rubric, labels)
    reasons.append(why)
    sub_oncall = rubric.route_label(route)
    add: list[str] = [sub_oncall]
    plan = plan.with_(sub_oncall=sub_oncall)

    if route in rubric.stop_after:
        # The sub-team owns further triage; the checks the rubric marks as issue-wide still run.
        if "types" in rubric.checks_on_every_route:
            types, why = steps.step4_types(analysis, rubric, labels)
            reasons.append(why)
            add += types
        if "high_priority" in rubric.checks_on_every_route:
            urgent, why = steps.step5_high_priority(analysis, rubric)
            reasons.append(why)
            if urgent:
                return plan.with_(outcome="high_priority", add_labels=(*add, labels.review), reasons=tuple(reasons))
        reasons.append(f"stop: {route} owns further triage")
        return plan.with_(outcome="routed", add_labels=(*add, labels.marker), reasons=tuple(reasons))

    modules, confidence, why = steps.step3_modules(snapshot, analysis, rubric, labels, route)
    reasons.append(why)
    add += modules
    plan = plan.with_(modules=tuple(modules), confidence=confidence)

    types, why = steps.step4_types(analysis, rubric, labels)
    reasons.append(why)
    add += types

    urgent, why = steps.step5_high_priority(analysis, rubric)
    reasons.append(why)
    if urgent:
        return plan.with_(outcome="high_priority", add_labels=(*add, labels.review), reasons=tuple(reasons))

    outcome = "classified"
    if confidence == "low":
        add.append(labels.review)
        outcome = "needs_review"

    comment = None
    if types:  # step 4 only ever adds a request type (feature or enhancement, + performance)
        reasons.append("step 6: a request, not a bug: no reproduction needed")
    else:
        needs, why = steps.step6_needs_reproduction(analysis, rubric)
        reasons.append(why)
        if needs:
            add.append(labels.reproduction)
            comment = _comment(bundle, "needs_distributed_reproduction", snapshot)

    add.append(labels.marker)
    return plan.with_(outcome=outcome, add_labels=tuple(add), comment=comment, reasons=tuple(reasons))


def plan_issue(snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
    started = time.perf_counter()
    plan = enforce(propose(snapshot, bundle, force=force), snapshot, bundle)
    return plan.with_(elapsed_ms=(time.perf_counter() - started) * 1000.0)
