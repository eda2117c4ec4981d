"""Step 4's learned reading: is the issue a request, and if so a feature or an enhancement?

Two logistic models over the features of `triage.reading.features`, shipped as data (a JSON file in this package,
named by a rubric's `types.scorer`) and scored here in plain Python: the probability that the issue is a request
(the seed's first question: does it ask for something, or report what went wrong?), and, of a request, that what it
asks for is wholly new (a feature) rather than an improvement of something that works (an enhancement). Each
decision says its strongest contributions (`TypeReading.for_request`, `.for_kind`): the words and rubric scores
that pushed it most, which the step's reason quotes.

How a model file was made (its data, its figures) is in the file itself (`trained`) and in
`scripts/train_type_scorer.py`, which wrote it; bench/leave_one_writer_out.py measures what it does for a writer
it was not trained on.

May import: the standard library, `triage.reading`, `triage.text`.
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from triage.reading.features import REQUEST_SCORES, hashed, with_scores, words
from triage.text.document import Document

FORMAT = "ptd-triage linear type scorer"
SHOWN = 3  # contributions quoted in a reason


class ScorerError(ValueError):
    """A model file that cannot be used; one line."""


@dataclass(frozen=True)
class Linear:
    """One logistic model: P = sigmoid(bias + sum of weight x value over the issue's buckets)."""

    bias: float
    weights: Mapping[int, float]
    threshold: float = 0.5

    def contributions(self, values: Mapping[int, float]) -> dict[int, float]:
        return {b: self.weights[b] * v for b, v in values.items() if b in self.weights}

    def probability(self, contributions: Mapping[int, float]) -> float:
        z = self.bias + sum(contributions.values())
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


@dataclass(frozen=True)
class TypeReading:
    request: float  # P(a request)
    feature: float  # P(wholly new | a request)
    is_request: bool
    is_feature: bool
    for_request: tuple[str, ...] = ()  # the strongest contributions toward the request decision taken
    for_kind: tuple[str, ...] = ()  # ... and toward feature or enhancement


@dataclass(frozen=True)
class TypeScorer:
    name: str
    bits: int
    request: Linear
    feature: Linear
    trained: dict = field(default_factory=dict, compare=False)

    def read(self, doc: Document, rubric_scores: Mapping[str, float],
             more_scores: Callable[[], Mapping[str, float]] | None = None) -> TypeReading:
        """The request model over the words and the request check's scores; for a request, the feature model over
        the words and every check's score (`more_scores` weighs the checks not weighed yet, only then)."""
        known = (self.request.weights, self.feature.weights)
        found = words(doc)
        values, names = hashed(with_scores(found, rubric_scores, REQUEST_SCORES), self.bits, known)
        towards_request = self.request.contributions(values)
        p_request = self.request.probability(towards_request)
        is_request = p_request >= self.request.threshold
        for_request = _strongest(towards_request, names, 1 if is_request else -1)
        if not is_request:
            return TypeReading(p_request, 0.0, False, False, for_request)
        scores = {**rubric_scores, **(more_scores() if more_scores else {})}
        values, names = hashed(with_scores(found, scores), self.bits, known)
        towards_feature = self.feature.contributions(values)
        p_feature = self.feature.probability(towards_feature)
        is_feature = p_feature >= self.feature.threshold
        return TypeReading(p_request, p_feature, True, is_feature, for_request,
                           _strongest(towards_feature, names, 1 if is_feature else -1))


def _strongest(contributions: Mapping[int, float], names: Mapping[int, list[str]], sign: int) -> tuple[str, ...]:
    ranked = sorted((c * sign, b) for b, c in contributions.items() if c * sign > 0)
    return tuple(f"{describe(names[b])} ({c * sign:+.2f})" for c, b in reversed(ranked[-SHOWN:]))


_PLACES = {"t:": "title", "p:": "prose", "c:": "comment"}


def describe(names: list[str]) -> str:
    """A feature as a reason says it: `'would be nice' in prose`, `the rubric's request evidence against`."""
    name = names[0]
    if name.startswith("rubric:"):
        part = name[len("rubric:"):]
        return {"request_for": "the rubric's request evidence", "request_against": "the rubric's evidence against a "
                "request"}.get(part, f"the rubric's {part} score")
    if name[:2] in _PLACES:
        return f"'{name[2:]}' in {_PLACES[name[:2]]}"
    return {"prose_words": "the prose's length", "title_question": "a title that asks"}.get(
        name, name.replace("has:", "has a "))


def pack(weights: Mapping[int, float]) -> dict[str, str]:
    """Buckets and weights as the file keeps them: little-endian uint32 and float32 arrays, in hex (a JSON object of
    30,000 numbers took a quarter of a second to read on a busy machine; these take a millisecond)."""
    buckets, values = array("I", sorted(weights)), array("f", [weights[b] for b in sorted(weights)])
    if sys.byteorder == "big":  # pragma: no cover
        buckets.byteswap()
        values.byteswap()
    return {"buckets": buckets.tobytes().hex(), "weights": values.tobytes().hex()}


def _unpack(raw: dict) -> dict[int, float]:
    buckets, values = array("I"), array("f")
    buckets.frombytes(bytes.fromhex(raw["buckets"]))
    values.frombytes(bytes.fromhex(raw["weights"]))
    if sys.byteorder == "big":  # pragma: no cover
        buckets.byteswap()
        values.byteswap()
    if len(buckets) != len(values):
        raise ValueError("'buckets' and 'weights' differ in length")
    return dict(zip(buckets, values))


def _linear(raw: object, where: str) -> Linear:
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("buckets", "weights")):
        raise ScorerError(f"{where}: expected an object with 'bias', 'threshold', 'buckets' and 'weights'")
    try:
        return Linear(float(raw["bias"]), _unpack(raw), float(raw.get("threshold", 0.5)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ScorerError(f"{where}: {exc}") from None


def parse_scorer(data: object, name: str) -> TypeScorer:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ScorerError(f"type scorer '{name}': not a '{FORMAT}' file")
    bits = data.get("bits")
    if not isinstance(bits, int) or not 8 <= bits <= 24:
        raise ScorerError(f"type scorer '{name}': 'bits' must be an integer from 8 to 24")
    return TypeScorer(name, bits, _linear(data.get("request"), f"type scorer '{name}': request"),
                      _linear(data.get("feature"), f"type scorer '{name}': feature"), dict(data.get("trained") or {}))


def available() -> list[str]:
    """The scorers this package ships (a rubric's `types.scorer` names one)."""
    return sorted(p.name[: -len(".json")] for p in resources.files(__package__).iterdir()
                  if p.name.endswith(".json"))


def load_scorer(name: str, *, where: str = "types.scorer") -> TypeScorer:
    """The shipped scorer `name` (`types-v1` is `triage/reading/types-v1.json`); ScorerError (one line, starting
    with `where`) when there is none or it cannot be used."""
    try:
        return _load(name)
    except ScorerError as exc:
        raise ScorerError(f"{where}: {exc}") from None


@lru_cache(maxsize=8)
def _load(name: str) -> TypeScorer:
    if name not in available():
        raise ScorerError(f"no type scorer '{name}' in the package (it has: {', '.join(available()) or 'none'})")
    text = resources.files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    try:
        return parse_scorer(json.loads(text), name)
    except json.JSONDecodeError as exc:
        raise ScorerError(f"type scorer '{name}': not JSON ({exc})") from None
