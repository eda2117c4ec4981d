"""Modifiers: what a sentence does to a statement in it. "No crash", "if it hangs", "it was my own kernel".

A signal or a frame matches words; whether the words state what happened is another matter. "The job does not
hang", "in case the job hangs we want a dump" and "the segfault was in our own extension" all contain a hang or a
crash, and none reports one in PyTorch's distributed code. A *modifier* is a class of cue words (rubric data,
`modifiers:`) and what it does to a statement it governs: its `factor` (0 voids it, 0.5 halves it). A signal or a
frame opts in by naming the modifiers it minds (`mind: [negation, hypothetical, attribution]`).

What a cue governs (the scoping rule, code, the same for every modifier):
- a `before` cue governs the words after it: the governed match starts at most `window` bytes after the cue ends,
  in the same sentence, and no `stop` (a comma, "but", "however", ...: the modifier's own list) lies in between.
  "does not hang" and "without FSDP" are negations; "no error, but it hangs" is not one of the hang;
- an `after` cue governs the words before it, by the same rule mirrored: "a hang was never observed";
- an `anywhere` cue governs every match in the issue, wherever it is said (title, description, comments): the
  reporter who writes "it is our backend bug" in a later comment has withdrawn the crash of the first post. Only
  when the modifier's `said_by` roles say it, though (`triage.text.speakers`; the reporter and maintainers unless
  the rubric says otherwise): anyone else's cue governs only what that same person wrote, so a stranger's "my bad"
  withdraws the stranger's own words, never the reporter's. (A `before`, `after` or `within` cue governs words of
  its own sentence, which are its own author's: `said_by` changes nothing there.)
- a `within` cue governs every match inside its own words: its pattern spans a whole construction, e.g. a yes/no
  question from its auxiliary verb to its question mark ("Is the checkpoint corrupted, or do I need ...?" asks
  whether it is corrupted; it does not say so). Its reach is the pattern's own: no window, no stops.
A sentence ends at `.`/`!`/`?` followed by a space or the end, or at a line end (as for frames). Only the cue
nearest to the match on each side is read: a farther one is farther from it and has the same stops in between.

A frame's governed match is its first slot (`all[0]`): the statement's head (the hang, the crash, the wrong value),
not its context ("hangs without any NCCL error" negates the error, not the hang). A signal's is its evidence (its
first capturing group, or the whole match; for an `all` signal, its first pattern's). A match governed by several
modifiers keeps the product of their factors; of a sentence's matches, the one that keeps the most counts.

Cost: each modifier's cues are one RE2 scan of a text (linear, `triage.text.patterns`), done once per text and only
when a minding signal or frame matched there, at most `MAX_CUES` cues kept per text; each governed match is then a
binary search. No pattern's cost depends on the issue's shape.

May import: the standard library and `triage.text` (patterns, speakers).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, MutableMapping

from triage.text.patterns import Pattern, PatternError, compile_pattern, evidence_group
from triage.text.speakers import ROLES, TRUSTED, Speaker, THE_REPORTER

__all__ = ["Modifier", "CueIndex", "compile_modifiers", "SENTENCE_END", "resolve", "governed_factor", "MAX_CUES",
           "sentence_ends"]

MAX_CUES = 2000  # cue matches kept per modifier and text: real issues have a handful; hostile text, thousands
SENTENCE_END = compile_pattern(r"[.!?]+(?:\s|$)|\n")
ANYWHERE_IN = ("title", "prose", "comment")  # where an `anywhere` cue is read: what people wrote, not logs


@dataclass(frozen=True, eq=False)  # hashed by identity: frames holding it are cache keys (`frames.reads`)
class Modifier:
    name: str
    factor: float  # what is left of a governed statement: 0 voids it
    window: int = 0  # bytes between a cue and the match it governs, at most
    before: Pattern | None = None
    after: Pattern | None = None
    stop: Pattern | None = None
    anywhere: Pattern | None = None
    within: Pattern | None = None
    # Whose `anywhere` cues govern the whole issue (roles, `triage.text.speakers`); anyone else's govern only what
    # they themselves wrote.
    said_by: frozenset[str] = TRUSTED


def compile_modifiers(raw: Mapping[str, Any] | None, *, where: str) -> dict[str, Modifier]:
    """Modifier name -> Modifier; PatternError (one line) naming the modifier and key when a cue cannot compile."""
    out = {}
    for name, spec in (raw or {}).items():
        patterns = {}
        for key in ("before", "after", "stop", "anywhere", "within"):
            if spec.get(key):
                try:
                    patterns[key] = compile_pattern(spec[key], case_sensitive=False)
                except PatternError as exc:
                    raise PatternError(f"{where}: modifier '{name}' has a `{key}` pattern RE2 cannot run: {exc}") from None
        said_by = spec.get("said_by")
        if said_by is not None and not (isinstance(said_by, list) and set(said_by) <= set(ROLES)):
            raise ValueError(f"{where}: modifier '{name}' has a `said_by` that is not a list of roles ({', '.join(ROLES)})")
        out[name] = Modifier(name, float(spec["factor"]), int(spec.get("window", 0)), **patterns,
                             said_by=TRUSTED if said_by is None else frozenset(said_by))
    return out


def resolve(names, modifiers: Mapping[str, Modifier], *, where: str, owner: str) -> tuple[Modifier, ...]:
    """The modifiers an entry minds, by name; ValueError (one line) naming the entry and the unknown name."""
    out = []
    for name in names or ():
        if name not in modifiers:
            raise ValueError(f"{where}: '{owner}' minds modifier '{name}', which `modifiers:` does not define")
        out.append(modifiers[name])
    return tuple(out)


class _Cues:
    """One modifier's cues in one text: where `before` cues end, where `after` cues start, where reach stops, and
    the spans of `within` cues (in order, not overlapping: RE2 finds them left to right)."""

    def __init__(self, modifier: Modifier, text: bytes):
        self.before_ends = _positions(modifier.before, text, end=True)
        self.after_starts = _positions(modifier.after, text, end=False)
        self.stops = sorted(_positions(modifier.stop, text, end=False) + [end - 1 for end in sentence_ends(text)]) \
            if self.before_ends or self.after_starts else []
        spans = _spans(modifier.within, text)
        self.within_starts, self.within_ends = [s for s, _ in spans], [e for _, e in spans]

    def governs(self, start: int, end: int, window: int) -> bool:
        found = bisect_right(self.within_starts, start) - 1
        if found >= 0 and self.within_ends[found] >= end:
            return True
        found = bisect_right(self.before_ends, start) - 1
        if found >= 0 and start - self.before_ends[found] <= window \
                and not self._stopped(self.before_ends[found], start):
            return True
        found = bisect_left(self.after_starts, end)
        return found < len(self.after_starts) and self.after_starts[found] - end <= window \
            and not self._stopped(end, self.after_starts[found])

    def _stopped(self, low: int, high: int) -> bool:
        """Is there a stop in [low, high)?"""
        index = bisect_left(self.stops, low)
        return index < len(self.stops) and self.stops[index] < high


@lru_cache(maxsize=8)  # the texts of the issue being planned (its locations and the lead)
def sentence_ends(text: bytes) -> tuple[int, ...]:
    """Where each sentence boundary ends (the next sentence starts there): one scan of a text, shared by the frames'
    sentence numbers and every modifier's reach. (A text of 64 KB of newlines has 65,536 of them.)"""
    return tuple(found.end() for found in SENTENCE_END.regex.finditer(text))


def _spans(pattern: Pattern | None, text: bytes) -> list[tuple[int, int]]:
    if pattern is None:
        return []
    out = []
    for count, found in enumerate(pattern.regex.finditer(text)):
        if count >= MAX_CUES:
            break
        group = evidence_group(found)
        out.append((found.start(group), found.end(group)))
    return out


def _positions(pattern: Pattern | None, text: bytes, *, end: bool) -> list[int]:
    return [stop if end else start for start, stop in _spans(pattern, text)]


class CueIndex:
    """The cues of one issue, read lazily: per (modifier, text key), the cue positions; per modifier, whether an
    `anywhere` cue occurs in the issue. `texts` gives a location's UTF-8 text by key (the document's locations,
    and the frames' lead). One per document (`Document.cues`), so signals and frames share the scans."""

    def __init__(self, texts, speaker=None):
        self._texts = texts
        self._speaker = speaker or (lambda key, offset: THE_REPORTER)  # who said the byte at `offset` of `key`
        self._cues: MutableMapping[tuple[str, str], _Cues] = {}
        # modifier name -> (a cue said by one of its `said_by`, the speakers of its other cues)
        self._anywhere: MutableMapping[str, tuple[bool, frozenset[Speaker]]] = {}

    def factor(self, modifiers: tuple[Modifier, ...], key: str, start: int, end: int, text: bytes | None = None) -> float:
        """What the modifiers leave of a match at [start, end) of the text at `key` (1: ungoverned)."""
        kept = 1.0
        for modifier in modifiers:
            if self._governs(modifier, key, start, end, text):
                kept *= modifier.factor
        return kept

    def _governs(self, modifier: Modifier, key: str, start: int, end: int, text: bytes | None) -> bool:
        if modifier.anywhere is not None and self._said_anywhere(modifier, key, start):
            return True
        if modifier.before is None and modifier.after is None and modifier.within is None:
            return False
        cues = self._cues.get((modifier.name, key))
        if cues is None:
            cues = self._cues[(modifier.name, key)] = _Cues(modifier, text if text is not None else self._texts(key))
        return cues.governs(start, end, modifier.window)

    def _said_anywhere(self, modifier: Modifier, key: str, start: int) -> bool:
        """Does an `anywhere` cue reach the match at `start` of `key`: one said by a `said_by` role anywhere, or
        one said by the match's own speaker."""
        found = self._anywhere.get(modifier.name)
        if found is None:
            found = self._anywhere[modifier.name] = self._read_anywhere(modifier)
        trusted, others = found
        return trusted or (bool(others) and self._speaker(key, start) in others)

    def _read_anywhere(self, modifier: Modifier) -> tuple[bool, frozenset[Speaker]]:
        others: set[Speaker] = set()
        for loc in ANYWHERE_IN:
            text = self._texts(loc)
            if not text:
                continue
            for count, found in enumerate(modifier.anywhere.regex.finditer(text)):  # type: ignore[union-attr]
                if count >= MAX_CUES:
                    break
                speaker = self._speaker(loc, found.start(evidence_group(found)))
                if speaker.role in modifier.said_by:
                    return True, frozenset()
                others.add(speaker)
        return False, frozenset(others)


def governed_factor(cues: CueIndex, modifiers: tuple[Modifier, ...], key: str, matches, text: bytes | None = None):
    """(the match that keeps most of its statement, what it keeps) among `matches` of one unit; (None, 0.0) when
    there are none. The first fully ungoverned match ends the search."""
    best, kept = None, 0.0
    for found in matches:
        group = evidence_group(found)
        value = cues.factor(modifiers, key, found.start(group), found.end(group), text)
        if value > kept or best is None:
            best, kept = found, value
        if kept >= 1.0:
            break
    return best, kept
