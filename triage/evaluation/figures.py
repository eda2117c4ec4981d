"""Accuracy figures against the labels people gave: from cases to a figures dict, and the misses behind them.

Pure: no I/O, no clock. The caller plans each row (and times it) and hands over `Case`s; this module only compares.
What is compared is the label state after the plan with the gold answer (see `triage.evaluation.cases`), in the
configuration's terms (`triage.evaluation.scoring`).

Figures (the dataset README's list):
- routing: accuracy over cases whose gold route is not null (`either` accepts each route labels.json `gold.either`
  names), and a confusion table gold route x predicted route ("none" when the plan routes nowhere);
- modules: micro precision/recall/F1 and per label, over cases whose gold route is one on which the procedure
  classifies modules and that have gold modules, counting only those routes' modules;
- triage review rate: plans adding the review label / all plans;
- high priority: recall (gold high-priority cases flagged: review added, marker not) and the false-flag rate
  (other cases flagged / all other cases);
- wrongly not in the queue: outcome `not_distributed` (the plan's stable name) among cases in the queue in gold;
- feature and enhancement: precision and recall of the plan adding the kind's label against gold `type`;
- timing: planning time per issue, mean / p95 / max in ms.
Ratios with an empty denominator are None ("n/a"), never 0 or 1: an unmeasured figure must not look good.

Halves (`half_of`, `split_halves`): every figure is also given on two fixed halves of the dataset, so that a
rule change that helps one half and hurts the other shows itself. A case's half is fixed by its id alone: the
first byte of sha256(id, UTF-8) even -> "A", odd -> "B". It does not depend on the order, the size or the
content of the dataset, so a case never changes half.

May import: the standard library, `triage.evaluation.cases`, `triage.evaluation.gold`, `triage.evaluation.scoring`.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from triage.evaluation.cases import Case, added_labels
from triage.evaluation.gold import EITHER
from triage.evaluation.scoring import (NO_ROUTE, Scoring, expected_route, flagged_high_priority, predicted_modules,
                                      predicted_route, request_kinds, route_correct)


@dataclass
class Counts:
    """True positives, false positives and false negatives of one label (or of all, micro-averaged)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, hit: bool, expected: bool) -> None:
        self.tp += hit and expected
        self.fp += hit and not expected
        self.fn += expected and not hit

    def figures(self) -> dict[str, Any]:
        precision = ratio(self.tp, self.tp + self.fp)
        recall = ratio(self.tp, self.tp + self.fn)
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
    expected: str  # (and key_* kinds: `triage.evaluation.key_figures`)
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


def miss(case: Case, kind: str, expected: str, planned: str) -> Miss:
    return Miss(case.id, case.title, kind, expected, planned, case.plan.get("outcome"),
                tuple(case.plan.get("reasons") or ()))


def ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def names(items: Iterable[str]) -> str:
    items = sorted(items)
    return ", ".join(items) if items else "none"


# --- figures -----------------------------------------------------------------------------------------------


def evaluate(cases: Sequence[Case], scoring: Scoring) -> dict[str, Any]:
    """All figures for `cases`, as a JSON-able dict (see the module doc)."""
    outcomes = Counter(str(case.plan.get("outcome")) for case in cases)
    review = sum(scoring.review_label in added_labels(case) for case in cases)
    in_queue = [case for case in cases if not case.gold.not_distributed]
    wrongly_not = sum(case.plan.get("outcome") == "not_distributed" for case in in_queue)
    types = {kind: Counts() for kind in scoring.type_labels}
    for case in cases:
        kinds = request_kinds(case, scoring)
        for kind, counts in types.items():
            counts.add(kind in kinds, case.gold.type == kind)
    return {
        "rows": len(cases),
        "outcomes": dict(sorted(outcomes.items())),
        "routing": routing(cases, scoring),
        "modules": _modules(cases, scoring),
        "triage_review": {"count": review, "rate": ratio(review, len(cases))},
        "high_priority": _high_priority(cases, scoring),
        "not_distributed": {
            "distributed": len(in_queue),
            "wrongly_not_distributed": wrongly_not,
            "rate": ratio(wrongly_not, len(in_queue)),
        },
        "types": {kind: counts.figures() for kind, counts in types.items()},
        "timing_ms": timing([c.elapsed_ms if c.elapsed_ms is not None else c.plan.get("elapsed_ms") for c in cases]),
    }


def routing(cases: Sequence[Case], scoring: Scoring) -> dict[str, Any]:
    """Routing accuracy over the cases with a gold route, and the confusion of gold against planned routes."""
    columns = [*scoring.routes, NO_ROUTE]
    confusion: dict[str, Counter] = {route: Counter() for route in (*scoring.routes, EITHER)}
    scored = correct = 0
    for case in cases:
        if case.gold.route is None:
            continue
        predicted = predicted_route(case, scoring)
        confusion[case.gold.route][predicted] += 1
        scored += 1
        correct += route_correct(case.gold.route, predicted, scoring)
    return {
        "scored": scored,
        "correct": correct,
        "accuracy": ratio(correct, scored),
        "columns": columns,
        "confusion": {route: {col: row[col] for col in columns} for route, row in confusion.items() if row},
    }


def module_scored(case: Case, scoring: Scoring) -> bool:
    """Modules are scored where the procedure classifies them, and only when gold has some."""
    return case.gold.route in scoring.module_routes and bool(case.gold.modules)


def _modules(cases: Sequence[Case], scoring: Scoring) -> dict[str, Any]:
    micro = Counts()
    per_label = {name: Counts() for name in scoring.modules}
    support: Counter = Counter()
    scored = [case for case in cases if module_scored(case, scoring)]
    for case in scored:
        want = set(case.gold.modules)
        got = predicted_modules(case, scoring)
        for name, counts in per_label.items():
            support[name] += name in want
            for each in (micro, counts):
                each.add(name in got, name in want)
    return {
        "scored": len(scored),
        "routes": list(scoring.module_routes),
        "labels": list(scoring.modules),
        "micro": micro.figures(),
        "per_label": {name: {**counts.figures(), "support": support[name]} for name, counts in per_label.items()},
    }


def _high_priority(cases: Sequence[Case], scoring: Scoring) -> dict[str, Any]:
    gold = [flagged_high_priority(case, scoring) for case in cases if case.gold.high_priority]
    others = [flagged_high_priority(case, scoring) for case in cases if not case.gold.high_priority]
    return {
        "gold": len(gold),
        "flagged": sum(gold),
        "recall": ratio(sum(gold), len(gold)),
        "others": len(others),
        "false_flags": sum(others),
        "false_flag_rate": ratio(sum(others), len(others)),
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
        if gold.route is not None:
            predicted = predicted_route(case, scoring)
            if not route_correct(gold.route, predicted, scoring):
                found.append(miss(case, "route", expected_route(gold.route, scoring), predicted))
        if module_scored(case, scoring):
            want = {m for m in gold.modules if m in scoring.modules}
            got = predicted_modules(case, scoring)
            found += [miss(case, "module_fp", names(want), name) for name in sorted(got - want)]
            found += [miss(case, "module_fn", name, names(got)) for name in sorted(want - got)]
        flagged = flagged_high_priority(case, scoring)
        if gold.high_priority and not flagged:
            found.append(miss(case, "hp_missed", "flag for review (no marker)", names(adds)))
        if not gold.high_priority and flagged:
            found.append(miss(case, "hp_false_flag", "no high-priority flag", names(adds)))
        kinds = request_kinds(case, scoring)
        for kind in scoring.type_labels:
            if kind in kinds and gold.type != kind:
                found.append(miss(case, "type_fp", gold.type or "no type", kind))
            if gold.type == kind and kind not in kinds:
                found.append(miss(case, "type_fn", kind, names(kinds)))
        if not gold.not_distributed and case.plan.get("outcome") == "not_distributed":
            found.append(miss(case, "not_distributed", scoring.words.queue, scoring.words.not_in_queue_outcome))
    return found


# --- halves ------------------------------------------------------------------------------------------------

HALVES = ("A", "B")


def half_of(case_id: str) -> str:
    """The fixed half of a case: the first byte of sha256(id) even -> "A", odd -> "B" (see the module doc)."""
    return HALVES[hashlib.sha256(case_id.encode("utf-8")).digest()[0] & 1]


def split_halves(cases: Sequence[Case]) -> dict[str, list[Case]]:
    """The cases of each half, in their order."""
    out: dict[str, list[Case]] = {half: [] for half in HALVES}
    for case in cases:
        out[half_of(case.id)].append(case)
    return out
