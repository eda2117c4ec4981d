"""Issue 39: the shared reading (triage/reading/shared/v1.yaml) and the part rules `validate` enforces.

The shared reading's examples are its tests: each part's `match`/`not` examples are run against the part composed
with the shared parts it uses, and each signal's (its groups and its criterion groups) against the signal as the
engine compiles it, with the shared modifiers. A queue's use of it (`reading:`) is checked the way a fork's author
meets it: an override that wins, a name the package does not have, a group or criterion that does not exist, and
the problem's file and line.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from test_validate import line_of, problems

from triage.config.examples import example_problems
from triage.config.parts import expand, expanded_part
from triage.config.reading import GROUPS, ReadingError, prepare, shared_file, shared_names
from triage.text.document import Document
from triage.text.matching import compile_signal, match_signal
from triage.text.modifiers import compile_modifiers
from triage.text.patterns import compile_pattern

ROOT = Path(__file__).resolve().parents[1]
SHARED = yaml.safe_load(shared_file("v1").read_text(encoding="utf-8"))
PARTS = {name: raw["match"] if isinstance(raw, dict) else raw for name, raw in SHARED["parts"].items()}


def test_the_shared_reading_is_versioned_by_its_file_name():
    assert shared_names() == ["v1"]
    assert SHARED["version"] == 1


@pytest.mark.parametrize("name", sorted(n for n, raw in SHARED["parts"].items() if isinstance(raw, dict)))
def test_each_shared_part_holds_its_examples(name):
    raw = SHARED["parts"][name]
    pattern = compile_pattern(expanded_part(PARTS, name), case_sensitive=False)  # as a signal reads it
    for text in raw["examples"].get("match", []):
        assert pattern.search(text), f"part '{name}' should match {text!r}"
    for text in raw["examples"].get("not", []):
        assert not pattern.search(text), f"part '{name}' should not match {text!r}"


def _shared_signal_document() -> dict:
    """The shared signals placed where a queue takes them, with the shared parts and modifiers."""
    signals = {"types": {g: {"signals": SHARED["signals"].get(g, [])} for g in ("request", "feature",
                                                                                 "enhancement", "performance")},
               "high_priority": {"counter_evidence": {"signals": SHARED["signals"]["counter"]},
                                 "criteria": {g: {"signals": s} for g, s in SHARED["criteria"].items()}},
               "reproduction": {"signals": SHARED["signals"]["reproduction"]}}
    return {"parts": PARTS, "modifiers": SHARED["modifiers"], **signals}


def test_every_shared_signal_holds_its_examples():
    data, problems = expand(_shared_signal_document())
    assert not problems
    modifiers = compile_modifiers(data["modifiers"], where="shared")
    assert not example_problems(data, {}, {}, modifiers)
    count = sum(len(s) for s in SHARED["signals"].values()) + sum(len(s) for s in SHARED["criteria"].values())
    assert count >= 15 and set(SHARED["signals"]) <= set(GROUPS)


def test_a_negated_or_supposed_failure_is_void_and_a_reported_one_counts():
    data, _ = expand(_shared_signal_document())
    modifiers = compile_modifiers(data["modifiers"], where="shared")
    hang = compile_signal(data["high_priority"]["criteria"]["hang"]["signals"][0], where="t", modifiers=modifiers)

    def points(text: str) -> float:
        return sum(e.points for e in match_signal(hang, Document.of({"prose": text}),
                                                  {"title": 1.0, "prose": 1.0, "comment": 1.0}))

    assert points("The gateway hangs forever after the upgrade.") == 3
    assert points("The gateway does not hang forever any more.") == 0
    assert points("If the gateway hangs forever we lose the node.") == 0
    assert points("The gateway hangs forever. Sorry for the noise, it was my own proxy misconfiguration.") == 0


def test_a_queue_part_replaces_the_shared_one_and_the_rest_is_merged_under_it():
    data = prepare({"reading": "v1", "text": {}, "parts": {"project": "cairnish"}})
    assert data["parts"]["project"] == "cairnish"
    assert data["parts"]["cue_start"] == PARTS["cue_start"]
    assert set(data["modifiers"]) >= {"negation", "hypothetical", "attribution", "asked"}
    assert data["text"]["environment_heading"] == SHARED["text"]["environment_heading"]


def test_a_queue_without_reading_is_read_as_written():
    data = {"text": {"environment_heading": "x"}, "parts": {"a": "b"}}
    assert prepare(data) == data


@pytest.mark.parametrize("reading, message", [
    ("v9", "reading names shared reading 'v9', which the package does not have (it has: v1)"),
    ({"shared": "v1", "groups": ["wishes"]}, "reading.groups names group 'wishes'"),
    ({"shared": "v1", "criteria": {"crash": "meltdown"}}, "maps 'crash' to criterion 'meltdown'"),
])
def test_a_reading_that_cannot_be_taken_is_oneline_of(reading, message):
    with pytest.raises(ReadingError) as info:
        prepare({"reading": reading, "text": {}, "high_priority": {"criteria": {"crash": {}}}})
    assert message in str(info.value) and "\n" not in str(info.value)


def _storage(tmp_path: Path) -> Path:
    target = tmp_path / "queue"
    shutil.copytree(ROOT / "examples" / "queues" / "storage", target)
    return target


def test_validate_names_the_line_of_a_reading_the_package_does_not_have(tmp_path):
    queue = _storage(tmp_path)
    rubric = queue / "rubric.yaml"
    rubric.write_text(rubric.read_text(encoding="utf-8").replace("  shared: v1", "  shared: v7"), encoding="utf-8")
    found = problems(queue)
    assert found == [f"{rubric}:{line_of(rubric, 'reading:')}: reading names shared reading 'v7', which the package "
                     "does not have (it has: v1)"]


def test_a_part_used_once_is_refused_at_its_line_unless_it_stands_alone(tmp_path):
    queue = _storage(tmp_path)
    rubric = queue / "rubric.yaml"
    text = rubric.read_text(encoding="utf-8")
    rubric.write_text(text.replace("  alone: [have_gone, ", "  alone: ["), encoding="utf-8")
    assert problems(queue) == [f"{rubric}:{line_of(rubric, '  have_gone:')}: part 'have_gone' is used 1 time (at "
                                "least 2: inline it, use it again, or list it in part_rules.alone)"]


def test_a_part_expanding_past_the_limit_is_refused_and_a_queue_may_set_its_own(tmp_path):
    queue = _storage(tmp_path)
    rubric = queue / "rubric.yaml"
    text = rubric.read_text(encoding="utf-8")
    long = "|".join(f"word{i:04d}" for i in range(125))  # with the words it had, 1,170 characters
    text = text.replace("  stored: '(?:objects|files|data|blocks|writes|versions)'",
                        f"  stored: '(?:objects|files|data|blocks|writes|versions)|{long}'")
    rubric.write_text(text, encoding="utf-8")
    assert problems(queue) == [f"{rubric}:{line_of(rubric, '  stored:')}: part 'stored' expands to 1,170 "
                                "characters (more than 1,000: split it into parts named by meaning)"]
    rubric.write_text(text.replace("part_rules:\n", "part_rules:\n  max_chars: 1200\n"), encoding="utf-8")
    assert problems(queue) == []


def test_the_bundled_queues_pass_the_part_rules_and_only_distributed_sets_its_own():
    for folder in (ROOT / "queues" / "pt2", ROOT / "examples" / "queues" / "storage",
                   ROOT / "examples" / "queues" / "storage-lists", ROOT / "queues" / "distributed"):
        assert problems(folder) == [], folder
        rules = yaml.safe_load((folder / "rubric.yaml").read_text(encoding="utf-8")).get("part_rules") or {}
        assert ("max_chars" in rules or "min_uses" in rules) == (folder.name == "distributed"), folder
