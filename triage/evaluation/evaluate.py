"""Accuracy figures: from (gold, plan) pairs to a figures dict, and the list of misses behind them.

Pure: no I/O, no clock. The caller plans each row (and times it) and hands over `Case`s; this module only
compares. What is compared is the label state after the plan (labels the issue had + labels the plan adds) with
the gold answer, so a label already present at queue time counts as the bot's answer too.

Figures (the dataset README's list):
- routing: accuracy over cases whose gold route is not null (`either` accepts parallelisms or infra), and a
  confusion table gold route x predicted sub-oncall ("none" when the plan routes nowhere);
- modules: micro precision/recall/F1 and per label, over cases routed `parallelisms` in gold, counting only
  the parallelisms modules (labels.json `role: module`, `route: parallelisms`);
- triage review rate: plans adding the review label / all plans;
- high priority: recall (gold high-priority cases flagged: review added, marker not) and the false-flag rate
  (other cases flagged / all other cases);
- wrongly not distributed: outcome `not_distributed` among cases that are distributed in gold;
- feature and enhancement: precision and recall of the plan adding the type label against gold `type`;
- timing: planning time per issue, mean / p95 / max in ms.
Ratios with an empty denominator are None ("n/a"), never 0 or 1: an unmeasured figure must not look good.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from triage.evaluation.dataset import GOLD_ROUTES, GOLD_TYPES, ROUTES, Gold, module_routes, sub_oncall_routes
from triage.config.labels import LabelSet

NO_ROUTE = "none"


@dataclass(frozen=True)
class Scoring:
    """What the figures need to know about the label set."""

    sub_oncalls: Mapping[str, str]  # sub-oncall label -> route
    parallelisms_modules: tuple[str, ...]
    review_label: str
    marker_label: str
    type_labels: tuple[str, ...] = GOLD_TYPES


def scoring_from_labels(labels: LabelSet) -> Scoring:
    allowed = set(labels.with_role("module"))
    return Scoring(
        sub_oncalls=sub_oncall_routes(labels),
        parallelisms_modules=tuple(
            name for name, route in module_routes(labels).items() if route == "parallelisms" and name in allowed
        ),
        review_label=labels.review,
        marker_label=labels.marker,
    )


@dataclass(frozen=True)
class Case:
    """One replayed issue: its gold answer, the labels it had when planned, and the plan (as `Plan.to_dict()`)."""

    id: str
    title: str
    gold: Gold
    plan: Mapping[str, Any]
    labels_before: tuple[str, ...] = ()
    elapsed_ms: float | None = None


@dataclass
class _Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def figures(self) -> dict[str, Any]:
        precision = _ratio(self.tp, self.tp + self.fp)
        recall = _ratio(self.tp, self.tp + self.fn)
        if precision is None or recall is None:
            f1 = None
        else:
            f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": precision, "recall": recall, "f1": f1}


@dataclass(frozen=True)
class Miss:
    id: str
    title: str
    kind: str  # route | module_fp | module_fn | hp_missed | hp_false_flag | type_fp | type_fn | not_distributed
    expected: str
    planned: str
    outcome: str | None
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "expected": self.expected,
            "planned": self.planned,
            "outcome": self.outcome,
            "reasons": list(self.reasons),
        }


# --- what a plan says --------------------------------------------------------------------------------------


def added_labels(case: Case) -> list[str]:
    return list(case.plan.get("add_labels") or [])


def labels_after(case: Case) -> list[str]:
    return list(dict.fromkeys([*case.labels_before, *added_labels(case)]))


def predicted_route(case: Case, scoring: Scoring) -> str:
    """The sub-oncall the issue ends up with: one the plan adds, else one it already had, else "none"."""
    for source in (added_labels(case), list(case.labels_before)):
        routes = [scoring.sub_oncalls[name] for name in source if name in scoring.sub_oncalls]
        if routes:
            return routes[0]
    return NO_ROUTE


def predicted_modules(case: Case, scoring: Scoring) -> set[str]:
    return {name for name in labels_after(case) if name in scoring.parallelisms_modules}


def flagged_high_priority(case: Case, scoring: Scoring) -> bool:
    """Flagged for a human as possibly high priority: the plan adds the review label and not the marker."""
    adds = added_labels(case)
    return scoring.review_label in adds and scoring.marker_label not in adds


def route_correct(gold_route: str, predicted: str) -> bool:
    if gold_route == "either":
        return predicted in ("parallelisms", "infra")
    return gold_route == predicted


# --- figures -----------------------------------------------------------------------------------------------


def evaluate(cases: Sequence[Case], scoring: Scoring) -> dict[str, Any]:
    """All figures for `cases`, as a JSON-able dict (see the module doc)."""
    confusion: dict[str, Counter] = {route: Counter() for route in GOLD_ROUTES}
    routed = correct = 0
    micro = _Counts()
    per_label = {name: _Counts() for name in scoring.parallelisms_modules}
    support: Counter = Counter()
    module_cases = 0
    review = 0
    hp_gold = hp_flagged = other = false_flags = 0
    distributed = wrongly_not = 0
    types = {name: _Counts() for name in scoring.type_labels}
    outcomes: Counter = Counter()

    for case in cases:
        outcomes[str(case.plan.get("outcome"))] += 1
        adds = added_labels(case)
        gold = case.gold
        if gold.route is not None:
            pred = predicted_route(case, scoring)
            confusion[gold.route][pred] += 1
            routed += 1
            correct += route_correct(gold.route, pred)
        if gold.route == "parallelisms":
            module_cases += 1
            want = {m for m in gold.modules if m in per_label}
            got = predicted_modules(case, scoring)
            for name in per_label:
                hit, exp = name in got, name in want
                support[name] += exp
                for counts in (micro, per_label[name]):
                    counts.tp += hit and exp
                    counts.fp += hit and not exp
                    counts.fn += exp and not hit
        review += scoring.review_label in adds
        flagged = flagged_high_priority(case, scoring)
        if gold.high_priority:
            hp_gold += 1
            hp_flagged += flagged
        else:
            other += 1
            false_flags += flagged
        if not gold.not_distributed:
            distributed += 1
            wrongly_not += case.plan.get("outcome") == "not_distributed"
        after = labels_after(case)
        for name, counts in types.items():
            hit, exp = name in after, gold.type == name
            counts.tp += hit and exp
            counts.fp += hit and not exp
            counts.fn += exp and not hit

    columns = [*ROUTES, NO_ROUTE]
    return {
        "rows": len(cases),
        "outcomes": dict(sorted(outcomes.items())),
        "routing": {
            "scored": routed,
            "correct": correct,
            "accuracy": _ratio(correct, routed),
            "columns": columns,
            "confusion": {
                route: {col: confusion[route][col] for col in columns} for route in GOLD_ROUTES if confusion[route]
            },
        },
        "modules": {
            "scored": module_cases,
            "labels": list(scoring.parallelisms_modules),
            "micro": micro.figures(),
            "per_label": {
                name: {**counts.figures(), "support": support[name]} for name, counts in per_label.items()
            },
        },
        "triage_review": {"count": review, "rate": _ratio(review, len(cases))},
        "high_priority": {
            "gold": hp_gold,
            "flagged": hp_flagged,
            "recall": _ratio(hp_flagged, hp_gold),
            "others": other,
            "false_flags": false_flags,
            "false_flag_rate": _ratio(false_flags, other),
        },
        "not_distributed": {
            "distributed": distributed,
            "wrongly_not_distributed": wrongly_not,
            "rate": _ratio(wrongly_not, distributed),
        },
        "types": {name: counts.figures() for name, counts in types.items()},
        "timing_ms": timing([c.elapsed_ms if c.elapsed_ms is not None else c.plan.get("elapsed_ms") for c in cases]),
    }


def timing(values: Iterable[float | None]) -> dict[str, float | None]:
    """Mean, p95 (nearest rank) and max of the known values."""
    known = sorted(float(v) for v in values if v is not None)
    if not known:
        return {"mean": None, "p95": None, "max": None}
    rank = max(1, math.ceil(0.95 * len(known)))
    return {"mean": sum(known) / len(known), "p95": known[rank - 1], "max": known[-1]}


# --- misses ------------------------------------------------------------------------------------------------


def misses(cases: Sequence[Case], scoring: Scoring) -> list[Miss]:
    """Every miss behind the figures, in case order, so a maintainer can see which issue and why."""
    found: list[Miss] = []
    for case in cases:
        gold = case.gold
        adds = added_labels(case)
        outcome = case.plan.get("outcome")

        def miss(kind: str, expected: str, planned: str) -> None:
            found.append(
                Miss(case.id, case.title, kind, expected, planned, outcome, tuple(case.plan.get("reasons") or ()))
            )

        if gold.route is not None:
            pred = predicted_route(case, scoring)
            if not route_correct(gold.route, pred):
                expected = "parallelisms or infra" if gold.route == "either" else gold.route
                miss("route", expected, pred)
        if gold.route == "parallelisms":
            want = {m for m in gold.modules if m in scoring.parallelisms_modules}
            got = predicted_modules(case, scoring)
            for name in sorted(got - want):
                miss("module_fp", _names(want), name)
            for name in sorted(want - got):
                miss("module_fn", name, _names(got))
        flagged = flagged_high_priority(case, scoring)
        if gold.high_priority and not flagged:
            miss("hp_missed", "flag for review (no marker)", _names(adds))
        if not gold.high_priority and flagged:
            miss("hp_false_flag", "no high-priority flag", _names(adds))
        after = labels_after(case)
        for name in scoring.type_labels:
            if name in after and gold.type != name:
                miss("type_fp", gold.type or "no type", name)
            if gold.type == name and name not in after:
                miss("type_fn", name, _names(t for t in scoring.type_labels if t in after))
        if not gold.not_distributed and outcome == "not_distributed":
            miss("not_distributed", "distributed", "not_distributed")
    return found


def _names(items: Iterable[str]) -> str:
    items = sorted(items)
    return ", ".join(items) if items else "none"


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None
