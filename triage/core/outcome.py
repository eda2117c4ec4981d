"""Two facts every layer must agree on, each derived in exactly one place: is the issue already classified by a
person (step 0, the policy, the service's cheap pre-check), and which outcome a plan reaches (the procedure's
proposal and the policy's final word).

May import: the standard library, `triage.config` (types), `triage.core.vocab`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from triage.config.labels import LabelSet
from triage.core.vocab import Outcome, Role


@dataclass(frozen=True)
class Classification:
    """The module and sub-oncall labels among some of an issue's labels, and whether together they are a whole
    classification: a module and a sub-oncall, or a module alone in a queue whose default route adds no
    sub-oncall label."""

    modules: tuple[str, ...]
    oncalls: tuple[str, ...]
    unlabelled_route: str | None

    @property
    def complete(self) -> bool:
        return bool(self.modules) and (bool(self.oncalls) or self.unlabelled_route is not None)

    @property
    def partial(self) -> bool:
        return bool(self.modules or self.oncalls)


def classification(names: Iterable[str], labels: LabelSet, rubric=None) -> Classification:
    """Read the classification in `names`. Step 0 passes the labels people added (a bot's own earlier labels are
    not a person's classification); the policy and the service's pre-check pass all the issue's labels."""
    names = tuple(names)
    return Classification(
        modules=tuple(n for n in names if labels.role(n) == Role.MODULE),
        oncalls=tuple(n for n in names if labels.role(n) == Role.SUB_ONCALL),
        unlabelled_route=getattr(rubric, "unlabelled_route", None) if rubric is not None else None,
    )


@dataclass(frozen=True)
class OutcomeFacts:
    """What an outcome depends on. The procedure fills it from its steps, the policy from the labels that will be
    on the issue; both then ask `derive_outcome`, so their stories cannot drift apart."""

    flagged: bool = False  # step 5 flagged it: a person looks first
    not_in_queue: bool = False  # step 1 sent it back for a person to re-route
    classified_by_person: bool = False  # step 0: nothing to add but the marker
    routed: bool = True  # a sub-oncall (or the queue's unlabelled route) is known
    route_stops: bool = False  # the route's team triages further itself
    review: bool = False  # the review label is (or will be) on the issue
    modules: bool = False  # module labels are (or will be) on the issue


def derive_outcome(facts: OutcomeFacts) -> Outcome:
    if facts.flagged:
        return Outcome.HIGH_PRIORITY
    if facts.not_in_queue:
        return Outcome.NOT_IN_QUEUE
    if facts.classified_by_person:
        return Outcome.ALREADY_TRIAGED
    if not facts.routed:
        return Outcome.NEEDS_REVIEW
    if facts.route_stops:
        return Outcome.ROUTED
    return Outcome.NEEDS_REVIEW if facts.review or not facts.modules else Outcome.CLASSIFIED


__all__ = ["Classification", "OutcomeFacts", "classification", "derive_outcome"]
