"""Guardrails: the one gate every plan passes before anything is written, whoever proposed it.

The rubric planner already follows these rules; an LLM planner might not, and issue text is
hostile input that could try to talk a planner into more. So the rules are enforced here, on the
plan itself, by code that does not read the issue's text at all:

- only labels from the allowlist are added, never one the issue already has, never `high priority`;
- a plan can only add: it has no way to express removing, closing or assigning;
- at most one sub-oncall label ends up on the issue;
- comments come only from our templates, rendered here, and never twice (hidden marker);
- the marker label follows the seed: added whenever the issue was processed, except in the
  high-priority flow, which must leave the issue visible to the cron sweep and to humans.
"""

from __future__ import annotations

from triage.config.bundle import Bundle
from triage.core.plan import OUTCOMES, Plan, PlannedComment
from triage.core.snapshot import IssueSnapshot
from triage.config.templates import has_marker

FORBIDDEN = frozenset({"high priority"})
# The order labels are written in: routing first, then classification, then flags, marker last.
ROLE_ORDER = {"sub-oncall": 0, "module": 1, "type": 2, "review": 3, "reproduction": 4, "marker": 5}


def _already_commented(snapshot: IssueSnapshot, template: str) -> bool:
    return any(has_marker(c.body, template) for c in snapshot.comments)


def enforce(proposal: Plan, snapshot: IssueSnapshot, bundle: Bundle) -> Plan:
    labels = bundle.labels
    notes: list[str] = []
    outcome = proposal.outcome if proposal.outcome in OUTCOMES else "needs_review"
    if outcome != proposal.outcome:
        notes.append(f"policy: unknown outcome '{proposal.outcome}' treated as needs_review")

    wanted: list[str] = []
    for name in proposal.add_labels:
        if not isinstance(name, str) or name in FORBIDDEN or name not in labels.names:
            notes.append(f"policy: dropped label {name!r} (not in the allowlist)")
        elif name not in snapshot.labels and name not in wanted:
            wanted.append(name)

    if outcome == "high_priority" and labels.review not in snapshot.labels and labels.review not in wanted:
        wanted.append(labels.review)
    if outcome == "nothing_to_do":
        wanted = []
    elif outcome == "high_priority":
        if labels.marker in wanted:
            notes.append("policy: no marker label in the high-priority flow")
        wanted = [l for l in wanted if l != labels.marker]
    elif labels.marker not in snapshot.labels and labels.marker not in wanted:
        wanted.append(labels.marker)

    existing_oncalls = [l for l in snapshot.labels if labels.role(l) == "sub-oncall"]
    proposed_oncalls = [l for l in wanted if labels.role(l) == "sub-oncall"]
    keep = None if existing_oncalls else (proposed_oncalls[0] if proposed_oncalls else None)
    for extra in proposed_oncalls:
        if extra != keep:
            notes.append(f"policy: dropped second sub-oncall '{extra}'")
    wanted = [l for l in wanted if labels.role(l) != "sub-oncall" or l == keep]
    wanted.sort(key=lambda l: ROLE_ORDER.get(labels.role(l) or "", 9))  # stable within a role

    comment: PlannedComment | None = None
    if proposal.comment is not None and outcome != "nothing_to_do":
        name = proposal.comment.template
        if name not in bundle.templates.names:
            notes.append(f"policy: dropped comment from unknown template {name!r}")
        elif _already_commented(snapshot, name):
            notes.append(f"policy: '{name}' comment already posted, not posting again")
        else:
            # Re-rendered here: a planner chooses a template, never the words.
            comment = PlannedComment(name, bundle.templates.render(name, author=snapshot.author))

    sub_oncall = existing_oncalls[0] if existing_oncalls else keep
    modules = tuple(m for m in proposal.modules if labels.role(m) == "module")
    return proposal.with_(
        add_labels=tuple(wanted),
        comment=comment,
        outcome=outcome,
        sub_oncall=sub_oncall,
        modules=modules,
        confidence=proposal.confidence if proposal.confidence in ("high", "medium", "low") else None,
        reasons=tuple(proposal.reasons) + tuple(notes),
    )
