"""Matching rubric signals against a located document, and keeping the evidence.

A signal is a regular expression (or a set of them that must all match) with a weight. It scores
once per location it matches in, times that location's weight, so the same API named in the title,
in the script and in a traceback frame adds up, while repeating a word fifty times in a log does not.
Every hit is kept as `Evidence`, which is what the plan's reasons quote. Patterns are RE2 patterns
(`triage.text.patterns`): matching costs time linear in the issue's text, whatever the rubric says. A signal that
minds modifiers (`mind: [negation]`, `triage.text.modifiers`) scores, in each location, its first match no cue
governs, or, when every match is governed, what the best of them keeps (0: nothing). A signal with `said_by` (roles,
`triage.text.speakers`) reads only the words of those speakers: a retraction or the reporter's own word counts only
when the reporter (or a maintainer) says it.

May import: the standard library and `triage.text` (document, modifiers, patterns, speakers).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Iterator

from triage.text.document import LOCATIONS, Document
from triage.text.modifiers import MAX_CUES, Modifier, governed_factor, resolve
from triage.text.patterns import Pattern, PatternError, compile_pattern, evidence_group, evidence_text
from triage.text.speakers import ROLES

__all__ = [
    "Evidence", "Pattern", "PatternError", "Signal",
    "compile_pattern", "compile_signal", "match_signal", "score", "summarize",
]


@dataclass(frozen=True)
class Signal:
    id: str
    patterns: tuple[Pattern, ...]  # one for `match`, several for `all`
    weight: float
    locations: tuple[str, ...]
    mind: tuple[Modifier, ...] = ()  # the modifiers that void or discount its match (`triage.text.modifiers`)
    said_by: frozenset[str] | None = None  # whose words it reads (roles, `triage.text.speakers`); None: everyone's


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


def compile_signal(raw: dict, *, where: str, line: int | None = None, modifiers: dict[str, Modifier] | None = None) -> Signal:
    """A signal from its rubric entry; PatternError names the signal (and its line, when known); ValueError when it
    minds a modifier `modifiers` does not define."""
    case_sensitive = raw.get("case", "insensitive") == "sensitive"
    sources = [raw["match"]] if "match" in raw else list(raw["all"])
    patterns = []
    for source in sources:
        try:
            patterns.append(compile_pattern(source, case_sensitive=case_sensitive))
        except PatternError as exc:
            at = f" (line {line})" if line else ""
            raise PatternError(
                f"{where}: signal '{raw['id']}'{at} has a pattern RE2 cannot run: {exc} (RE2 has no lookarounds "
                "or backreferences: write a boundary as `(?:^|[^A-Za-z0-9])(WORD)`, whose first group is the evidence)"
            ) from None
    said_by = raw.get("said_by")
    if said_by is not None and not (isinstance(said_by, list) and said_by and set(said_by) <= set(ROLES)):
        raise ValueError(f"{where}: signal '{raw['id']}' has a `said_by` that is not a list of roles ({', '.join(ROLES)})")
    return Signal(
        id=raw["id"],
        patterns=tuple(patterns),
        weight=float(raw["weight"]),
        locations=tuple(raw.get("in") or LOCATIONS),
        mind=resolve(raw.get("mind"), modifiers or {}, where=where, owner=raw["id"]),
        said_by=None if said_by is None else frozenset(said_by),
    )


def _find(pattern: Pattern, doc: Document, location: str, mind: tuple[Modifier, ...] = (),
          said_by: frozenset[str] | None = None) -> tuple[str, float] | None:
    """The evidence of the pattern's match in the location and what the modifiers leave of it (1.0 without); only
    matches said by `said_by` roles (None: anyone's)."""
    if not pattern.may_match(doc.folded(location)):
        return None
    text = doc.encoded(location)
    if not mind and said_by is None:
        found = pattern.regex.search(text)
        return (evidence_text(found), 1.0) if found else None
    matches: Iterator = islice(pattern.regex.finditer(text), MAX_CUES)
    if said_by is not None:
        matches = (m for m in matches if doc.speaker_at(location, m.start(evidence_group(m))).role in said_by)
    if not mind:
        found = next(matches, None)
        return (evidence_text(found), 1.0) if found is not None else None
    found, kept = governed_factor(doc.cues, mind, location, matches)
    return (evidence_text(found), kept) if found is not None and kept > 0 else None


def _first_match(signal: Signal, index: int, doc: Document) -> tuple[str, str, float] | None:
    for location in signal.locations:
        found = _find(signal.patterns[index], doc, location, signal.mind if index == 0 else (), signal.said_by)
        if found is not None:
            return location, found[0], found[1]
    return None


def match_signal(signal: Signal, doc: Document, location_weights: dict[str, float]) -> list[Evidence]:
    """Evidence for one signal: one entry per location it scores in."""
    if len(signal.patterns) > 1:
        # An `all` signal is a conjunction (e.g. "hang" and "multi-node"): it scores once, in the
        # location of its first pattern, and only when every pattern occurs somewhere it may look.
        hits = [_first_match(signal, i, doc) for i in range(len(signal.patterns))]
        if not all(hits):
            return []
        location, _, kept = hits[0]  # type: ignore[misc]
        text = " … ".join(h[1] for h in hits)  # type: ignore[index]
        points = signal.weight * max(location_weights[h[0]] for h in hits) * kept  # type: ignore[index]
        return [Evidence(signal.id, location, text, points)] if points else []
    evidence = []
    for location in signal.locations:
        weight = location_weights[location]
        if not weight:
            continue
        found = _find(signal.patterns[0], doc, location, signal.mind, signal.said_by)
        if found is not None:
            evidence.append(Evidence(signal.id, location, found[0], signal.weight * weight * found[1]))
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
