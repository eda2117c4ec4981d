"""The policy: the one gate every proposed plan passes before anything is written, whoever proposed it.

It trusts no planner. A proposal (from the rubric, a model, or anything else) is a *request*: a set of labels,
perhaps a template name, and an outcome it claims. The policy keeps what the procedure allows, records a `Drop`
(`triage.core.drops`: what, and which rule) for every label or comment it drops or flow it changes, and then
*derives* the plan's sub-oncall, modules and outcome from the labels that survive, so the plan's story can never
disagree with what is written. It never reads the issue's text; it looks only at the issue's labels and comments
and at the configuration.

The rules (the seed's constraints, plus the semantic rules PyTorch's own apply step uses):
- an issue carrying the opt-out label (labels.json role `skip`, `ptd-bot-skip` by default) gets nothing at all,
  whatever the proposal and however the run was started (the last guard: the service leaves such an issue first);
  the label itself is not in the allowlist: only people add it;
- only labels from the allowlist, never one the issue already has, never a forbidden one (`high priority`), never
  a type label the queue disabled (labels.json `disabled`);
- a plan can only add: there is no way to express removing, closing or assigning;
- an existing sub-oncall is kept (a proposed one beside it is dropped); with none on the issue, more than one
  proposed is refused ("refuse to guess") and the issue goes to review;
- a module label is added only with a route, and only the route's own (or one the allowlist gives every route);
  at most the queue's `modules.max_labels` of them (default 3) are added to one issue, the first proposed kept;
- a classification (a route whose team needs modules) with no module label goes to review;
- the high-priority flow adds review and never the marker; every other flow that writes anything adds the
  marker (the procedure's "add the marker whenever the bot has processed the issue");
- comments come only from the configured templates, re-rendered here (a planner picks a template, never the
  words), and never twice: a template counts as posted when our own account's comment carries its marker; an
  issue created before a sweep's not-before (mode labels-only) gets no comment at all.

May import: the standard library, `triage.config`, `triage.core.plan`, `triage.core.snapshot`,
`triage.core.outcome`, `triage.core.drops`, `triage.core.vocab`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.config.bundle import Bundle
from triage.config.templates import has_marker
from triage.core.drops import Drop, DropKind
from triage.core.outcome import OutcomeFacts, classification, derive_outcome
from triage.core.plan import CONFIDENCES, OUTCOMES, Plan, PlannedComment
from triage.core.snapshot import IssueSnapshot
from triage.core.vocab import CommentStep, Outcome, Role

# The order labels are written in: routing first, then classification, then flags, marker last.
ROLE_ORDER: dict[str, int] = {Role.SUB_ONCALL: 0, Role.MODULE: 1, Role.TYPE: 2, Role.REVIEW: 3,
                              Role.REPRODUCTION: 4, Role.MARKER: 5}
# Claims a proposal may make about the flow; anything else is treated as an ordinary triage.
HIGH_PRIORITY, NOT_IN_QUEUE, NOTHING = Outcome.HIGH_PRIORITY, Outcome.NOT_IN_QUEUE, Outcome.NOTHING_TO_DO


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


@dataclass
class _Draft:
    """The policy's working state for one proposal: the labels it will add and what it dropped, in order."""

    proposal: Plan
    snapshot: IssueSnapshot
    bundle: Bundle
    wanted: list[str] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)

    @property
    def claim(self):
        return self.proposal.outcome

    def drop(self, kind: DropKind, subject=None, *context) -> None:
        words = self.bundle.words
        self.drops.append(Drop(kind, subject, tuple(context), team=words.team, not_in_queue=words.not_in_queue))

    def role(self, name: str):
        return self.bundle.labels.role(name)

    def has(self, name: str) -> bool:
        """On the issue already, or to be added."""
        return name in self.snapshot.labels or name in self.wanted


def enforce(proposal: Plan, snapshot: IssueSnapshot, bundle: Bundle, *,
            own_logins: frozenset[str] | None = None, before_cutoff: str | None = None) -> Plan:
    """The proposal as the rules allow it (see the module's docstring). `before_cutoff`: the issue was created
    before the sweep's not-before in mode labels-only (the cut-off, as configured): it gets its labels and never a
    comment."""
    d = _Draft(proposal, snapshot, bundle)
    if bundle.labels.opted_out(snapshot.labels):  # a person opted the issue out: nothing, whoever asked
        d.drop(DropKind.OPTED_OUT, bundle.labels.skip)
        return _final(d, None, NOTHING, None, ())
    if d.claim == NOTHING:
        if any(label not in snapshot.labels for label in proposal.add_labels) or proposal.comment is not None:
            d.drop(DropKind.NOTHING_TO_DO)
        return _final(d, None, NOTHING, None, ())
    if d.claim not in OUTCOMES:
        d.drop(DropKind.UNKNOWN_OUTCOME, d.claim)
    _allowlisted(d)
    oncall, route = _sub_oncall(d)
    _modules_of_route(d, route)
    _module_cap(d)
    new_modules = [label for label in d.wanted if d.role(label) == Role.MODULE]
    if d.claim == NOT_IN_QUEUE:
        for name in [label for label in d.wanted if d.role(label) in _ROUTING]:
            d.drop(DropKind.ROUTING_NOT_IN_QUEUE, name)
        d.wanted = [label for label in d.wanted if d.role(label) not in _ROUTING]
        existing = [label for label in snapshot.labels if d.role(label) == Role.SUB_ONCALL]
        oncall, route, new_modules = (existing[0] if existing else None), None, []
    _flow(d, oncall, route)
    d.wanted.sort(key=lambda label: ROLE_ORDER.get(d.role(label) or "", 9))  # stable within a role
    comment = _comment(d, own_logins)
    if comment is not None and before_cutoff:  # an old issue: labelled, never commented on
        d.drop(DropKind.BEFORE_CUTOFF, comment.template, before_cutoff)
        comment = None
    # The story, derived from what will be on the issue.
    labels = bundle.labels
    all_modules = tuple(dict.fromkeys(label for label in (*snapshot.labels, *d.wanted)
                                      if labels.role(label) == Role.MODULE))
    outcome = _derive_outcome(d.claim, snapshot, bundle, d.wanted, oncall, route, all_modules)
    # The modules the plan stands for: those it proposed that will be on the issue, and every one it adds.
    chosen = tuple(m for m in dict.fromkeys((*proposal.modules, *new_modules)) if m in all_modules)
    return _final(d, comment, outcome, oncall, chosen)


_ROUTING = (Role.MODULE, Role.SUB_ONCALL, Role.TYPE)  # what an issue step 1 sent back is not given


def _allowlisted(d: _Draft) -> None:
    """Labels: allowlisted, new, not forbidden, not disabled, each once."""
    labels = d.bundle.labels
    for name in d.proposal.add_labels:
        if not isinstance(name, str) or name not in labels.names or labels.is_forbidden(name):
            d.drop(DropKind.NOT_ALLOWLISTED, name)
        elif name in labels.disabled:
            d.drop(DropKind.LABEL_DISABLED, name)
        elif not d.has(name):
            d.wanted.append(name)


def _sub_oncall(d: _Draft) -> tuple[str | None, str | None]:
    """Exactly one sub-oncall ends up on the issue, and an existing one is never second-guessed. Returns the
    issue's sub-oncall and route (either may be None)."""
    rubric = d.bundle.rubric
    existing = [label for label in d.snapshot.labels if d.role(label) == Role.SUB_ONCALL]
    proposed = [label for label in d.wanted if d.role(label) == Role.SUB_ONCALL]
    if existing:
        for extra in proposed:
            d.drop(DropKind.SUB_ONCALL_EXISTS, extra, existing[0])
    elif len(proposed) > 1:
        d.drop(DropKind.SUB_ONCALLS_REFUSED, tuple(proposed))
    if existing or len(proposed) > 1:
        d.wanted = [label for label in d.wanted if d.role(label) != Role.SUB_ONCALL]
    oncall = existing[0] if existing else next(
        (label for label in d.wanted if d.role(label) == Role.SUB_ONCALL), None)
    route = rubric.route_of_label(oncall) if oncall else None
    if oncall is None and len(proposed) <= 1:
        # A queue may have one route whose team adds no sub-oncall label (its main oncall): an issue left
        # without one is on that route. A refused pair of sub-oncalls is not: a human routes it.
        route = rubric.unlabelled_route
    return oncall, route


def _modules_of_route(d: _Draft, route: str | None) -> None:
    """Modules belong to a route: none is added without a route, and only the route's own (or a module that fits
    every route, `route: null` in the allowlist) after routing."""
    for name in [label for label in d.wanted if d.role(label) == Role.MODULE]:
        home = d.bundle.labels.route(name)
        if route is None:
            d.drop(DropKind.MODULE_WITHOUT_ROUTE, name)
        elif home is not None and home != route:
            d.drop(DropKind.MODULE_OF_OTHER_ROUTE, name, home, route)
        else:
            continue
        d.wanted.remove(name)


def _module_cap(d: _Draft) -> None:
    """No more module labels on one issue than the queue allows (rubric `modules.max_labels`): a plan with seven is
    not a classification. The first proposed are kept (a planner's ranking); the rest are dropped."""
    cap = d.bundle.rubric.module_max_labels
    for name in [label for label in d.wanted if d.role(label) == Role.MODULE][cap:]:
        d.drop(DropKind.MODULES_OVER_CAP, name, cap)
        d.wanted.remove(name)


def _flow(d: _Draft, oncall: str | None, route: str | None) -> None:
    """What the marker and the review label must be, whatever the proposal says."""
    labels, rubric, snapshot = d.bundle.labels, d.bundle.rubric, d.snapshot
    modules_after = [label for label in (*snapshot.labels, *d.wanted) if labels.role(label) == Role.MODULE]
    needs_review = d.claim == NOT_IN_QUEUE
    if not needs_review and oncall is None and route is None:
        needs_review = True
        if d.claim != HIGH_PRIORITY:
            d.drop(DropKind.REVIEW_NO_SUB_ONCALL)
    elif not needs_review and route is not None and route not in rubric.stop_after and not modules_after \
            and not classification(snapshot.labels, labels, rubric).complete:
        needs_review = True  # classified with no module: a human decides the module
        if not d.has(labels.review):
            d.drop(DropKind.REVIEW_NO_MODULE)
    if (needs_review or d.claim == HIGH_PRIORITY) and not d.has(labels.review):
        d.wanted.append(labels.review)
    if d.claim == HIGH_PRIORITY:
        if labels.marker in d.wanted:
            d.drop(DropKind.MARKER_IN_HIGH_PRIORITY)
        d.wanted = [label for label in d.wanted if label != labels.marker]
    elif not d.has(labels.marker):
        d.wanted.append(labels.marker)


def _comment(d: _Draft, own_logins: frozenset[str] | None) -> PlannedComment | None:
    """A configured template, rendered here, never twice; a request for a reproduction says so with its label."""
    if d.proposal.comment is None:
        return None
    bundle, name = d.bundle, d.proposal.comment.template
    posted_by_steps = bundle.step_templates
    if name not in bundle.templates.names:
        d.drop(DropKind.UNKNOWN_TEMPLATE, name)
    elif name not in posted_by_steps.values():
        d.drop(DropKind.TEMPLATE_OF_NO_STEP, name)
    elif name == posted_by_steps.get(CommentStep.NOT_IN_QUEUE) and d.claim != NOT_IN_QUEUE:
        d.drop(DropKind.NOT_IN_QUEUE_COMMENT, name)
    elif already_posted(d.snapshot, name, own_logins):
        d.drop(DropKind.ALREADY_POSTED, name)
    else:
        labels = bundle.labels
        asks = name in (posted_by_steps.get(CommentStep.NEEDS_REPRODUCTION),
                        posted_by_steps.get(CommentStep.NEEDS_PERFORMANCE_REPRODUCTION))
        if asks and not d.has(labels.reproduction):
            d.wanted.insert(len([label for label in d.wanted if label != labels.marker]), labels.reproduction)
        return PlannedComment(name, bundle.templates.render(name, author=d.snapshot.author))
    return None


def _derive_outcome(claim: str, snapshot: IssueSnapshot, bundle: Bundle, wanted: list[str], oncall: str | None,
                    route: str | None, modules: tuple[str, ...]) -> Outcome:
    """The outcome from what will be on the issue (the same `derive_outcome` the procedure's proposal used)."""
    labels, rubric = bundle.labels, bundle.rubric
    return derive_outcome(OutcomeFacts(
        flagged=claim == Outcome.HIGH_PRIORITY,
        not_in_queue=claim == Outcome.NOT_IN_QUEUE,
        classified_by_person=claim == Outcome.ALREADY_TRIAGED and set(wanted) <= {labels.marker}
        and classification(snapshot.labels, labels, rubric).complete,
        routed=oncall is not None or route is not None,
        route_stops=route is not None and route in rubric.stop_after,
        review=labels.review in wanted or labels.review in snapshot.labels,
        modules=bool(modules)))


def _final(d: _Draft, comment: PlannedComment | None, outcome: str, oncall: str | None, new_modules) -> Plan:
    proposal = d.proposal
    return proposal.with_(
        add_labels=tuple(d.wanted),
        comment=comment,
        outcome=outcome,
        sub_oncall=oncall,
        modules=tuple(new_modules),
        confidence=proposal.confidence if proposal.confidence in CONFIDENCES else None,
        drops=tuple(proposal.drops) + tuple(d.drops),
    )
