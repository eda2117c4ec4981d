"""Issue 39 item 2: a fork writes lists, not regular expressions.

examples/queues/storage-lists is the storage example written with `names:` (and `all_names:`, and a part as a
list) only, on the shared reading; examples/queues/storage is its regex twin. The list queue must hold no regular
expression at all, and plan every sample issue (the example's own and tests/data/storage-twin-issues.jsonl, one or
more per component, team and criterion, and traps) exactly as the twin does: route, modules, every label, outcome.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
import yaml

from triage.config.parts import signal_lists
from triage.config.reading import regex_of_names
from triage.text.patterns import compile_pattern

ROOT = Path(__file__).resolve().parents[1]
LISTS = ROOT / "examples" / "queues" / "storage-lists"
REGEX = ROOT / "examples" / "queues" / "storage"
ISSUES = [ROOT / "examples" / "queues" / "storage" / "sample-issues.jsonl",
          ROOT / "tests" / "data" / "storage-twin-issues.jsonl"]


def test_the_list_queue_has_no_regular_expression():
    data = yaml.safe_load((LISTS / "rubric.yaml").read_text(encoding="utf-8"))
    assert "text" not in data and "slots" not in data["high_priority"]
    assert all(isinstance(v, list) for v in (data.get("parts") or {}).values())
    count = 0
    for path, signals in signal_lists(data):
        for signal in signals:
            assert "match" not in signal and "all" not in signal, (path, signal["id"])
            assert "names" in signal or "all_names" in signal, (path, signal["id"])
            count += 1
    assert count >= 20


def _plans(config: Path) -> dict[int, dict]:
    from triage.cli.main import main

    out = {}
    for issues in ISSUES:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            assert main(["plan", "--config", str(config), "--format", "json", str(issues)]) == 0
        text = buffer.getvalue()
        plans = json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in
                                                                        text.splitlines() if line.strip()]
        out.update({plan["issue"]: plan for plan in plans})
    return out


def test_the_list_queue_plans_every_sample_issue_as_its_regex_twin():
    lists, regex = _plans(LISTS), _plans(REGEX)
    assert len(lists) == len(regex) >= 28
    for number, plan in regex.items():
        other = lists[number]
        assert (other["sub_oncall"], other["modules"], sorted(other["add_labels"]), other["outcome"]) == (
            plan["sub_oncall"], plan["modules"], sorted(plan["add_labels"]), plan["outcome"]), number
    # The sample covers what the queue decides: every team, several components, a trap, a flag, a request.
    assert {p["sub_oncall"] for p in regex.values()} >= {"team: block", "team: object", "team: filesystem", None}
    outcomes = {p["outcome"] for p in regex.values()}
    assert {"classified", "high_priority", "not_distributed"} <= outcomes
    assert any(label.startswith("kind: ") for p in regex.values() for label in p["add_labels"])
    assert len({m for p in regex.values() for m in p["modules"]}) >= 9


@pytest.mark.parametrize("names, text, found", [
    (["UI"], "the UI button", "UI"),
    (["UI"], "a GUI toolkit", None),
    (["resiz*"], "resizing a PVC", "resizing"),
    (["/dev/sd*"], "writing to /dev/sdb1", "/dev/sdb1"),
    (["NVMe-oF"], "the NVMe-oF target", "NVMe-oF"),
    (["stale file handle"], "stale  file\nhandle", "stale  file\nhandle"),
    (["kind: StorageClass"], "kind: StorageClass", "kind: StorageClass"),
    (["a.b(c)"], "a.b(c)", "a.b(c)"),
    (["a.b(c)"], "axb(c)", None),
    (["{project}"], "{project}", "{project}"),
])
def test_names_are_matched_literally_and_as_words(names, text, found):
    match = compile_pattern(regex_of_names(names)).search(text)
    assert (match.group(0).decode() if match else None) == found
