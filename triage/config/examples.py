"""Running a rubric's examples: each signal, slot and frame may say what it must match and what it must not.

    - id: ddp-name
      match: '{word_start}(DDP){word_end}|DistributedDataParallel'
      weight: 3
      examples:
        match: ["wrapping the model in DDP hangs"]
        not: ["the addpath helper"]          # a near miss: the letters inside a longer word

An example is run against what the entry really matches, with the engine that plans (`triage.text`):
- a signal: its pattern on the example text (an `all` signal: every one of its patterns somewhere in the text);
  its `in:` locations are not asked, the text stands for one of them, said by someone it reads (`said_by`);
- a slot: its pattern on the text;
- a frame: the text is read as the issue's prose, split into sentences as planning splits it; the frame holds
  when its `all` slots occur in one sentence that has none of its `none` slots, and none of its `none_in_issue`
  slots occurs anywhere in the text. So a frame's example is a sentence (or a few: "... dies. ValueError: x").

A `match` example the entry does not match, or a `not` example it does, is a problem (key path, message) that
`triage.config.validate` turns into file:line. Examples are data for people too: they say, in the rubric, what a
pattern is for, and they fail the moment an edit makes it drift.

May import: the standard library, `triage.config` (parts), `triage.text`.
"""

from __future__ import annotations

from dataclasses import replace

from triage.config.parts import SLOT_SECTIONS, frame_lists, signal_lists, slot_sources, slots_path, vocabulary_of
from triage.text.document import Document
from triage.text.frames import Frame, compile_frame, match_frame, read_slots
from triage.text.matching import PatternError, Signal, compile_signal, match_signal
from triage.text.modifiers import Modifier
from triage.text.patterns import Pattern, evidence_text

Path_ = tuple
PROSE = {"prose": 1.0}


def _quote(text: str, limit: int = 70) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _doc(text: str) -> Document:
    return Document.of({"prose": text})


def signal_evidence(signal: Signal, text: str) -> str | None:
    """What the signal quotes when the text is one of its locations (None: it does not match)."""
    one = replace(signal, locations=("prose",), weight=1.0, said_by=None)
    found = match_signal(one, _doc(text), PROSE)
    return found[0].text if found else None


def frame_evidence(frame: Frame, slots: dict[str, Pattern], text: str) -> str | None:
    """What the frame quotes when the text is an issue's prose (None: it does not hold)."""
    one = replace(frame, locations=("prose",), weight=1.0)
    hits = read_slots(slots, _doc(text), locations=("prose",))
    found = match_frame(one, hits, PROSE)
    return found.text if found is not None else None


def slot_evidence(pattern: Pattern, text: str) -> str | None:
    found = pattern.search(text)
    return evidence_text(found) if found else None


def _examples(raw) -> dict:
    examples = raw.get("examples") if isinstance(raw, dict) else None
    return examples if isinstance(examples, dict) else {}


def _run(examples: dict, path: Path_, what: str, evidence, why_not: str,
         verbs: tuple[str, str] = ("match", "matches")) -> list[tuple[Path_, str]]:
    """Problems of one entry's examples: `evidence(text)` is what it quotes, None when it does not match."""
    problems = []
    for j, text in enumerate(examples.get("match") or ()):
        if evidence(text) is None:
            problems.append((path + ("examples", "match", j), f"{what} does not {verbs[0]} its example {_quote(text)}"
                                                              f" (examples.match){why_not}"))
    for j, text in enumerate(examples.get("not") or ()):
        found = evidence(text)
        if found is not None:
            problems.append((path + ("examples", "not", j), f"{what} {verbs[1]} {_quote(text)}, listed under "
                                                            f"examples.not (it quotes {_quote(found, 50)})"))
    return problems


def example_problems(data: dict, slots: dict[str, Pattern],
                     vocabularies: dict[str, dict[str, Pattern]] | None = None,
                     modifiers: dict[str, Modifier] | None = None) -> list[tuple[Path_, str]]:
    """Every example of an expanded rubric document run (`slots`: step 5's compiled slot vocabulary;
    `vocabularies`: every section's, by section, when there are more; `modifiers`: the compiled `modifiers:`, so
    an entry that minds them is run as planning runs it: "does not hang" under `not` of a negation-minding frame).
    Entries whose pattern does not compile, or that mind an undefined modifier, are skipped: that is its own
    problem."""
    vocabularies = {"high_priority": slots, **(vocabularies or {})}
    problems: list[tuple[Path_, str]] = []
    for path, signals in signal_lists(data):
        for i, raw in enumerate(signals):
            examples = _examples(raw)
            if not examples:
                continue
            try:
                signal = compile_signal(raw, where="/".join(map(str, path)), modifiers=modifiers)
            except (PatternError, KeyError, TypeError, ValueError):
                continue
            why = " (an `all` signal needs every pattern in the text)" if len(signal.patterns) > 1 else ""
            problems += _run(examples, path + (i,), f"signal '{raw['id']}'",
                             lambda text, s=signal: signal_evidence(s, text), why)
    for section in SLOT_SECTIONS:
        compiled = vocabularies.get(section, {})
        for name, raw in slot_sources(data, section).items():
            if name in compiled and _examples(raw):
                problems += _run(_examples(raw), slots_path(section) + (name,), f"slot '{name}'",
                                 lambda text, p=compiled[name]: slot_evidence(p, text), "")
    for path, frames in frame_lists(data):
        slots = vocabularies.get(vocabulary_of(path), {})
        for i, raw in enumerate(frames):
            examples = _examples(raw)
            if not examples:
                continue
            try:
                frame = compile_frame(raw, slots, where="/".join(map(str, path)), modifiers=modifiers)
            except (KeyError, TypeError, ValueError):
                continue
            why = f" (its slots {', '.join(frame.needs)} must occur in one sentence"
            why += f" without {', '.join(frame.unless)})" if frame.unless else ")"
            problems += _run(examples, path + (i,), f"frame '{raw['id']}'",
                             lambda text, f=frame, s=slots: frame_evidence(f, s, text), why, ("hold in", "holds in"))
    return problems
