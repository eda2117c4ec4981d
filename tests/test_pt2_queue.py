"""The bundled pt2 (torch.compile) queue: three routes, one of which (core) adds no sub-oncall label, and modules
classified on every route. Issues here are written for the test, not taken from the dev set."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue

ROOT = Path(__file__).resolve().parents[1]
PT2 = ROOT / "queues" / "pt2"


@pytest.fixture(scope="module")
def bundle():
    return load_bundle(queue=PT2)


def plan(bundle, title: str, body: str, labels=("oncall: pt2",)):
    issue = {"number": 1, "title": title, "body": body, "state": "open", "labels": [{"name": n} for n in labels],
             "user": {"login": "reporter", "type": "User"}, "comments": 0}
    return plan_issue(snapshot_from_json(issue), bundle)


def test_routes_come_from_configuration(bundle):
    assert bundle.rubric.precedence == ("export", "cpu-inductor", "core")
    assert bundle.rubric.unlabelled_route == "core"
    assert bundle.rubric.stop_after == ()
    assert bundle.labels.queue_label == "oncall: pt2"
    assert bundle.command == "/pt2-retriage"


def test_export_issue_gets_the_export_sub_oncall_and_a_module(bundle):
    p = plan(bundle, "torch.export fails on a model with AOTInductor packaging",
             "```python\nimport torch\nep = torch.export.export(m, args)\ntorch._inductor.aoti_compile_and_package(ep)\n```")
    assert p.sub_oncall == "oncall: export"
    assert "module: aotinductor" in p.add_labels


def test_core_issue_adds_no_sub_oncall_and_is_classified_not_sent_to_review(bundle):
    p = plan(bundle, "[dynamo] graph break on functools.partial inside a compiled function",
             "```python\nimport torch, functools\n@torch.compile(fullgraph=True)\ndef f(x):\n    return x\n```\n"
             "torch._dynamo.exc.Unsupported: call_function")
    assert p.sub_oncall is None
    assert not any(l.startswith("oncall:") for l in p.add_labels)
    assert "module: dynamo" in p.add_labels
    assert p.outcome == "classified"
    assert "triage review" not in p.add_labels and "pt2-bot-triaged" in p.add_labels


def test_cpu_inductor_route_keeps_classifying_modules(bundle):
    p = plan(bundle, "[inductor][cpu] CppCompileError for a reduction with bf16",
             "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n\n```python\nimport torch\n"
             "torch.compile(f)(x)\n```")
    assert p.sub_oncall == "oncall: cpu inductor"
    assert p.modules, p.reasons
    assert p.outcome == "classified"


def test_core_issue_with_no_module_evidence_goes_to_review(bundle):
    p = plan(bundle, "torch.compile is confusing", "It does something odd.")
    assert p.sub_oncall is None
    assert "triage review" in p.add_labels and p.outcome == "needs_review"


def test_plan_and_eval_commands_take_the_queue_folder(tmp_path):
    rows = []
    for i, (title, route, modules) in enumerate([
        ("torch.export.export fails on ExportedProgram.module()", "export", []),
        ("[dynamo] graph break on itertools.chain", "core", ["module: dynamo"]),
    ]):
        rows.append({"id": f"t#{i}", "issue": {"number": i + 1, "title": title, "body": "", "state": "open",
                                              "labels": [{"name": "oncall: pt2"}], "user": {"login": "u", "type": "User"},
                                              "comments": 0},
                     "comments": [], "gold": {"route": route, "modules": modules, "high_priority": False, "type": None}})
    data = tmp_path / "mini.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "triage", "eval", "--config", str(PT2), str(data), "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout)
    assert figures["routing"]["columns"] == ["export", "cpu-inductor", "core", "none"]
    assert figures["routing"]["accuracy"] == 1.0
    assert figures["modules"]["scored"] == 1  # the export row has no gold module: not scored
    # The distributed queue does not know these routes: one clear line, not silently wrong figures.
    wrong = subprocess.run([sys.executable, "-m", "triage", "eval", str(data)], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
    assert wrong.returncode == 2 and "is not a route of this configuration" in wrong.stderr
