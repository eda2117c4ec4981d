"""The whole measurement of a set of planned cases, as `ptd-triage eval` and `ptd-triage replay` report it: the
figures against the labels people gave, on the whole set and on each fixed half, and, given a procedure answer
key, the figures against it (whole and halves) with the high-priority operating point swept over thresholds.

Pure: the document is JSON-able; `triage.evaluation.render` writes it as text.

May import: the standard library, `triage.evaluation.*`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from triage.evaluation.answer_key import KeyEntry, join_key
from triage.evaluation.cases import Case
from triage.evaluation.figures import HALVES, Miss, evaluate, half_of, misses, split_halves
from triage.evaluation.key_figures import evaluate_key, key_misses, threshold_sweep
from triage.evaluation.scoring import scoring_from_bundle

DEFAULT_THRESHOLDS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0)


@dataclass(frozen=True)
class Measurement:
    figures: dict[str, Any]
    misses: list[Miss]  # empty unless asked for


def measure(cases: Sequence[Case], bundle, *, key: Mapping[str, KeyEntry] | None = None, key_source: str | None = None,
            thresholds: Iterable[float] | None = None, with_misses: bool = False) -> Measurement:
    scoring = scoring_from_bundle(bundle)
    figures = evaluate(cases, scoring)
    halves = split_halves(cases)
    figures["halves"] = {half: evaluate(halves[half], scoring) for half in HALVES}
    found = misses(cases, scoring) if with_misses else []
    if key is not None:
        pairs = join_key(cases, key)
        threshold = float(bundle.rubric.high_priority.threshold)  # the operating point the rubric sets for step 5
        swept = sorted(set(thresholds or DEFAULT_THRESHOLDS) | {threshold})
        by_half = {half: [p for p in pairs if half_of(p[0].id) == half] for half in HALVES}
        figures["key"] = {
            "source": key_source,
            "all": evaluate_key(pairs, scoring),
            **{half: evaluate_key(by_half[half], scoring) for half in HALVES},
            "threshold": threshold,
            "sweep": [
                {**row, "halves": {half: _sweep_cell(by_half[half], row["threshold"]) for half in HALVES}}
                for row in threshold_sweep(pairs, swept)
            ],
        }
        if with_misses:
            found += key_misses(pairs, scoring)
    return Measurement(figures, found)


def _sweep_cell(pairs, threshold: float) -> dict[str, Any]:
    row = threshold_sweep(pairs, [threshold])[0]
    return {k: row[k] for k in ("flagged", "recall", "false_flags", "false_flag_rate")}
