"""Each thing once (issue 36): the procedure runs once per issue whoever planned it, each of the rubric's step
functions once per input, and a model failure's kind is typed (the exit status is chosen from the type).

The counts are taken by wrapping the one entry point (`triage.core.procedure.run`) and the step functions, on the
planners' real paths (`plan_issue`), with an in-process model client: the llm planner, the hybrid planner when it
asks the model and when it does not, a model that fails, and the rubric."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from llm_helpers import good_answer, issue

from triage.config.bundle import load_bundle
from triage.core import procedure, steps
from triage.core.plan import FallbackKind
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.llm.errors import LLMRefused
from triage.planners import get_planner, plan_issue
from triage.planners.hybrid import HybridPlanner
from triage.planners.llm import LLMPlanner

BUNDLE = load_bundle()
STEP_FUNCTIONS = ("analyse", "step1_not_in_queue", "step2_route", "step3_modules", "step4_types",
                  "step5_high_priority", "step6_needs_reproduction")
HANG = issue(number=3601, title="[FSDP] all_reduce hangs forever on 8 nodes",
             body="Training with FSDP on 8 nodes hangs forever in all_reduce after the first step. No error is "
                  "printed; every rank waits. torch 2.4, NCCL 2.20.")
PLAIN = issue(number=3602, title="DDP: a typo in the docstring of DistributedDataParallel",
              body="The docstring of DistributedDataParallel says 'proccess group'. A typo only.")


class _Model:
    """An in-process model client: answers every call with `answer`, or raises `error`."""

    def __init__(self, answer: dict | None = None, error: Exception | None = None, max_calls: int | None = None):
        self.answer, self.error, self.asked = answer, error, 0
        self.budget = Budget(max_calls=max_calls)
        self.config = LLMConfig(model="m", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        self.budget.take_call()
        self.asked += 1
        if self.error is not None:
            raise self.error
        return Reply(self.answer, 10, 5, json.dumps(self.answer))


@pytest.fixture
def counted(monkeypatch):
    """Counts of `procedure.run` and of each step function, reset per plan."""
    counts: Counter = Counter()
    real_run = procedure.run

    def run(*args, **kwargs):
        counts["procedure.run"] += 1
        return real_run(*args, **kwargs)

    monkeypatch.setattr(procedure, "run", run)
    for name in STEP_FUNCTIONS:
        real = getattr(steps, name)

        def wrapped(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(steps, name, wrapped)
    return counts


def _answer() -> dict:
    return good_answer(route={"decision": "infra", "reason": "a hang in a collective", "quote": "all_reduce"})


@pytest.mark.parametrize("make, snapshot, asked", [
    (lambda: LLMPlanner(_Model(_answer())), HANG, 1),
    (lambda: HybridPlanner(_Model(_answer())), HANG, 1),  # a multi-node hang: step 5 is the model's
    (lambda: HybridPlanner(_Model(_answer())), PLAIN, 1),  # steps 4-5 run: the model reads them (the default)
    (lambda: HybridPlanner(_Model(_answer())), (PLAIN, "gated"), 0),  # `gate: true`, sure of every step: not asked
    (lambda: LLMPlanner(_Model(error=LLMRefused("no", provider="openai"))), HANG, 1),  # failed: the rubric's plan
    (lambda: get_planner("rubric"), HANG, 0),
])
def test_the_procedure_runs_once_per_issue_whoever_planned_it(counted, make, snapshot, asked):
    planner = make()
    bundle = BUNDLE
    if isinstance(snapshot, tuple):  # the bundled queue with hybrid's cheaper gate on
        snapshot = snapshot[0]
        bundle = replace(BUNDLE, rubric=replace(BUNDLE.rubric, hybrid={**BUNDLE.rubric.hybrid, "gate": True}))
    plan = plan_issue(snapshot, bundle, planner=planner)
    assert plan.steps and plan.steps[-1].step == 6
    assert counted["procedure.run"] == 1, counted
    assert counted["analyse"] == 1, counted  # the issue read once
    # Each step function at most once (a step the model decides with no merge rule is not computed at all); step 5
    # once more only when another planner decided step 4 differently (its rule reads the rubric's own step 4 too).
    assert all(counted[name] <= 1 for name in STEP_FUNCTIONS if name != "step5_high_priority"), counted
    assert counted["step5_high_priority"] <= 2, counted
    model = getattr(planner, "consultant", None)
    assert (model.client.asked if model is not None else 0) == asked


def test_a_plan_of_the_model_is_the_model_s_and_step5_is_computed_once_per_step4_decision(counted):
    """The hybrid asked about the hang: the model decides steps 4 and 5; the rubric's own step 5 is read on the
    model's step 4, and on its own step 4 only where that differs (the flag rule), never twice for one."""
    answer = good_answer(type={"decision": "feature", "performance": False, "reason": "asks for a tool",
                               "quote": "hangs forever"})
    plan = plan_issue(HANG, BUNDLE, planner=HybridPlanner(_Model(answer)))
    assert plan.planner == "hybrid" and plan.step(4).decision == "feature" and plan.step(4).by == "hybrid"
    assert counted["step5_high_priority"] == 2 and counted["procedure.run"] == 1


def test_a_model_failure_is_typed_and_the_call_budget_is_not_a_failure():
    failed = plan_issue(HANG, BUNDLE, planner=LLMPlanner(_Model(error=LLMRefused("refused", provider="openai"))))
    assert failed.planner == "rubric" and failed.fallback is not None
    assert failed.fallback.kind == FallbackKind.FAILURE and failed.fallback.failed
    assert failed.usage["fallback"] == failed.fallback.reason and failed.fallback.reason.startswith("LLMRefused")
    planner = LLMPlanner(_Model(_answer(), max_calls=1))
    first = plan_issue(HANG, BUNDLE, planner=planner)
    spent = plan_issue(issue(number=3603, title=HANG.title, body=HANG.body), BUNDLE, planner=planner)
    assert first.fallback is None and first.planner == "llm"
    assert spent.fallback is not None and spent.fallback.kind == FallbackKind.BUDGET and not spent.fallback.failed
    # The plan's JSON is as before: the reason in usage.fallback, no new key.
    assert "fallback" not in spent.to_dict() and spent.to_dict()["usage"]["fallback"] == spent.fallback.reason
