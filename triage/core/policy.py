"""The policy: the one gate every proposed plan passes before anything is written, whoever proposed it.

It trusts no planner. A proposal (from the rubric, a model, or anything else) is a *request*: a set of labels,
perhaps a template name, and an outcome it claims. The policy keeps what the procedure allows, records a note
for every label or comment it drops, and then *derives* the plan's sub-oncall, modules and outcome from the
labels that survive, so the plan's story can never disagree with what is written. It never reads the issue's
text; it looks only at the issue's labels and comments and at the configuration.

The rules (the seed's constraints, plus the semantic rules PyTorch's own apply step uses):
- only labels from the allowlist, never one the issue already has, never a forbidden one (`high priority`);
- a plan can only add: there is no way to express removing, closing or assigning;
- an existing sub-oncall is kept (a proposed one beside it is dropped); with none on the issue, more than one
  proposed is refused ("refuse to guess") and the issue goes to review;
- a module label is added only with a route, and only the route's own (or one the allowlist gives every route);
- a classification (a route whose team needs modules) with no module label goes to review;
- the high-priority flow adds review and never the marker; every other flow that writes anything adds the
  marker (the procedure's "add the marker whenever the bot has processed the issue");
- comments come only from the configured templates, re-rendered here (a planner picks a template, never the
  words), and never twice: a template counts as posted when our own account's comment carries its marker.

May import: the standard library, `triage.config`, `triage.core.plan`, `triage.core.snapshot`,
`triage.core.outcome`, `triage.core.vocab`.
"""

from __future__ import annotations

from triage.config.bundle import Bundle
from triage.config.templates import has_marker
from triage.core.outcome import OutcomeFacts, classification, derive_outcome
from triage.core.plan import CONFIDENCES, OUTCOMES, Plan, PlannedComment
from triage.core.snapshot import IssueSnapshot
from triage.core.vocab import Outcome, Role

# The order labels are written in: routing first, then classification, then flags, marker last.
ROLE_ORDER = {Role.SUB_ONCALL: 0, Role.MODULE: 1, Role.TYPE: 2, Role.REVIEW: 3, Role.REPRODUCTION: 4, Role.MARKER: 5}
# Claims a proposal may make about the flow; anything else is treated as an ordinary triage.
HIGH_PRIORITY, NOT_DISTRIBUTED, NOTHING = Outcome.HIGH_PRIORITY, Outcome.NOT_DISTRIBUTED, Outcome.NOTHING_TO_DO


def already_posted(snapshot: IssueSnapshot, template: str, own_logins: frozenset[str] | None) -> bool:
    """Posted by us: the template's marker in a comment whose author is one of our own accounts. Anyone can
    paste a marker into their own comment; that must not silence the bot. `own_logins=None` (an offline
    plan that does not know who the bot is) accepts a marker from any bot account."""
    for comment in snapshot.comments:
        if not has_marker(comment.body, template):
            continue
        if own_logins is None and comment.by_bot:
            return True
        if own_logins is not None and comment.author in own_logins:
            return True
    return False


def enforce(proposal: Plan, snapshot: IssueSnapshot, bundle: Bundle, *,
            own_logins: frozenset[str] | None = None) -> Plan:
    labels = bundle.labels
    rubric = bundle.rubric
    notes: list[str] = []
    claim = proposal.outcome

    if claim == NOTHING:
        dropped = [l for l in proposal.add_labels if l not in snapshot.labels]
        if dropped or proposal.comment is not None:
            notes.append("policy: the plan says nothing to do; nothing is written")
        return _final(proposal, (), None, NOTHING, None, (), notes)

    if claim not in OUTCOMES:
        notes.append(f"policy: unknown outcome {claim!r}: treated as an ordinary triage")
    # 1. Labels: allowlisted, new, not forbidden, each once.
    wanted: list[str] = []
    for name in proposal.add_labels:
        if not isinstance(name, str) or name not in labels.names or name in labels.forbidden:
            notes.append(f"policy: dropped label {name!r} (not in the allowlist)")
        elif name not in snapshot.labels and name not in wanted:
            wanted.append(name)

    # 2. Sub-oncall: exactly one ends up on the issue, and an existing one is never second-guessed.
    existing_oncalls = [l for l in snapshot.labels if labels.role(l) == "sub-oncall"]
    proposed_oncalls = [l for l in wanted if labels.role(l) == "sub-oncall"]
    if existing_oncalls:
        for extra in proposed_oncalls:
            notes.append(f"policy: dropped sub-oncall '{extra}': the issue already has '{existing_oncalls[0]}'")
        wanted = [l for l in wanted if labels.role(l) != "sub-oncall"]
    elif len(proposed_oncalls) > 1:
        notes.append(f"policy: refused {len(proposed_oncalls)} sub-oncalls ({', '.join(proposed_oncalls)}): "
                     "refusing to guess, a human routes it")
        wanted = [l for l in wanted if labels.role(l) != "sub-oncall"]
    oncall = existing_oncalls[0] if existing_oncalls else next(
        (l for l in wanted if labels.role(l) == "sub-oncall"), None)
    route = rubric.route_of_label(oncall) if oncall else None
    if oncall is None and len(proposed_oncalls) <= 1:
        # A queue may have one route whose team adds no sub-oncall label (pt2's main oncall): an issue left
        # without one is on that route. A refused pair of sub-oncalls is not: a human routes it.
        route = rubric.unlabelled_route

    # 3. Modules belong to a route: none is added without a route, and only the route's own (or a module that
    #    fits every route, `route: null` in the allowlist) after routing.
    for name in [l for l in wanted if labels.role(l) == "module"]:
        home = labels.route(name)
        if route is None:
            notes.append(f"policy: dropped '{name}': no route for the issue, so no module is classified")
        elif home is not None and home != route:
            notes.append(f"policy: dropped '{name}': it belongs to route {home}, and the issue is routed {route}")
        else:
            continue
        wanted.remove(name)
    modules_after = [l for l in (*snapshot.labels, *wanted) if labels.role(l) == "module"]
    new_modules = [l for l in wanted if labels.role(l) == "module"]
    if claim == NOT_DISTRIBUTED:
        for name in [l for l in wanted if labels.role(l) in ("module", "sub-oncall", "type")]:
            notes.append(f"policy: dropped '{name}': an issue flagged as not distributed is left for a human to route")
        wanted = [l for l in wanted if labels.role(l) not in ("module", "sub-oncall", "type")]
        oncall, route, new_modules = (existing_oncalls[0] if existing_oncalls else None), None, []

    # 4. The flow: what the marker and the review label must be, whatever the proposal says.
    needs_review = False
    if claim == NOT_DISTRIBUTED:
        needs_review = True
    elif oncall is None and route is None:
        needs_review = True
        if claim != HIGH_PRIORITY:
            notes.append("policy: no sub-oncall for the issue: sent to review")
    elif route is not None and route not in rubric.stop_after and not modules_after \
            and not classification(snapshot.labels, labels, rubric).complete:
        needs_review = True  # classified with no module: a human decides the module
        if labels.review not in wanted and labels.review not in snapshot.labels:
            notes.append("policy: a classification with no module label: sent to review")
    if needs_review and labels.review not in wanted and labels.review not in snapshot.labels:
        wanted.append(labels.review)

    if claim == HIGH_PRIORITY:
        if labels.review not in wanted and labels.review not in snapshot.labels:
            wanted.append(labels.review)
        if labels.marker in wanted:
            notes.append("policy: no marker label in the high-priority flow (a human looks first)")
        wanted = [l for l in wanted if l != labels.marker]
    elif labels.marker not in snapshot.labels and labels.marker not in wanted:
        wanted.append(labels.marker)

    wanted.sort(key=lambda l: ROLE_ORDER.get(labels.role(l) or "", 9))  # stable within a role

    # 5. The comment: a configured template, rendered here, never twice.
    comment: PlannedComment | None = None
    if proposal.comment is not None:
        name = proposal.comment.template
        if name not in bundle.templates.names:
            notes.append(f"policy: dropped comment from unknown template {name!r}")
        elif name not in bundle.step_templates.values():
            notes.append(f"policy: dropped comment {name!r}: no step of the procedure posts it")
        elif name == bundle.step_templates.get("not_distributed") and claim != NOT_DISTRIBUTED:
            notes.append(f"policy: dropped comment {name!r}: the plan does not flag the issue as not distributed")
        elif already_posted(snapshot, name, own_logins):
            notes.append(f"policy: '{name}' comment already posted, not posting again")
        else:
            comment = PlannedComment(name, bundle.templates.render(name, author=snapshot.author))
            repro = labels.reproduction
            asks_for_repro = name in (bundle.step_templates.get("needs_reproduction"),
                                      bundle.step_templates.get("needs_reproduction_performance"))
            if asks_for_repro and repro not in snapshot.labels \
                    and repro not in wanted:
                wanted.insert(len([l for l in wanted if l != labels.marker]), repro)  # the comment asks: say so

    # 6. The story, derived from what will be on the issue.
    all_modules = tuple(dict.fromkeys(l for l in (*snapshot.labels, *wanted) if labels.role(l) == "module"))
    outcome = _derive_outcome(claim, snapshot, bundle, wanted, oncall, route, all_modules)
    # The modules the plan stands for: those it proposed that will be on the issue, and every one it adds.
    chosen = tuple(m for m in dict.fromkeys((*proposal.modules, *new_modules)) if m in all_modules)
    return _final(proposal, tuple(wanted), comment, outcome, oncall, chosen, notes)


def _derive_outcome(claim: str, snapshot: IssueSnapshot, bundle: Bundle, wanted: list[str], oncall: str | None,
                    route: str | None, modules: tuple[str, ...]) -> Outcome:
    """The outcome from what will be on the issue (the same `derive_outcome` the procedure's proposal used)."""
    labels, rubric = bundle.labels, bundle.rubric
    return derive_outcome(OutcomeFacts(
        flagged=claim == Outcome.HIGH_PRIORITY,
        not_distributed=claim == Outcome.NOT_DISTRIBUTED,
        classified_by_person=claim == Outcome.ALREADY_TRIAGED and set(wanted) <= {labels.marker}
        and classification(snapshot.labels, labels, rubric).complete,
        routed=oncall is not None or route is not None,
        route_stops=route is not None and route in rubric.stop_after,
        review=labels.review in wanted or labels.review in snapshot.labels,
        modules=bool(modules)))


def _final(proposal: Plan, add: tuple[str, ...], comment: PlannedComment | None, outcome: str,
           oncall: str | None, new_modules, notes: list[str]) -> Plan:
    return proposal.with_(
        add_labels=add,
        comment=comment,
        outcome=outcome,
        sub_oncall=oncall,
        modules=tuple(new_modules),
        confidence=proposal.confidence if proposal.confidence in CONFIDENCES else None,
        reasons=tuple(proposal.reasons) + tuple(notes),
    )
