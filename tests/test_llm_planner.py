"""The model planners against loopback stand-ins of the three providers: every fault falls back to the rubric's
whole plan with a reason, a good answer becomes a plan whose steps say who decided them, the schema follows the
configuration, the key is never printed, and the default rubric planner never imports a model client."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakellm import Fault
from llm_helpers import client_for, good_answer, issue, policy_violations

from triage.config.bundle import load_bundle
from triage.llm.client import LLMClient, LLMConfig
from triage.planners.model.schema import module_labels, plan_schema, schema_problems
from triage.planners import get_planner, plan_issue
from triage.planners.llm import LLMPlanner

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bundle():
    return load_bundle()


def test_schema_enums_follow_the_configuration(bundle):
    schema = plan_schema(bundle)
    props = schema["properties"]
    assert props["route"]["properties"]["decision"]["enum"] == list(bundle.rubric.routes)
    assert set(props["modules"]["properties"]["labels"]["items"]["enum"]) == set(bundle.labels.with_role("module"))
    assert module_labels(bundle) == list(bundle.labels.with_role("module"))

    def closed(node):  # strict structured output: every object closed, every key required
        if node.get("type") == "object":
            assert node["additionalProperties"] is False and set(node["required"]) == set(node["properties"])
            for child in node["properties"].values():
                closed(child)
        if node.get("type") == "array":
            closed(node["items"])
    closed(schema)
    assert schema_problems(good_answer(bundle), schema) == []
    bad = good_answer(bundle, route={"decision": "security", "reason": "", "quote": ""}, extra=1)
    assert any("security" in p for p in schema_problems(bad, schema))
    assert any("unknown key" in p for p in schema_problems(bad, schema))


def test_a_good_answer_becomes_the_plan_with_steps_by_the_model(fake_llm, bundle):
    fake_llm.script(good_answer(bundle))
    planner = LLMPlanner(client_for(fake_llm))
    snap = issue()
    plan = plan_issue(snap, bundle, planner=planner)
    assert plan.planner == "llm"
    assert "module: fsdp" in plan.add_labels and "oncall: distributed parallelisms" in plan.add_labels
    assert {s.step: s.by for s in plan.steps} == {0: "rubric", 1: "llm", 2: "llm", 3: "llm", 4: "llm", 5: "llm",
                                                   6: "llm"}
    assert plan.usage["calls"] == 1 and plan.usage["input_tokens"] > 0
    assert any('quotes "fully_shard"' in r for r in plan.reasons)
    assert plan.to_dict()["steps"][1]["by"] == "llm"
    assert policy_violations(plan, snap, bundle) == []
    call = fake_llm.answered[0]
    assert "UNTRUSTED DATA" in call.prompt.system and "fully_shard(model)" in call.prompt.user


FAULTS = [
    ("429 without Retry-After, then 429 again, then again", [Fault.rate_limited()] * 3),
    ("quota exhausted", [Fault.quota_exhausted()]),
    ("500 three times", [Fault.server_error(500)] * 3),
    ("503 three times", [Fault.server_error(503)] * 3),
    ("529 three times", [Fault.overloaded()] * 3),
    ("malformed JSON twice", [Fault.malformed_json()] * 2),
    ("schema-invalid twice", [Fault.schema_invalid(), Fault.schema_invalid()]),
    ("refusal", [Fault.refusal()]),
    ("truncated", [Fault.truncated()]),
    ("prose instead of JSON twice", [Fault.raw_output("Sure! Here is the plan."), Fault.raw_output("no")]),
    ("401 bad key", [Fault.error(401)]),
]


@pytest.mark.parametrize("name,faults", FAULTS, ids=[f[0] for f in FAULTS])
def test_every_fault_falls_back_to_the_rubric_with_a_reason(fake_llm, bundle, name, faults):
    if fake_llm.provider == "anthropic" and name.startswith("429 without"):
        faults = [Fault.rate_limited(retry_after=1)] * 3  # without retry-after Anthropic means a spend limit
    if fake_llm.provider == "bedrock" and name == "401 bad key":
        faults = [Fault.error(403, error_type="AccessDeniedException")]  # Bedrock's bad credentials
    fake_llm.script(*faults)
    slept: list = []
    snap = issue()
    plan = plan_issue(snap, bundle, planner=LLMPlanner(client_for(fake_llm, slept=slept)))
    rubric = plan_issue(snap, bundle)
    assert plan.add_labels == rubric.add_labels and plan.comment == rubric.comment  # the whole rubric plan
    assert all(s.by == "rubric" for s in plan.steps)
    assert any("the model's plan was not used" in r for r in plan.reasons), plan.reasons
    assert plan.usage["fallback"]
    assert policy_violations(plan, snap, bundle) == []
    fake_llm.clear_script()


def test_retry_after_is_honoured_and_a_retry_can_succeed(fake_openai, bundle):
    fake_openai.script(Fault.rate_limited(retry_after=2), good_answer(bundle))
    slept: list = []
    planner = LLMPlanner(client_for(fake_openai, slept=slept))
    plan = plan_issue(issue(), bundle, planner=planner)
    assert slept == [2.0] and "module: fsdp" in plan.add_labels
    # Issue 40: the issue's calls are the requests the provider received, the refused one too, as the run's are
    # (the log's "N call(s)"): they said 1 and 2 of the same run.
    assert len(fake_openai.calls) == 2 == plan.usage["calls"] == planner.usage_totals()["calls"]


@pytest.mark.parametrize("fault", [Fault.quota_exhausted(), Fault.refusal(), Fault.truncated()],
                         ids=["quota", "refusal", "truncated"])
def test_never_retried(fake_llm, bundle, fault):
    fake_llm.script(fault, good_answer(bundle))
    plan = plan_issue(issue(), bundle, planner=LLMPlanner(client_for(fake_llm)))
    assert len(fake_llm.calls) == 1 and "fallback" in plan.usage
    fake_llm.clear_script()


def test_one_repair_fixes_a_schema_invalid_answer(fake_openai, bundle):
    fake_openai.script(Fault.schema_invalid(), good_answer(bundle))
    plan = plan_issue(issue(), bundle, planner=LLMPlanner(client_for(fake_openai)))
    assert plan.usage["calls"] == 2 and "module: fsdp" in plan.add_labels
    assert "rejected because it does not match the schema" in fake_openai.answered[1].prompt.user


def test_slow_past_the_timeout_falls_back_without_retrying(fake_openai, bundle):
    fake_openai.script(Fault.slow(3, good_answer(bundle)))
    plan = plan_issue(issue(), bundle, planner=LLMPlanner(client_for(fake_openai, timeout=0.5)))
    assert "LLMTimeout" in plan.usage["fallback"] and len(fake_openai.calls) == 1


def test_the_run_budget_stops_model_calls(fake_openai, bundle):
    planner = LLMPlanner(client_for(fake_openai, max_calls=2))
    fake_openai.script(good_answer(bundle), good_answer(bundle))
    plans = [plan_issue(issue(number=n), bundle, planner=planner) for n in (1, 2, 3)]
    assert [p.usage.get("fallback") is None for p in plans] == [True, True, False]
    assert "budget of 2 model calls" in plans[2].usage["fallback"]
    assert len(fake_openai.calls) == 2


def test_the_key_is_never_printed(fake_openai, bundle, capsys):
    fake_openai.script(Fault.error(401, f"Incorrect API key provided: {fake_openai.api_key}"))
    client = client_for(fake_openai)
    plan = plan_issue(issue(), bundle, planner=LLMPlanner(client))
    key = fake_openai.api_key
    shown = json.dumps(plan.to_dict()) + repr(client) + repr(client.config) + " ".join(plan.reasons)
    assert key not in shown and key[:12] not in shown
    assert key not in capsys.readouterr().out


def test_a_human_triaged_issue_asks_no_model(fake_openai, bundle):
    snap = issue(labels=("oncall: distributed", "module: fsdp", "oncall: distributed parallelisms"))
    plan = plan_issue(snap, bundle, planner=LLMPlanner(client_for(fake_openai)))
    assert not fake_openai.calls and plan.outcome == "already_triaged"


def test_model_flags_follow_the_policy(fake_openai, bundle):
    fake_openai.script(good_answer(bundle, high_priority={"decision": "flag", "reason": "data loss",
                                                          "criteria": ["multinode_hang"], "no_flag_reason": "none",
                                                          "quote": "hangs"}))
    plan = plan_issue(issue(), bundle, planner=LLMPlanner(client_for(fake_openai)))
    assert plan.outcome == "high_priority" and bundle.labels.review in plan.add_labels
    assert bundle.labels.marker not in plan.add_labels and "high priority" not in plan.add_labels


def test_the_default_planner_imports_no_model_client():
    code = ("import sys, json; from triage.planners import plan_issue, get_planner; "
            "from triage.config.bundle import load_bundle; from triage.core.snapshot import snapshot_from_json; "
            "s = snapshot_from_json({'number': 1, 'title': 'FSDP hang', 'body': 'x', 'labels': []}); "
            "plan_issue(s, load_bundle(), planner=get_planner('rubric')); plan_issue(s, load_bundle()); "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('triage.llm', 'triage.planners.llm', "
            "'triage.planners.model', 'triage.planners.hybrid', 'botocore', 'requests')))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_unknown_provider_and_missing_key_are_one_line_errors(bundle, monkeypatch):
    from triage.llm.errors import LLMConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        get_planner("llm", provider="openai", model="m", environ={})
    with pytest.raises(LLMConfigError, match="unknown LLM provider"):
        LLMClient(LLMConfig(provider="nope", model="m"))


def test_a_failed_ask_reports_its_cost_in_the_plan_and_in_the_run_totals(bundle):
    """What a failed call cost is part of the plan's usage and of the planner's totals (its interface), not a
    passenger on the exception: a refusal is billed."""
    from triage.llm.client import Budget
    from triage.llm.errors import LLMRefused
    from triage.llm.pricing import Prices
    from triage.planners.rubric import RubricPlanner

    class Refusing:
        budget = Budget(max_calls=None)
        config = LLMConfig(model="m", api_key="k", prices=Prices(2.0, 10.0))

        def complete(self, system, user, schema, schema_name, *, key=""):
            self.budget.take_call()
            self.budget.add_tokens(1000, 50)
            raise LLMRefused("the model refused", input_tokens=1000, output_tokens=50)

    planner = LLMPlanner(Refusing())
    plan = plan_issue(issue(), bundle, planner=planner)
    assert plan.planner == "rubric" and plan.usage["fallback"].startswith("LLMRefused:")
    assert (plan.usage["calls"], plan.usage["input_tokens"], plan.usage["output_tokens"]) == (1, 1000, 50)
    assert plan.usage["cost_usd"] == pytest.approx((1000 * 2.0 + 50 * 10.0) / 1e6)
    totals = planner.usage_totals()
    assert (totals["issues_asked"], totals["calls"], totals["fallbacks"], totals["input_tokens"]) == (1, 1, 1, 1000)
    assert planner.needs_prompt and not RubricPlanner().needs_prompt and RubricPlanner().usage_totals() is None
