"""Evidence frames: a criterion recognised by slot classes that co-occur within one sentence.

A phrase list recognises the words of the issues it was written from; a frame recognises the shape of a
statement however it is worded. "Worked in ≤ 2.5", "happens on 1.12.1 but does not occur on 1.9.0" and "after
upgrading, training fails" are one frame: a *prior version or upgrade* slot and a *worked / since / after* slot
in the same sentence. Each slot is a class of words (a vocabulary: rubric data, readable by a maintainer); a
frame names the slots that must all occur in one sentence (`all`), and optionally slots that must not occur in
that sentence (`none`, e.g. an exception for "silently wrong"), or anywhere in the issue (`none_in_issue`: "the
job crashes" said of a traceback that ends in a ValueError is a loud failure, not a crash), and slots that must
occur somewhere in the issue besides (`also_in_issue`: a hang is a multi-node hang only where several nodes or
processes are named); a slot there counts where it is said, not where it is denied or supposed (the frame's
modifiers: "not multi node or anything fancy" names no nodes). A frame that minds modifiers (`mind: [negation,
hypothetical, attribution]`, `triage.text.modifiers`) reads its first slot as the statement's head: in each
sentence, the head's match that the modifiers' cues govern least counts, and the frame keeps that share of its
weight ("does not hang" voids a hang). A slot with `said_by` (roles, `triage.text.speakers`) is read only in the
words of those speakers, wherever a frame names it: "on my laptop", "RuntimeError: ..." or "nothing is corrupted"
said by a stranger is not the reporter's setup, failure or finding.

Units: every sentence of every location (a sentence ends at `.`/`!`/`?` followed by a space or the end, or at a
line end), plus the *lead*: the title and the first sentence of the description read as one sentence, because
reporters split one statement across the two ("FSDP hangs" + "on two nodes, in the first all_gather"). A frame
scores its weight times its location's weight capped at 1 (the lead weighs as prose), once, where it weighs most.

Cost: each slot is one RE2 scan of each location (linear whatever the pattern, `triage.text.patterns`), skipped
when its literals do not occur; at most `MAX_HITS` matches of one slot are kept per location, so hostile text
repeating a word costs a bounded loop. Co-occurrence is a set intersection of sentence numbers per frame.

May import: the standard library, `re2` (google-re2) and `triage.text` (document, matching, modifiers, patterns).
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from dataclasses import dataclass
from typing import Any

import re2

from triage.text.document import LOCATIONS, Document
from triage.text.matching import Evidence
from triage.text.modifiers import SENTENCE_END, Modifier, governed_factor, resolve, sentence_ends
from triage.text.patterns import Pattern, PatternError, compile_pattern, evidence_group, evidence_text

__all__ = ["Frame", "SlotHits", "compile_frame", "compile_slots", "match_frame", "read_slots", "reads", "score_frames",
           "stronger_reading", "sum_frames", "LEAD"]

LEAD = "lead"  # the title + the description's first sentence, one unit; weighs as prose
MAX_HITS = 2000  # matches of one slot kept per location: real issues have a handful; hostile text, thousands
# bytes: the RE2 set pass that screens slots pays off only on long text (a pasted log, hostile input). Its DFA is
# built lazily over the union of every slot, so on an ordinary issue the first pass cost more than it saved: with
# 256, dev's first-pass planning was 5.4 ms per issue, with 16 KB 3.1 ms; 64 KB bodies are as fast (bench/redos.py).
SCREEN_FROM = 16384


@dataclass(frozen=True)
class Frame:
    id: str
    needs: tuple[str, ...]  # slots that must all occur in one sentence
    unless: tuple[str, ...]  # slots that must not occur in that sentence
    weight: float
    locations: tuple[str, ...]
    unless_anywhere: tuple[str, ...] = ()  # slots that must not occur anywhere in the issue
    mind: tuple[Modifier, ...] = ()  # modifiers that void or discount its head (`all[0]`)
    also_anywhere: tuple[str, ...] = ()  # slots that must occur somewhere in the issue besides


def compile_slots(raw: dict[str, str], *, where: str) -> dict[str, Pattern]:
    """Slot name -> RE2 pattern (case-insensitive: a slot is a vocabulary of words)."""
    out = {}
    for name, source in raw.items():
        try:
            out[name] = compile_pattern(source, case_sensitive=False)
        except PatternError as exc:
            raise PatternError(f"{where}: slot '{name}' has a pattern RE2 cannot run: {exc}") from None
    return out


def compile_frame(raw: dict, slots: dict[str, Pattern], *, where: str,
                  modifiers: dict[str, Modifier] | None = None, vocabulary: str = "high_priority.slots") -> Frame:
    """A frame from its rubric entry; ValueError (one line) when it names a slot (of `vocabulary`, the rubric
    section that holds the slots) or a modifier that is not defined."""
    needs, unless, nowhere = tuple(raw["all"]), tuple(raw.get("none", ())), tuple(raw.get("none_in_issue", ()))
    besides = tuple(raw.get("also_in_issue", ()))
    for name in needs + unless + nowhere + besides:
        if name not in slots:
            raise ValueError(f"{where}: frame '{raw['id']}' names slot '{name}', which {vocabulary} does not define")
    mind = resolve(raw.get("mind"), modifiers or {}, where=where, owner=raw["id"])
    return Frame(raw["id"], needs, unless, float(raw["weight"]), tuple(raw.get("in") or LOCATIONS), nowhere,
                 mind, besides)


@dataclass
class SlotHits:
    """Per unit location (the document's locations and the lead): slot -> {sentence number: its first match};
    `more` keeps a sentence's later matches of a slot (a frame minding modifiers reads them all), `doc` and `lead`
    the texts the matches are in."""

    hits: dict[str, dict[str, dict[int, Any]]]
    more: dict[str, dict[str, dict[int, list]]] | None = None
    doc: Document | None = None
    lead: bytes = b""

    def all_in(self, location: str, slot: str, sentence: int) -> list:
        """Every kept match of the slot in one sentence, in order."""
        first = self.sentences(location, slot).get(sentence)
        later = ((self.more or {}).get(location, {}).get(slot, {})).get(sentence, [])
        return ([first] if first is not None else []) + later

    def sentences(self, location: str, slot: str) -> dict[int, Any]:
        return self.hits.get(location, {}).get(slot, {})

    def first(self, location: str, slot: str) -> str | None:
        """The text of the slot's first match in the location, or None."""
        found = self.sentences(location, slot)
        return evidence_text(found[min(found)]) if found else None

    def anywhere(self, slot: str) -> bool:
        return any(slot in found for found in self.hits.values())

    def said(self, slot: str, mind: tuple[Modifier, ...]) -> bool:
        """Does the issue say the slot's words, other than denied or supposed ("not multi node or anything fancy"
        names no nodes)? A match the modifiers void does not count; without modifiers, any match does."""
        if not mind or self.doc is None:
            return self.anywhere(slot)
        for location, found in self.hits.items():
            if location == LEAD or slot not in found:  # the lead repeats the title and the prose
                continue
            for sentence in found[slot]:
                if governed_factor(self.doc.cues, mind, location, self.all_in(location, slot, sentence))[1] > 0:
                    return True
        return False


def _starts(encoded: bytes) -> list[int]:
    """Byte offsets where each sentence starts (sentence 0 starts at 0); the scan is shared (`sentence_ends`)."""
    return [0, *sentence_ends(encoded)]


def _slot_sentences(pattern: Pattern, encoded: bytes, starts,
                    more: dict[int, list] | None = None, keep=None) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for count, found in enumerate(pattern.regex.finditer(encoded)):
        if count >= MAX_HITS:
            break
        at = found.start(evidence_group(found))
        if keep is not None and not keep(at):
            continue
        # The sentence of the slot's own words: a boundary character the pattern consumes before them (the space
        # after "model." in "model. torch 2.7.1") belongs to the sentence before.
        sentence = bisect_right(starts, at) - 1
        if sentence not in out:
            out[sentence] = found  # decoded only if quoted as evidence
        elif more is not None:
            more.setdefault(sentence, []).append(found)
    return out


def _lead(doc: Document) -> bytes:
    prose = doc.encoded("prose")
    first = SENTENCE_END.regex.search(prose)
    # The sentence with its own end mark: a question keeps its "?" (a yes/no question's cue spans up to it).
    head = prose[: first.end()].rstrip() if first else prose
    return doc.encoded("title").replace(b"\n", b" ") + b" \xe2\x80\x94 " + head


ISSUE_WIDE = tuple(loc for loc in LOCATIONS if loc != "environment")  # "anywhere in the issue" (`none_in_issue`)


@lru_cache(maxsize=64)
def reads(frames: tuple[Frame, ...]) -> dict[str, frozenset[str]]:
    """Which slot each frame set needs read, and where: slot -> the locations some frame looks for it in. A slot
    no frame names is not read at all (each read is a scan of the text)."""
    where: dict[str, set[str]] = {}
    for f in frames:
        for name in (*f.needs, *f.unless):
            where.setdefault(name, set()).update(f.locations)
        for name in (*f.unless_anywhere, *f.also_anywhere):
            where.setdefault(name, set()).update(ISSUE_WIDE)
    return {name: frozenset(locations) for name, locations in where.items()}


def read_slots(slots: dict[str, Pattern], doc: Document, locations=LOCATIONS,
               plan: dict[str, frozenset[str]] | None = None,
               said_by: dict[str, frozenset[str]] | None = None) -> SlotHits:
    """Where each slot occurs, by sentence (read once per issue, shared by all criteria): every slot in
    `locations`, or, with a `plan` from `reads`, each named slot where the frames look for it (the lead is read
    for a slot read in the title or prose). A slot named in `said_by` is read only in its roles' words."""
    if plan is not None:
        slots = {name: pattern for name, pattern in slots.items() if name in plan}
        locations = tuple(loc for loc in LOCATIONS if any(loc in where for where in plan.values()))
    hits: dict[str, dict[str, dict[int, Any]]] = {}
    more: dict[str, dict[str, dict[int, list]]] = {}
    units = [(loc, doc.encoded(loc), doc.folded(loc)) for loc in locations if doc.encoded(loc)]
    lead = b""
    if doc.encoded("title") and doc.encoded("prose"):
        lead = _lead(doc)
        units.append((LEAD, lead, lead.decode("utf-8", "replace").casefold()))
    screen = _screen(tuple((name, p.source, p.case_sensitive) for name, p in slots.items()))
    for location, encoded, folded in units:
        starts = [0] if location == LEAD else _starts(encoded)
        found = {}
        present = screen(encoded) if len(encoded) > SCREEN_FROM else None  # a short text: the literals decide
        for name, pattern in slots.items():
            if plan is not None and not _wanted(plan[name], location):
                continue
            if (present is None or name in present) and pattern.may_match(folded):
                roles = (said_by or {}).get(name)
                keep = None if roles is None else (
                    lambda at, loc=location, roles=roles: doc.speaker_at(loc, at).role in roles)
                sentences = _slot_sentences(pattern, encoded, starts, more.setdefault(location, {}).setdefault(name, {}),
                                            keep)
                if sentences:
                    found[name] = sentences
        hits[location] = found
    return SlotHits(hits, more, doc, lead)


@lru_cache(maxsize=8)
def _screen(items: tuple[tuple[str, str, bool], ...]):
    """One RE2 pass that says which slots occur in a text at all (an RE2 set), so that only those are scanned for
    their positions. Returns a function text -> set of slot names, or None when the set cannot answer (it could
    not be built, or RE2 gave up on the text: then every slot is scanned, as without it)."""
    try:
        options = re2.Options()
        options.case_sensitive = False
        options.log_errors = False
        screen = re2.Set.SearchSet(options)
        names = []
        for name, source, case_sensitive in items:
            screen.Add(("(?m)" if case_sensitive else "(?mi)") + source)
            names.append(name)
        screen.Compile()
    except Exception:  # an optimisation only
        return lambda text: None

    def present(text: bytes) -> set[str] | None:
        found = screen.Match(text)
        return {names[i] for i in found} if found else None  # nothing found: cannot tell "none" from "gave up"

    return present


def _wanted(where: frozenset[str], location: str) -> bool:
    return location in where or (location == LEAD and ("title" in where or "prose" in where))


def _fires(frame: Frame, hits: SlotHits, location: str) -> tuple[str, float] | None:
    """The evidence ("slot text … slot text") of the first sentence where the frame holds and what its modifiers
    leave of it (the first sentence that keeps the most), else None."""
    per_slot = [hits.sentences(location, name) for name in frame.needs]
    if not all(per_slot):
        return None
    common = set(min(per_slot, key=len))
    for sentences in per_slot:
        common &= sentences.keys()
    for name in frame.unless:
        common -= hits.sentences(location, name).keys()
    if not common:
        return None
    chosen, head, kept = min(common), None, 1.0
    if frame.mind and hits.doc is not None:
        chosen, head, kept = _least_governed(frame, hits, location, sorted(common))
        if kept <= 0:
            return None
    texts = [evidence_text(sentences[chosen]) for sentences in per_slot]
    if head is not None:
        texts[0] = evidence_text(head)
    return " … ".join(texts), kept


def _least_governed(frame: Frame, hits: SlotHits, location: str, sentences: list[int]) -> tuple[int, Any, float]:
    """Of the sentences where the frame holds, the first whose head match keeps the most (sentence, match, share)."""
    best: tuple[int, Any, float] = (sentences[0], None, 0.0)
    text = hits.lead if location == LEAD else None
    for sentence in sentences:
        head, kept = governed_factor(hits.doc.cues, frame.mind, location,  # type: ignore[union-attr]
                                     hits.all_in(location, frame.needs[0], sentence), text)
        if kept > best[2]:
            best = (sentence, head, kept)
        if kept >= 1.0:
            break
    return best


def match_frame(frame: Frame, hits: SlotHits, location_weights: dict[str, float]) -> Evidence | None:
    """One piece of evidence for a frame: in the location where it weighs most (a frame counts once)."""
    best: Evidence | None = None
    if any(hits.said(name, frame.mind) for name in frame.unless_anywhere):
        return None
    if not all(hits.said(name, frame.mind) for name in frame.also_anywhere):
        return None
    places = list(frame.locations)
    if "title" in places or "prose" in places:
        places.append(LEAD)
    for location in places:
        # A frame is a statement: said in the title it is as good as said in prose, not three times better
        # (so the title's counter-evidence, a question or a test report, still outweighs it); a later comment
        # weighs less, as everywhere.
        weight = min(location_weights.get("prose" if location == LEAD else location, 0.0), 1.0)
        if not weight or (best is not None and frame.weight * weight <= best.points):
            continue
        found = _fires(frame, hits, location)
        if found is not None and (best is None or frame.weight * weight * found[1] > best.points):
            best = Evidence(frame.id, "title+prose" if location == LEAD else location, found[0],
                            frame.weight * weight * found[1])
    return best


def score_frames(frames: tuple[Frame, ...], hits: SlotHits,
                 location_weights: dict[str, float]) -> tuple[float, list[Evidence]]:
    """The strongest frame's points (frames of one criterion re-read one statement: they do not add up) and the
    evidence of every frame that holds. Negative frames (counter-evidence) do add up, like negative signals."""
    evidence = [e for e in (match_frame(f, hits, location_weights) for f in frames) if e is not None]
    positive = [e.points for e in evidence if e.points > 0]
    return max(positive, default=0.0) + sum(e.points for e in evidence if e.points < 0), evidence


def sum_frames(frames: tuple[Frame, ...], hits: SlotHits,
               location_weights: dict[str, float]) -> tuple[float, list[Evidence]]:
    """Every frame that holds adds its points (each once, where it weighs most): step 4's frames are different
    statements ("what we want is ...", "today we do it by hand", "nothing like this exists"), not re-readings of
    one, so each is evidence of its own, as signals are."""
    evidence = [e for e in (match_frame(f, hits, location_weights) for f in frames) if e is not None]
    return sum(e.points for e in evidence), evidence


def stronger_reading(signal_ev: list[Evidence], frame_ev: list[Evidence]) -> float:
    """One criterion's score from its signals' and its frames' evidence: they read the same statement two ways, so
    the stronger positive reading counts, once; counter-evidence of either kind ("nothing is corrupted") always
    counts against it."""
    signals = sum(e.points for e in signal_ev if e.points > 0)
    frames = max((e.points for e in frame_ev if e.points > 0), default=0.0)
    return max(signals, frames) + sum(e.points for e in signal_ev + frame_ev if e.points < 0)
