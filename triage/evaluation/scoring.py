"""What the figures count, read from the queue's configuration, and what a case's plan answers in those terms.

Nothing about a particular queue is written here: the routes (the confusion table's columns, in the rubric's
precedence), each sub-oncall label's route, the routes on which the procedure classifies modules (those it does
not stop after) and those routes' modules (a module with no route belongs to every route), the route whose team
adds no label, the routes a gold `either` accepts (labels.json `gold.either`), and the labels each role plays all
come from the bundle. A queue with five routes is scored by the same code as the bundled ones.

May import: the standard library, `triage.config`, `triage.evaluation.cases`, `triage.evaluation.gold`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from triage.config.labels import Role
from triage.config.words import QueueWords, queue_words
from triage.evaluation.cases import Case, added_labels, labels_after
from triage.evaluation.gold import EITHER, GOLD_TYPES, kind_label

NO_ROUTE = "none"


@dataclass(frozen=True)
class Scoring:
    """What the figures need to know about the configuration (see the module doc)."""

    routes: tuple[str, ...]  # the confusion table's columns, in precedence order
    sub_oncalls: Mapping[str, str]  # sub-oncall label -> route
    module_routes: tuple[str, ...]  # gold routes on which modules are scored
    modules: tuple[str, ...]  # the module labels scored there
    review_label: str
    marker_label: str
    # Step 4's request kinds -> their labels (labels.json `role: type`), for the kinds the label set has.
    type_labels: Mapping[str, str]
    performance_label: str | None = None
    unlabelled_route: str | None = None  # the route an issue is on when it has no sub-oncall label
    either: tuple[str, ...] = ()  # the routes a gold `either` accepts
    words: QueueWords = queue_words(None, "queue")  # what the queue calls step 1's decisions (rubric `words:`)


def scoring_from_bundle(bundle) -> Scoring:
    labels, rubric = bundle.labels, bundle.rubric
    classifying = rubric.classifying_routes
    kinds = {kind: kind_label(labels, kind) for kind in GOLD_TYPES}
    return Scoring(
        routes=tuple(rubric.precedence),
        sub_oncalls={rule.label: name for name, rule in rubric.routes.items() if rule.label},
        module_routes=classifying,
        modules=tuple(s.name for s in labels.specs
                      if s.role == Role.MODULE and (s.route is None or s.route in classifying)),
        review_label=labels.review,
        marker_label=labels.marker,
        type_labels={kind: label for kind, label in kinds.items() if label is not None},
        performance_label=kind_label(labels, "performance"),
        unlabelled_route=rubric.unlabelled_route,
        either=labels.either_routes,
        words=queue_words(rubric.words, labels.queue_label),
    )


def predicted_route(case: Case, scoring: Scoring) -> str:
    """The sub-oncall the issue ends up with: one the plan adds, else one it already had, else the route that adds
    no label, else "none"."""
    for source in (added_labels(case), list(case.labels_before)):
        routes = [scoring.sub_oncalls[name] for name in source if name in scoring.sub_oncalls]
        if routes:
            return routes[0]
    return scoring.unlabelled_route or NO_ROUTE


def route_correct(gold_route: str, predicted: str, scoring: Scoring) -> bool:
    if gold_route == EITHER:
        return predicted in scoring.either
    return gold_route == predicted


def expected_route(gold_route: str, scoring: Scoring) -> str:
    """The gold route in words: `either` is spelled out as the routes it accepts."""
    return " or ".join(scoring.either) if gold_route == EITHER else gold_route


def predicted_modules(case: Case, scoring: Scoring) -> set[str]:
    return {name for name in labels_after(case) if name in scoring.modules}


def flagged_high_priority(case: Case, scoring: Scoring) -> bool:
    """Flagged for a human as possibly high priority: the plan adds the review label and not the marker."""
    adds = added_labels(case)
    return scoring.review_label in adds and scoring.marker_label not in adds


def request_kinds(case: Case, scoring: Scoring) -> set[str]:
    """The request kinds (feature, enhancement) whose labels the issue carries after the plan."""
    after = labels_after(case)
    return {kind for kind, label in scoring.type_labels.items() if label in after}
