"""Issue 30: a model answer cannot put more module labels on an issue than the procedure allows, through the real
entrypoint.py (the GitHub stand-in, the OpenAI stand-in answering a schema-valid plan).

- `modules.decision: not_applicable` with seven labels: "no module applies" keeps none of them (step 3), and the
  issue, routed to a team that classifies modules, goes to review (it wrote all seven).
- Seven labels with high confidence: the policy, the one gate, adds at most the queue's `modules.max_labels`
  (default 3), the first proposed kept and each dropped one recorded; a repository's configuration sets the cap.
"""
from __future__ import annotations

import json

import pytest
from llm_helpers import good_answer

from actionrun import FSDP_WITH_REPRO, MARKER, QUEUE, REPO, issues_payload, run_action, seed_issue

SEVEN = ["module: fsdp", "module: ddp", "module: dtensor", "module: pipelining", "module: data parallel",
         "module: context parallel", "module: activation checkpointing"]


def _run(fake_github, fake_openai, tmp_path, modules: dict, **inputs):
    fake_openai.script(good_answer(modules={"reason": "r", "quote": "", **modules}))
    seed_issue(fake_github, 21, FSDP_WITH_REPRO)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 21, "labeled", label=QUEUE),
                     inputs={"planner": "llm", "llm-provider": "openai", "llm-model": "m",
                             "llm-base-url": fake_openai.url, "llm-api-key": fake_openai.api_key, **inputs})
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(fake_openai.answered) == 1
    return run, json.loads(run.outputs["plan"])


def _modules(fake_github) -> list[str]:
    return [l for l in fake_github.issue_labels(REPO, 21) if l.startswith("module: ")]


def test_not_applicable_with_seven_labels_writes_none_of_them(fake_github, fake_openai, tmp_path):
    run, plan = _run(fake_github, fake_openai, tmp_path, {"decision": "not_applicable", "labels": SEVEN})
    assert _modules(fake_github) == []
    assert "triage review" in fake_github.issue_labels(REPO, 21) and plan["modules"] == []
    assert plan["planner"] == "llm" and not any(w.path.endswith("/comments") for w in run.writes)


@pytest.mark.parametrize("config, cap", [(None, 3), ("rubric:\n  modules:\n    max_labels: 1\n", 1)])
def test_seven_module_labels_are_capped_by_the_policy(fake_github, fake_openai, tmp_path, config, cap):
    inputs = {}
    if config:
        fake_github.add_file(REPO, ".github/ptd-triage.yml", config)
        inputs["config"] = ".github/ptd-triage.yml"
    run, plan = _run(fake_github, fake_openai, tmp_path, {"decision": "high", "labels": SEVEN}, **inputs)
    assert _modules(fake_github) == SEVEN[:cap]
    assert MARKER in fake_github.issue_labels(REPO, 21) and plan["modules"] == SEVEN[:cap]
    dropped = [r for r in plan["reasons"] if "module labels are added to one issue" in r]
    assert len(dropped) == len(SEVEN) - cap and f"at most {cap} module labels" in dropped[0]
    (labels,) = [w.body["labels"] for w in run.writes if w.path.endswith("/labels")]
    assert [l for l in labels if l.startswith("module: ")] == SEVEN[:cap]  # one call, never more than the cap
