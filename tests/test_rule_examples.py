"""Each bundled queue's pattern examples (tests/data/rule_examples/QUEUE.yaml) hold: every pattern matches its
`match` texts and none of its `not` texts.

The rubric's own `examples:` (run at every load) say what a signal, slot or frame is for; these are kept beside it,
keyed by pattern, one or more per alternative, so that deleting or misspelling one alternative of a part, a slot or
a signal fails here (scripts/mutation_check.py measures how many such mutants the examples and tests catch, and
proposes texts for the rest). A text is matched the way most rules read: case-insensitively, parts composed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from triage.config.parts import expand
from triage.config.reading import prepare
from triage.text.patterns import compile_pattern

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "tests" / "data" / "rule_examples"


def pattern_source(data: dict, expanded: dict, key: str) -> str:
    """The expanded pattern an examples key names (KeyError when it names none)."""
    if key.startswith("parts."):
        name = key.removeprefix("parts.")
        if name not in (data.get("parts") or {}):
            raise KeyError(key)
        probe, problems = expand({"parts": data["parts"], "high_priority": {"slots": {"probe": "{" + name + "}"}}})
        if problems:
            raise KeyError(f"{key}: {problems[0][1]}")
        return probe["high_priority"]["slots"]["probe"]
    node = expanded
    for segment in key.split("."):
        if isinstance(node, list):
            named = [x for x in node if isinstance(x, dict) and x.get("id") == segment]
            node = named[0] if named else node[int(segment)] if segment.isdigit() else None
        elif isinstance(node, dict):
            node = node[segment]
        if node is None:
            raise KeyError(key)
    if isinstance(node, dict):
        node = node["match"]
    if not isinstance(node, str):
        raise KeyError(key)
    return node


def problems_of(rubric: Path, examples: dict) -> list[str]:
    # The rubric as the loader reads it: the shared reading it names merged under it (triage.config.reading), so a
    # part the queue takes from the package is found there, and one the queue defines itself wins.
    data = prepare(yaml.safe_load(rubric.read_text(encoding="utf-8")))
    expanded, _ = expand(data)
    problems = []
    for key, entry in examples.items():
        try:
            pattern = compile_pattern(pattern_source(data, expanded, key), case_sensitive=False)
        except KeyError:
            problems.append(f"{key}: names no pattern of {rubric} (renamed or moved? move its examples with it)")
            continue
        for text in entry.get("match") or ():
            if not pattern.search(text):
                problems.append(f"{key} does not match its example {text!r}")
        for text in entry.get("not") or ():
            if pattern.search(text):
                problems.append(f"{key} matches {text!r}, listed under not")
    return problems


QUEUES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("queue", QUEUES)
def test_every_pattern_matches_its_examples(queue):
    examples = yaml.safe_load((EXAMPLES / f"{queue}.yaml").read_text(encoding="utf-8")) or {}
    problems = problems_of(ROOT / "queues" / queue / "rubric.yaml", examples)
    assert not problems, f"{len(problems)} example(s) fail:\n" + "\n".join(problems[:40])


def test_a_deleted_alternative_fails_its_example(tmp_path):
    """The check can fail: a rubric whose part lost the alternative an example names is a problem."""
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("parts:\n  names: '\\bDDP\\b|FSDP'\n", encoding="utf-8")
    examples = {"parts.names": {"match": ["wrapped in FSDP"], "not": ["the addp helper"]}}
    assert problems_of(rubric, examples) == []
    rubric.write_text("parts:\n  names: '\\bDDP\\b'\n", encoding="utf-8")
    assert problems_of(rubric, examples) == ["parts.names does not match its example 'wrapped in FSDP'"]
    rubric.write_text("parts:\n  names: 'DDP|FSDP'\n", encoding="utf-8")  # the boundary gone: the near miss
    assert problems_of(rubric, examples) == ["parts.names matches 'the addp helper', listed under not"]
    assert problems_of(rubric, {"parts.gone": {"match": ["x"]}})[0].startswith("parts.gone: names no pattern")
