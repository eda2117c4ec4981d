"""Every signal, slot and frame of every bundled queue says, in its own `examples: match`, what it is for (and
`validate` runs those examples on every load: tests/test_rubric_machinery.py), and no line of a rubric is over 200
characters: a long vocabulary is composed from named `parts:`, so a maintainer can read and review a pattern.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from triage.config.parts import SLOT_SECTIONS, frame_lists, signal_lists, slot_sources

ROOT = Path(__file__).resolve().parents[1]
QUEUES = {
    "distributed": ROOT / "queues" / "distributed" / "rubric.yaml",
    "pt2": ROOT / "queues" / "pt2" / "rubric.yaml",
    "storage": ROOT / "examples" / "queues" / "storage" / "rubric.yaml",
}
MAX_LINE = 200
# Sections still being rewritten (issue 29: step 4's and step 5's rules are converted with their new rules, by the
# work that changes them). Remove an entry when its section is done: the last test below says when.
PENDING: set[tuple[str, str]] = set()


def _data(queue: str) -> dict:
    return yaml.safe_load(QUEUES[queue].read_text(encoding="utf-8"))


def entries(queue: str):
    """(section, kind, name, its examples) of every signal, frame and slot of a queue's rubric."""
    data = _data(queue)
    for path, signals in signal_lists(data):
        for raw in signals:
            yield path[0], "signal", raw["id"], raw.get("examples") or {}
    for path, frames in frame_lists(data):
        for raw in frames:
            yield path[0], "frame", raw["id"], raw.get("examples") or {}
    for section in SLOT_SECTIONS:  # step 5's slots and step 4's
        for name, raw in slot_sources(data, section).items():
            yield section, "slot", name, (raw.get("examples") or {}) if isinstance(raw, dict) else {}


def long_lines(queue: str) -> list[tuple[str, int, int]]:
    """(top-level section, line number, length) of every line over MAX_LINE characters."""
    out, section = [], "(header)"
    for number, line in enumerate(QUEUES[queue].read_text(encoding="utf-8").splitlines(), start=1):
        if line[:1].isalpha() and ":" in line:
            section = line.split(":", 1)[0]
        if len(line) > MAX_LINE:
            out.append((section, number, len(line)))
    return out


@pytest.mark.parametrize("queue", sorted(QUEUES))
def test_every_signal_slot_and_frame_carries_a_match_example(queue):
    missing = [f"{section}: {kind} '{name}'" for section, kind, name, examples in entries(queue)
               if (queue, section) not in PENDING and not examples.get("match")]
    assert not missing, f"{QUEUES[queue]}: no `examples: match` on {len(missing)}: {missing[:10]}"


@pytest.mark.parametrize("queue", sorted(QUEUES))
def test_no_line_is_over_200_characters(queue):
    found = [f"line {n} ({length} characters, in {section})" for section, n, length in long_lines(queue)
             if (queue, section) not in PENDING]
    assert not found, f"{QUEUES[queue]}: compose long patterns from `parts:`: {found[:10]}"


def test_the_bundled_queues_have_examples_in_number():
    """Not a formality: nearly every entry has a counter-example too (a `not` where a near miss exists)."""
    for queue in QUEUES:
        done = [e for e in entries(queue) if (queue, e[0]) not in PENDING]
        assert done and all(e[3].get("match") for e in done)
        with_not = sum(1 for e in done if e[3].get("not"))
        assert with_not >= 0.8 * len(done), (queue, with_not, len(done))


def test_pending_sections_are_still_pending():
    """A section listed in PENDING that is complete must leave the list, so the two tests above guard it."""
    for queue, section in sorted(PENDING):
        incomplete = any(s == section and not examples.get("match") for s, _, _, examples in entries(queue))
        too_long = any(s == section for s, _, _ in long_lines(queue))
        assert incomplete or too_long, f"{queue}: section '{section}' is complete: remove it from PENDING"
