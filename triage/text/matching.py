"""Matching rubric signals against a located document, and keeping the evidence.

A signal is a regular expression (or a set of them that must all match) with a weight. It scores
once per location it matches in, times that location's weight, so the same API named in the title,
in the script and in a traceback frame adds up, while repeating a word fifty times in a log does not.
Every hit is kept as `Evidence`, which is what the plan's reasons quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triage.text.document import LOCATIONS, Document

try:  # the regex parser: public as sre_parse until 3.11, private since (sre_parse still warns)
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef]


@dataclass(frozen=True)
class Signal:
    id: str
    patterns: tuple[re.Pattern[str], ...]  # one for `match`, several for `all`
    weight: float
    locations: tuple[str, ...]
    # Per pattern: case-folded strings of which at least one occurs in any text the pattern matches
    # (None: no such guarantee). Checking them with `in` first skips most regex scans: planning
    # an issue runs a hundred patterns, and most of them cannot match.
    triggers: tuple[frozenset[str] | None, ...] = ()

    def may_match(self, index: int, folded: str) -> bool:
        needed = self.triggers[index] if self.triggers else None
        return needed is None or any(t in folded for t in needed)


_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


def _required_literals(items) -> frozenset[str] | None:
    """Strings (case-folded) of which one must occur wherever the parsed pattern matches.

    Conservative: anything not understood contributes nothing, so the result is only ever a
    necessary condition. Zero-width items (anchors, lookarounds) do not break a literal run.
    """
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 2:
            candidates.append(frozenset({"".join(run).casefold()}))
        run.clear()

    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            continue
        if name in _ZERO_WIDTH:
            continue
        flush()
        if name == "SUBPATTERN":
            inner = _required_literals(arg[-1])
            if inner:
                candidates.append(inner)
        elif name == "BRANCH":
            alternatives = [_required_literals(alt) for alt in arg[1]]
            if alternatives and all(alternatives):
                candidates.append(frozenset().union(*alternatives))  # type: ignore[arg-type]
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and arg[0] >= 1:
            inner = _required_literals(arg[2])
            if inner:
                candidates.append(inner)
    flush()
    if not candidates:
        return None
    # The most selective: the one whose shortest string is longest.
    return max(candidates, key=lambda c: (min(len(t) for t in c), -len(c)))


def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    try:
        return _required_literals(_sre_parse.parse(pattern.pattern, pattern.flags))
    except Exception:  # an optimisation only: if the parser's shape ever changes, just scan
        return None


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
        triggers=tuple(required_literals(p) for p in patterns),
    )


def _first_match(signal: Signal, index: int, doc: Document) -> tuple[str, str] | None:
    pattern = signal.patterns[index]
    for location in signal.locations:
        if not signal.may_match(index, doc.folded(location)):
            continue
        found = pattern.search(doc.get(location))
        if found:
            return location, found.group(0)
    return None


def match_signal(signal: Signal, doc: Document, location_weights: dict[str, float]) -> list[Evidence]:
    """Evidence for one signal: one entry per location it scores in."""
    if len(signal.patterns) > 1:
        # An `all` signal is a conjunction (e.g. "hang" and "multi-node"): it scores once, in the
        # location of its first pattern, and only when every pattern occurs somewhere it may look.
        hits = [_first_match(signal, i, doc) for i in range(len(signal.patterns))]
        if not all(hits):
            return []
        location, text = hits[0]  # type: ignore[misc]
        text = " … ".join(h[1] for h in hits)  # type: ignore[index]
        points = signal.weight * max(location_weights[h[0]] for h in hits)  # type: ignore[index]
        return [Evidence(signal.id, location, text, points)] if points else []
    evidence = []
    for location in signal.locations:
        weight = location_weights[location]
        if not weight or not signal.may_match(0, doc.folded(location)):
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
