"""The Action's plan/apply split (issue 8): the two-job example's permissions, and both modes run end to end
through a real subprocess against the GitHub stand-in and the OpenAI-compatible stand-in."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import actionrun
from actionrun import FSDP_WITH_REPRO, QUEUE, issues_payload, run_action, seed_issue
from llm_helpers import good_answer

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "workflows" / "ptd-triage-llm-plan-apply.yml"


def test_the_two_job_example_pins_its_permissions():
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert flow["permissions"] == {}
    plan, apply = flow["jobs"]["plan"], flow["jobs"]["apply"]
    assert all(v in ("read", "none") for v in plan["permissions"].values()), plan["permissions"]
    assert "id-token" not in apply["permissions"] and apply["permissions"].get("issues") == "write"
    apply_text = yaml.safe_dump(apply)
    assert "secrets." not in apply_text and "llm-api-key" not in apply_text
    steps = {s.get("with", {}).get("mode"): s for s in plan["steps"] + apply["steps"] if "with" in s}
    assert steps["plan"]["with"]["planner"] in ("llm", "hybrid") and "apply" in steps
    assert apply["needs"] == "plan"


def _entrypoint_dispatches_modes() -> bool:
    return "planmode" in (ROOT / "triage" / "action" / "main.py").read_text(encoding="utf-8")


@pytest.fixture
def entry(tmp_path, monkeypatch):
    """The real entrypoint.py once triage.action.main hands plan/apply to planmode; until then a one-line shim
    that calls triage.action.planmode.main the same way (same environment, same subprocess)."""
    if not _entrypoint_dispatches_modes():
        shim = tmp_path / "entry_shim.py"
        shim.write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom triage.action.planmode import main\n"
                        "sys.exit(main())\n", encoding="utf-8")
        monkeypatch.setattr(actionrun, "ENTRYPOINT", shim)
    return actionrun.ENTRYPOINT


def test_plan_then_apply_end_to_end(fake_github, fake_openai, tmp_path, entry):
    from triage.config.bundle import load_bundle

    seed_issue(fake_github, 12, FSDP_WITH_REPRO)
    fake_openai.script(good_answer())
    plans_file = tmp_path / "plans.json"
    payload = issues_payload(fake_github, 12, "labeled", label=QUEUE)
    planned = run_action(fake_github, tmp_path, "issues", payload, inputs={
        "mode": "plan", "planner": "llm", "llm-model": "test-model", "llm-base-url": fake_openai.url,
        "llm-api-key": fake_openai.api_key, "plans-file": str(plans_file), "github-token": fake_github.token})
    assert planned.returncode == 0, planned.stderr + planned.stdout
    assert planned.writes == []  # the plan job writes nothing to GitHub
    document = json.loads(plans_file.read_text())
    assert [p["issue"] for p in document["plans"]] == [12] and json.loads(planned.outputs["plans"]) == document
    assert fake_openai.api_key not in planned.stdout + planned.stderr + planned.summary + plans_file.read_text()
    assert document["plans"][0]["planner"] == "llm" and "module: fsdp" in document["plans"][0]["add_labels"]

    applied = run_action(fake_github, tmp_path, "issues", payload, inputs={
        "mode": "apply", "plans-file": str(plans_file)})
    assert applied.returncode == 0, applied.stderr + applied.stdout
    written = [r.body if isinstance(r.body, dict) else json.loads(r.body) for r in applied.writes
               if r.path.endswith("/labels")]
    bundle = load_bundle()
    for body in written:
        for name in body.get("labels", []):
            assert name in bundle.labels.names and name != "high priority"
    assert any(r.method == "POST" and r.path.endswith("/issues/12/labels") for r in applied.writes)
    assert len(fake_openai.calls) == 1  # apply asked no model


def test_apply_refuses_a_model_key(fake_github, tmp_path, entry):
    run = run_action(fake_github, tmp_path, "issues", None, inputs={"mode": "apply", "llm-api-key": "sk-secret-123456"})
    assert run.returncode == 1 and "llm-api-key must be empty in mode apply" in run.stdout + run.stderr
    assert "sk-secret-123456" not in run.stdout + run.stderr


def test_the_bedrock_example_uses_oidc_and_keeps_aws_out_of_the_writer():
    flow = yaml.safe_load((ROOT / "examples" / "workflows" / "ptd-triage-bedrock-plan-apply.yml").read_text())
    plan, apply = flow["jobs"]["plan"], flow["jobs"]["apply"]
    assert plan["permissions"] == {"contents": "read", "issues": "read", "id-token": "write"}
    configure = next(s for s in plan["steps"] if s.get("uses", "").startswith("aws-actions/configure-aws-credentials@"))
    assert {"role-to-assume", "aws-region"} <= set(configure["with"])
    assert not any(k in yaml.safe_dump(configure) for k in ("aws-access-key-id", "aws-secret-access-key"))
    triage = next(s for s in plan["steps"] if s.get("with", {}).get("mode") == "plan")
    assert triage["with"]["llm-provider"] == "bedrock" and triage["with"]["llm-model"]
    assert "id-token" not in apply["permissions"] and apply["permissions"]["issues"] == "write"
    assert "aws" not in yaml.safe_dump(apply).lower() and apply["needs"] == "plan"
