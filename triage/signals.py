"""Matching rubric signals against a located document, and keeping the evidence.

A signal is a regular expression (or a set of them that must all match) with a weight. It scores
once per location it matches in, times that location's weight, so the same API named in the title,
in the script and in a traceback frame adds up, while repeating a word fifty times in a log does not.
Every hit is kept as `Evidence`, which is what the plan's reasons quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.text import LOCATIONS, Document


@dataclass(frozen=True)
class Signal:
    id: str
    patterns: tuple[re.Pattern[str], ...]  # one for `match`, several for `all`
    weight: float
    locations: tuple[str, ...]


@dataclass(frozen=True)
class Evidence:
    signal: str
    location: str
    text: str
    points: float

    def describe(self) -> str:
        sign = "+" if self.points >= 0 else ""
        return f"{self.signal} in {self.location} {_quote(self.text)} ({sign}{self.points:g})"


def _quote(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "'" + text.replace("'", "’") + "'"


def compile_signal(raw: dict, *, where: str) -> Signal:
    flags = 0 if raw.get("case", "insensitive") == "sensitive" else re.IGNORECASE
    sources = [raw["match"]] if "match" in raw else list(raw["all"])
    patterns = []
    for source in sources:
        try:
            patterns.append(re.compile(source, flags | re.MULTILINE))
        except re.error as exc:
            raise ValueError(f"{where}: signal '{raw['id']}' has an invalid regular expression ({exc})") from None
    return Signal(
        id=raw["id"],
        patterns=tuple(patterns),
        weight=float(raw["weight"]),
        locations=tuple(raw.get("in") or LOCATIONS),
    )


def _first_match(pattern: re.Pattern[str], doc: Document, locations: tuple[str, ...]) -> tuple[str, str] | None:
    for location in locations:
        found = pattern.search(doc.get(location))
        if found:
            return location, found.group(0)
    return None


def match_signal(signal: Signal, doc: Document, location_weights: dict[str, float]) -> list[Evidence]:
    """Evidence for one signal: one entry per location it scores in."""
    if len(signal.patterns) > 1:
        # An `all` signal is a conjunction (e.g. "hang" and "multi-node"): it scores once, in the
        # location of its first pattern, and only when every pattern occurs somewhere it may look.
        hits = [_first_match(p, doc, signal.locations) for p in signal.patterns]
        if not all(hits):
            return []
        location, text = hits[0]  # type: ignore[misc]
        text = " … ".join(h[1] for h in hits)  # type: ignore[index]
        points = signal.weight * max(location_weights[h[0]] for h in hits)  # type: ignore[index]
        return [Evidence(signal.id, location, text, points)] if points else []
    evidence = []
    for location in signal.locations:
        weight = location_weights[location]
        if not weight:
            continue
        found = signal.patterns[0].search(doc.get(location))
        if found:
            evidence.append(Evidence(signal.id, location, found.group(0), signal.weight * weight))
    return evidence


def score(signals: tuple[Signal, ...], doc: Document, location_weights: dict[str, float]) -> tuple[float, list[Evidence]]:
    evidence: list[Evidence] = []
    for signal in signals:
        evidence.extend(match_signal(signal, doc, location_weights))
    return sum(e.points for e in evidence), evidence


def summarize(evidence: list[Evidence], limit: int = 4) -> str:
    """The strongest few pieces of evidence, for a one-line reason."""
    strongest = sorted(evidence, key=lambda e: -abs(e.points))[:limit]
    return "; ".join(e.describe() for e in strongest) if strongest else "no evidence"
