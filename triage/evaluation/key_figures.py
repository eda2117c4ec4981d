"""Figures against a procedure answer key (`triage.evaluation.answer_key`), joined to the cases by id.

Pure, like `triage.evaluation.figures`:
- high priority: recall of the key's high-priority issues (flagged: review added, marker not), per criterion and
  over the ones the key is sure of (`sure: high`), and the false-flag rate among the key's other issues;
- requests (key type feature or enhancement): the right type label (the key's, and not the other one), any type
  label, and the performance label on the key's performance enhancements;
- non-requests (key type bug, question, other): the share given a type label (feature or enhancement);
- routing in the queue, when the key reads step 1 (`not_distributed`): routing accuracy against the people's
  labels over the issues the key reads as in the queue. Step 2 routes only what step 1 kept: an issue the
  procedure says is not in the queue has no right sub-oncall, whatever label people gave it. With it, step 1
  itself (`not_in_queue`): the key's not-distributed issues sent away (outcome `not_distributed`), and the key's
  in-queue issues sent away (a real bug lost to the queue).
- the operating point (`threshold_sweep`): recall and false-flag rate had step 5 flagged at other thresholds,
  from the high-priority score each plan keeps (step 5's score): flagged at t when score >= t and score > 0,
  the same test step 5 applies with the rubric's threshold.

May import: the standard library, `triage.evaluation.*`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from triage.evaluation.answer_key import REQUEST_TYPES, KeyEntry
from triage.evaluation.cases import Case, added_labels, high_priority_score, labels_after
from triage.evaluation.figures import Miss, miss, names, ratio, routing
from triage.evaluation.scoring import Scoring, flagged_high_priority, request_kinds

Pairs = Sequence[tuple[Case, KeyEntry]]


def flagged_at(case: Case, threshold: float) -> bool:
    """Would step 5 have flagged this case with `threshold`? The same test as step 5's (score >= threshold and
    > 0); a plan that stopped before step 5 (or skipped it) has no score and is never flagged."""
    found = high_priority_score(case)
    return found is not None and found > 0 and found >= threshold


def evaluate_key(pairs: Pairs, scoring: Scoring) -> dict[str, Any]:
    """Figures against the procedure answer key (see the module doc), as a JSON-able dict."""
    return {
        "rows": len(pairs),
        "high_priority": _high_priority(pairs, scoring),
        **_requests(pairs, scoring),
        "performance": _performance(pairs, scoring),
        **({"routing_in_queue": _routing_in_queue(pairs, scoring), "not_in_queue": _not_in_queue(pairs)}
           if any(entry.not_distributed is not None for _, entry in pairs) else {}),
    }


def _sent_away(case: Case) -> bool:
    return case.plan.get("outcome") == "not_distributed"


def _not_in_queue(pairs: Pairs) -> dict[str, Any]:
    """Step 1 against the key: its not-distributed issues sent away, and its in-queue issues wrongly sent away."""
    away = [_sent_away(case) for case, entry in pairs if entry.not_distributed]
    kept = [_sent_away(case) for case, entry in pairs if entry.not_distributed is False]
    return {
        "key": len(away), "sent_away": sum(away), "rate": ratio(sum(away), len(away)),
        "in_queue": len(kept), "wrongly_sent_away": sum(kept), "wrongly_rate": ratio(sum(kept), len(kept)),
    }


def _routing_in_queue(pairs: Pairs, scoring: Scoring) -> dict[str, Any]:
    """The routing figures over the cases the key keeps in the queue, and how many routed cases it left out."""
    kept = routing([case for case, entry in pairs if not entry.not_distributed], scoring)
    left_out = sum(1 for case, entry in pairs if case.gold.route is not None and entry.not_distributed)
    return {"scored": kept["scored"], "correct": kept["correct"], "accuracy": kept["accuracy"],
            "not_in_queue": left_out}


def _high_priority(pairs: Pairs, scoring: Scoring) -> dict[str, Any]:
    key = [(entry, flagged_high_priority(case, scoring)) for case, entry in pairs if entry.high_priority]
    others = [flagged_high_priority(case, scoring) for case, entry in pairs if not entry.high_priority]
    by_criterion: dict[str, Counter] = {}
    for entry, flagged in key:
        counts = by_criterion.setdefault(entry.criterion or "unknown", Counter())
        counts["key"] += 1
        counts["flagged"] += flagged
    flagged = sum(f for _, f in key)
    sure = [f for entry, f in key if entry.sure == "high"]
    return {
        "key": len(key),
        "flagged": flagged,
        "recall": ratio(flagged, len(key)),
        "sure": {"key": len(sure), "flagged": sum(sure), "recall": ratio(sum(sure), len(sure))},
        "others": len(others),
        "false_flags": sum(others),
        "false_flag_rate": ratio(sum(others), len(others)),
        "by_criterion": {
            name: {"key": c["key"], "flagged": c["flagged"], "recall": ratio(c["flagged"], c["key"])}
            for name, c in sorted(by_criterion.items())
        },
    }


def _requests(pairs: Pairs, scoring: Scoring) -> dict[str, Any]:
    requests = right = typed_requests = non_requests = typed_non_requests = 0
    by_type: dict[str, Counter] = {t: Counter() for t in REQUEST_TYPES}
    for case, entry in pairs:
        kinds = request_kinds(case, scoring)
        if entry.is_request:
            hit = kinds == {entry.type}
            requests += 1
            right += hit
            typed_requests += bool(kinds)
            by_type[entry.type]["key"] += 1
            by_type[entry.type]["right"] += hit
        else:
            non_requests += 1
            typed_non_requests += bool(kinds)
    return {
        "requests": {
            "key": requests,
            "right_type": right,
            "right_type_rate": ratio(right, requests),
            "typed": typed_requests,
            "typed_rate": ratio(typed_requests, requests),
            "by_type": {
                name: {"key": c["key"], "right": c["right"], "rate": ratio(c["right"], c["key"])}
                for name, c in by_type.items()
            },
        },
        "non_requests": {
            "key": non_requests,
            "typed": typed_non_requests,
            "typed_rate": ratio(typed_non_requests, non_requests),
        },
    }


def _performance(pairs: Pairs, scoring: Scoring) -> dict[str, Any]:
    label = scoring.performance_label
    labelled = [(entry.performance, label is not None and label in labels_after(case)) for case, entry in pairs]
    found = sum(has for expected, has in labelled if expected)
    key = sum(expected for expected, _ in labelled)
    return {
        "key": key,
        "labelled": found,
        "recall": ratio(found, key),
        "false_labels": sum(has for expected, has in labelled if not expected),
    }


def threshold_sweep(pairs: Pairs, thresholds: Iterable[float]) -> list[dict[str, Any]]:
    """For each threshold: how many of the key's high-priority issues and of its others step 5 would flag."""
    rows = []
    hp = sum(1 for _, e in pairs if e.high_priority)
    for threshold in sorted(set(thresholds)):
        hit = sum(1 for c, e in pairs if e.high_priority and flagged_at(c, threshold))
        false = sum(1 for c, e in pairs if not e.high_priority and flagged_at(c, threshold))
        rows.append({
            "threshold": threshold,
            "flagged": hit,
            "recall": ratio(hit, hp),
            "false_flags": false,
            "false_flag_rate": ratio(false, len(pairs) - hp),
        })
    return rows


def key_misses(pairs: Pairs, scoring: Scoring) -> list[Miss]:
    """Every miss against the key, in case order (kinds key_hp_missed, key_hp_false_flag, key_type_wrong,
    key_type_on_non_request, and with a key that reads step 1 key_kept_not_distributed, key_sent_away)."""
    found: list[Miss] = []
    for case, entry in pairs:
        adds = added_labels(case)
        flagged = flagged_high_priority(case, scoring)
        if entry.high_priority and not flagged:
            found.append(miss(case, "key_hp_missed", f"flag for review ({entry.criterion})", names(adds)))
        if not entry.high_priority and flagged:
            found.append(miss(case, "key_hp_false_flag", f"no high-priority flag (key: {entry.type})", names(adds)))
        kinds = request_kinds(case, scoring)
        if entry.is_request and kinds != {entry.type}:
            found.append(miss(case, "key_type_wrong", entry.type, names(kinds)))
        if not entry.is_request and kinds:
            found.append(miss(case, "key_type_on_non_request", f"no type label (key: {entry.type})", names(kinds)))
        if entry.not_distributed and not _sent_away(case):
            found.append(miss(case, "key_kept_not_distributed", "not_distributed", str(case.plan.get("outcome"))))
        if entry.not_distributed is False and _sent_away(case):
            found.append(miss(case, "key_sent_away", "kept in the queue", "not_distributed"))
    return found
