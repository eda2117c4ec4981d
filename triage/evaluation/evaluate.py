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

Against the procedure answer key (`examples/answer-keys/`, joined to the cases by `id`; `evaluate_key`):
- high priority: recall of the key's high-priority issues (flagged as above), per criterion, and the false-flag
  rate among the key's other issues;
- requests (key type feature or enhancement): the right type label (the key's, and not the other one), any type
  label, and `module: performance` on the key's performance enhancements;
- non-requests (key type bug, question, other): the share given a type label (feature or enhancement);
- the operating point (`threshold_sweep`): recall and false-flag rate had step 5 flagged at other thresholds,
  from the high-priority score each plan keeps (step 5's score): flagged at t when score >= t and score > 0,
  the same test step 5 applies with the rubric's threshold.

Halves (`half_of`, `split_halves`): every figure is also given on two fixed halves of the dataset, so that a
rule change that helps one half and hurts the other shows itself. A case's half is fixed by its id alone: the
first byte of sha256(id, UTF-8) even -> "A", odd -> "B". It does not depend on the order, the size or the
content of the dataset, so a case never changes half.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from triage.evaluation.dataset import GOLD_TYPES, ROUTES, Gold, module_routes, sub_oncall_routes
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
    # Step 4's labels by kind, for the answer key (labels.json `role: type`); None when the label set has none.
    feature_label: str | None = "feature"
    enhancement_label: str | None = "enhancement"
    performance_label: str | None = "module: performance"
    # --- from the configuration (issue 9): a queue with any routes; see `scoring_from_bundle` ---
    routes: tuple[str, ...] = ROUTES  # the confusion table's columns
    module_routes: tuple[str, ...] = ("parallelisms",)  # gold routes on which modules are scored
    unlabelled_route: str | None = None  # the route an issue is on when it has no sub-oncall label


def scoring_from_bundle(bundle) -> Scoring:
    """What the figures need, from the whole configuration (issue 9): its routes, the routes on which the procedure
    classifies modules (those that do not stop), those routes' modules (a module with no route belongs to every
    route), and the route that adds no label. For the distributed queue this equals `scoring_from_labels`."""
    import dataclasses

    labels, rubric = bundle.labels, bundle.rubric
    classifying = rubric.classifying_routes
    return dataclasses.replace(
        scoring_from_labels(labels),
        sub_oncalls={rule.label: name for name, rule in rubric.routes.items() if rule.label},
        parallelisms_modules=tuple(s.name for s in labels.specs
                                   if s.role == "module" and (s.route is None or s.route in classifying)),
        routes=tuple(rubric.precedence),
        module_routes=classifying,
        unlabelled_route=rubric.unlabelled_route,
    )


def scoring_from_labels(labels: LabelSet) -> Scoring:
    allowed = set(labels.with_role("module"))
    return Scoring(
        sub_oncalls=sub_oncall_routes(labels),
        parallelisms_modules=tuple(
            name for name, route in module_routes(labels).items() if route == "parallelisms" and name in allowed
        ),
        review_label=labels.review,
        marker_label=labels.marker,
        feature_label=_kind_label(labels, "feature"),
        enhancement_label=_kind_label(labels, "enhancement"),
        performance_label=_kind_label(labels, "performance"),
    )


def _kind_label(labels: LabelSet, kind: str) -> str | None:
    try:
        return getattr(labels, kind)
    except KeyError:
        return None


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
    return scoring.unlabelled_route or NO_ROUTE


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
    confusion: dict[str, Counter] = {route: Counter() for route in (*scoring.routes, "either")}
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
        if gold.route in scoring.module_routes and gold.modules:  # no gold module: not scored
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

    columns = [*scoring.routes, NO_ROUTE]
    return {
        "rows": len(cases),
        "outcomes": dict(sorted(outcomes.items())),
        "routing": {
            "scored": routed,
            "correct": correct,
            "accuracy": _ratio(correct, routed),
            "columns": columns,
            "confusion": {
                route: {col: confusion[route][col] for col in columns} for route in confusion if confusion[route]
            },
        },
        "modules": {
            "scored": module_cases,
            "routes": list(scoring.module_routes),
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
        if gold.route in scoring.module_routes and gold.modules:  # no gold module: not scored
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


# --- the procedure answer key ------------------------------------------------------------------------------

KEY_TYPES = ("feature", "enhancement", "bug", "question", "other")
REQUEST_TYPES = ("feature", "enhancement")
KEY_CRITERIA = (
    "crash", "silent_correctness", "regression", "multinode_hang", "checkpoint_corruption", "internal_assert",
    "many_users",
)
KEY_SURE = ("high", "medium", "low")


class AnswerKeyError(ValueError):
    """An answer key that cannot be used with a dataset; the message is one line."""


@dataclass(frozen=True)
class KeyEntry:
    """One line of a procedure answer key (`examples/answer-keys/SCHEMA.json`): how the written procedure, read
    literally, types the issue (step 4) and whether it meets a step 5 criterion."""

    id: str
    type: str
    performance: bool
    high_priority: bool
    criterion: str | None
    sure: str = "medium"

    @property
    def is_request(self) -> bool:
        return self.type in REQUEST_TYPES


def key_entry_from_json(obj: Any) -> KeyEntry:
    """Validate one parsed key line; ValueError with a short message naming the field."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        raise ValueError("'id' must be a non-empty string")
    if obj.get("type") not in KEY_TYPES:
        raise ValueError(f"'type' must be one of {', '.join(KEY_TYPES)}, not {obj.get('type')!r}")
    for name in ("performance", "high_priority"):
        if not isinstance(obj.get(name), bool):
            raise ValueError(f"'{name}' must be true or false")
    criterion = obj.get("criterion")
    if obj["high_priority"] and criterion not in KEY_CRITERIA:
        raise ValueError(f"'criterion' must be one of {', '.join(KEY_CRITERIA)} when high_priority is true")
    if not obj["high_priority"] and criterion is not None:
        raise ValueError("'criterion' must be null when high_priority is false")
    if obj["performance"] and obj["type"] != "enhancement":
        raise ValueError("'performance' may be true only for type enhancement")
    sure = obj.get("sure", "medium")
    if sure not in KEY_SURE:
        raise ValueError(f"'sure' must be one of {', '.join(KEY_SURE)}")
    return KeyEntry(obj["id"], obj["type"], obj["performance"], obj["high_priority"], criterion, sure)


def index_key(entries: Iterable[KeyEntry]) -> dict[str, KeyEntry]:
    """Entries by id; AnswerKeyError on a repeated id."""
    out: dict[str, KeyEntry] = {}
    for entry in entries:
        if entry.id in out:
            raise AnswerKeyError(f"id {entry.id} appears twice")
        out[entry.id] = entry
    return out


def join_key(cases: Sequence[Case], key: Mapping[str, KeyEntry]) -> list[tuple[Case, KeyEntry]]:
    """Each case with its key line. The key must cover exactly the dataset's ids: a missing or extra id would
    change every figure silently, so it is one error (AnswerKeyError) naming how many and the first of each."""
    ids = [case.id for case in cases]
    missing = [i for i in ids if i not in key]
    present = set(ids)
    extra = [i for i in key if i not in present]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} dataset id(s) have no key line (first: {missing[0]})")
        if extra:
            parts.append(f"{len(extra)} key id(s) are not in the dataset (first: {extra[0]})")
        raise AnswerKeyError("answer key and dataset differ: " + "; ".join(parts))
    return [(case, key[case.id]) for case in cases]


def high_priority_score(case: Case) -> float | None:
    """Step 5's score as the plan kept it (`Plan.high_priority_score`); None when step 5 did not run."""
    for step in case.plan.get("steps") or ():
        if step.get("step") == 5:
            return step.get("score")
    return None


def flagged_at(case: Case, threshold: float) -> bool:
    """Would step 5 have flagged this case with `threshold`? The same test as step 5's (score >= threshold and
    > 0); a plan that stopped before step 5 (or skipped it) has no score and is never flagged."""
    found = high_priority_score(case)
    return found is not None and found > 0 and found >= threshold


def _type_labels(case: Case, scoring: Scoring) -> set[str]:
    kinds = {scoring.feature_label: "feature", scoring.enhancement_label: "enhancement"}
    return {kind for name, kind in kinds.items() if name is not None and name in labels_after(case)}


def evaluate_key(pairs: Sequence[tuple[Case, KeyEntry]], scoring: Scoring) -> dict[str, Any]:
    """Figures against the procedure answer key (see the module doc), as a JSON-able dict."""
    hp_key = hp_flagged = others = false_flags = 0
    by_criterion: dict[str, Counter] = {}
    requests = right = typed_requests = 0
    by_type: dict[str, Counter] = {t: Counter() for t in REQUEST_TYPES}
    non_requests = typed_non_requests = 0
    perf_key = perf_found = perf_false = 0
    for case, entry in pairs:
        flagged = flagged_high_priority(case, scoring)
        if entry.high_priority:
            hp_key += 1
            hp_flagged += flagged
            counts = by_criterion.setdefault(entry.criterion or "unknown", Counter())
            counts["key"] += 1
            counts["flagged"] += flagged
        else:
            others += 1
            false_flags += flagged
        types = _type_labels(case, scoring)
        perf = scoring.performance_label is not None and scoring.performance_label in labels_after(case)
        if entry.is_request:
            requests += 1
            hit = types == {entry.type}
            right += hit
            typed_requests += bool(types)
            by_type[entry.type]["key"] += 1
            by_type[entry.type]["right"] += hit
        else:
            non_requests += 1
            typed_non_requests += bool(types)
        if entry.performance:
            perf_key += 1
            perf_found += perf
        else:
            perf_false += perf
    return {
        "rows": len(pairs),
        "high_priority": {
            "key": hp_key,
            "flagged": hp_flagged,
            "recall": _ratio(hp_flagged, hp_key),
            "others": others,
            "false_flags": false_flags,
            "false_flag_rate": _ratio(false_flags, others),
            "by_criterion": {
                name: {"key": c["key"], "flagged": c["flagged"], "recall": _ratio(c["flagged"], c["key"])}
                for name, c in sorted(by_criterion.items())
            },
        },
        "requests": {
            "key": requests,
            "right_type": right,
            "right_type_rate": _ratio(right, requests),
            "typed": typed_requests,
            "typed_rate": _ratio(typed_requests, requests),
            "by_type": {
                name: {"key": c["key"], "right": c["right"], "rate": _ratio(c["right"], c["key"])}
                for name, c in by_type.items()
            },
        },
        "non_requests": {
            "key": non_requests,
            "typed": typed_non_requests,
            "typed_rate": _ratio(typed_non_requests, non_requests),
        },
        "performance": {
            "key": perf_key,
            "labelled": perf_found,
            "recall": _ratio(perf_found, perf_key),
            "false_labels": perf_false,
        },
    }


def threshold_sweep(pairs: Sequence[tuple[Case, KeyEntry]], thresholds: Iterable[float]) -> list[dict[str, Any]]:
    """For each threshold: how many of the key's high-priority issues and of its others step 5 would flag."""
    rows = []
    for threshold in sorted(set(thresholds)):
        hp = sum(1 for _, e in pairs if e.high_priority)
        hit = sum(1 for c, e in pairs if e.high_priority and flagged_at(c, threshold))
        other = len(pairs) - hp
        false = sum(1 for c, e in pairs if not e.high_priority and flagged_at(c, threshold))
        rows.append({
            "threshold": threshold,
            "flagged": hit,
            "recall": _ratio(hit, hp),
            "false_flags": false,
            "false_flag_rate": _ratio(false, other),
        })
    return rows


def key_misses(pairs: Sequence[tuple[Case, KeyEntry]], scoring: Scoring) -> list[Miss]:
    """Every miss against the key, in case order (kinds key_hp_missed, key_hp_false_flag, key_type_wrong,
    key_type_on_non_request)."""
    found: list[Miss] = []
    for case, entry in pairs:
        adds = added_labels(case)
        reasons = tuple(case.plan.get("reasons") or ())
        outcome = case.plan.get("outcome")

        def miss(kind: str, expected: str, planned: str) -> None:
            found.append(Miss(case.id, case.title, kind, expected, planned, outcome, reasons))

        flagged = flagged_high_priority(case, scoring)
        if entry.high_priority and not flagged:
            miss("key_hp_missed", f"flag for review ({entry.criterion})", _names(adds))
        if not entry.high_priority and flagged:
            miss("key_hp_false_flag", f"no high-priority flag (key: {entry.type})", _names(adds))
        types = _type_labels(case, scoring)
        if entry.is_request and types != {entry.type}:
            miss("key_type_wrong", entry.type, _names(types))
        if not entry.is_request and types:
            miss("key_type_on_non_request", f"no type label (key: {entry.type})", _names(types))
    return found
