"""The core is queue-neutral (issue 36): no queue's words are written in triage/core/, and what a queue knows comes
from its data and the registries: the hybrid gate's cues (slot names of the queue's own vocabulary), an answer key's
step 5 criteria (the queue's), the CLI's `--planner` choices (the planner registry's).

The words checked are read from the queues themselves (every bundled queue and the storage example): what each
calls itself, its routes and its module labels; step 1's stable plan words live in `triage.config.words`."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from triage.config.bundle import load_bundle
from triage.evaluation.answer_key import key_entry_from_json

ROOT = Path(__file__).resolve().parents[1]
QUEUES = [ROOT / "queues" / "distributed", ROOT / "queues" / "pt2", ROOT / "examples" / "queues" / "storage"]
# Module labels that are everyday words ("module: core", "module: guards"): the code may say "core" and "object".
EVERYDAY = {"core", "guards", "object"}


def _queue_words() -> set[str]:
    words: set[str] = set()
    for folder in QUEUES:
        bundle = load_bundle(queue=folder)
        words.add(bundle.words.queue)
        words |= set(bundle.rubric.routes)
        words |= {name.split(":", 1)[-1].strip() for name in bundle.labels.with_role("module")}
    return {w.lower() for w in words if len(w) > 2} - EVERYDAY


def test_no_queues_words_in_the_core():
    words = _queue_words()
    assert {"distributed", "pt2", "storage", "parallelisms", "fsdp"} <= words
    found = []
    for path in sorted((ROOT / "triage" / "core").glob("*.py")):
        text = path.read_text(encoding="utf-8").lower()
        for word in words:
            if re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text):
                found.append(f"{path.name}: {word}")
    assert not found, found


def test_the_hybrid_gates_cues_are_the_queues_data():
    from triage.config.parts import VERSION_SLOT  # the one slot the configuration itself defines
    from triage.planners.escalation import HighPriorityGate

    slots = set(load_bundle().rubric.high_priority.slots) - {VERSION_SLOT}
    assert HighPriorityGate().cues == () and HighPriorityGate().request_cues == ()
    code = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "triage" / "planners").rglob("*.py"))
    assert not [s for s in slots if re.search(rf"['\"]{re.escape(s)}['\"]", code)]


def test_an_answer_keys_criteria_are_the_queues():
    line = {"id": "o/r#1", "type": "bug", "performance": False, "high_priority": True, "criterion": "multinode_hang",
            "sure": "high", "why": "w"}
    distributed = [c.name for c in load_bundle().rubric.high_priority.criteria]
    pt2 = [c.name for c in load_bundle(queue="pt2").rubric.high_priority.criteria]
    assert key_entry_from_json(line, distributed).criterion == "multinode_hang"
    with pytest.raises(ValueError, match="the queue's step 5 criteria"):
        key_entry_from_json(line, pt2)
    assert key_entry_from_json({**line, "criterion": "leak_or_deadlock"}, pt2).criterion == "leak_or_deadlock"


def test_the_planner_choices_are_the_registrys():
    from triage.cli.common import add_planner_options
    from triage.planners import _FACTORIES, _MODEL, register
    from triage.planners.rubric import RubricPlanner

    parser = argparse.ArgumentParser()
    add_planner_options(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--planner", "forks-own"])
    register("forks-own", lambda **_: RubricPlanner())
    try:
        assert parser.parse_args(["--planner", "forks-own"]).planner == "forks-own"
    finally:
        _FACTORIES.pop("forks-own", None)
        _MODEL.discard("forks-own")
