"""Steps read decisions, never re-decide (issue 27): a step function takes the earlier steps' decisions as the
procedure decided them, and the rules that tie steps together live once, in the procedure.

- No step function in triage/core/steps.py calls another step's decision function (read from the source).
- The rules that tie steps together are written in one module: a dismissed flag (`review_dismissed`), no
  reproduction for a request (`Reproduction.REQUEST`), the stop at step 0 before any planner is asked.
- The listed fix: a hybrid plan whose model answered "not a request" for a multi-node hang that the rubric read as a
  feature request no longer keeps the rubric's request counter-weight at step 5: step 5 reads step 4 as decided.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from llm_helpers import good_answer, issue

from triage.config.bundle import load_bundle
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.planners import plan_issue
from triage.planners.hybrid import HybridPlanner

ROOT = Path(__file__).resolve().parents[1] / "triage"
STEPS = ROOT / "core" / "steps.py"
STEP_FUNCTION = re.compile(r"^step\d+_")


def _step_calls(source: str) -> dict[str, set[str]]:
    """Each step function of `source` -> the step functions it calls (by name or as `module.stepN_...`)."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and STEP_FUNCTION.match(node.name):
            called = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    target = sub.func.id if isinstance(sub.func, ast.Name) else getattr(sub.func, "attr", "")
                    if STEP_FUNCTION.match(target) and target != node.name:
                        called.add(target)
            found[node.name] = called
    return found


def test_no_step_function_calls_another_steps_decision():
    calls = _step_calls(STEPS.read_text(encoding="utf-8"))
    assert {"step0_already_triaged", "step4_types", "step5_high_priority", "step6_needs_reproduction"} <= set(calls)
    assert not {name: called for name, called in calls.items() if called}, calls


def test_the_step_call_check_sees_a_step_that_re_decides():
    """The check is not vacuous: step 5 deciding step 4 for itself (what it did before issue 27) is caught."""
    source = ("def step4_types(analysis):\n    return 1\n\n"
              "def step5_high_priority(analysis):\n    request = step4_types(analysis)\n    return request\n\n"
              "def step6_needs_reproduction(analysis):\n    return steps.step4_types(analysis)\n")
    assert _step_calls(source) == {"step4_types": set(), "step5_high_priority": {"step4_types"},
                                   "step6_needs_reproduction": {"step4_types"}}


def _modules_mentioning(pattern: str, packages=("core", "planners")) -> list[str]:
    found = []
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            code = "\n".join(line.split("#", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())
            if re.search(pattern, code):
                found.append(str(path.relative_to(ROOT)))
    return found


def test_the_rules_that_tie_steps_together_are_written_once_in_the_procedure():
    assert _modules_mentioning(r"\.review_dismissed\b") == ["core/procedure.py"]  # a dismissed flag stays dismissed
    assert _modules_mentioning(r"Reproduction\.REQUEST\b") == ["core/procedure.py"]  # none asked of a request
    # Step 0 stopped: the procedure says whether a planner may be asked; no planner compares step numbers itself.
    assert _modules_mentioning(r"\.step\s*[!=]=\s*0\b") == ["core/procedure.py"]
    assert _modules_mentioning(r"reached_judgement\(|procedure\.step0\(") == ["core/procedure.py",
                                                                               "planners/model/planner.py"]


class _Answers:
    """In-process model client: answers every call with `answer`."""

    def __init__(self, answer: dict):
        self.answer = answer
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(model="m", api_key="k")
        self.asked = 0

    def complete(self, system, user, schema, schema_name, *, key=""):
        self.asked += 1
        return Reply(self.answer, 10, 5, json.dumps(self.answer))


STUCK_RANK = issue(number=2701, title="Add a way to find the stuck rank: all_reduce hangs forever on 8 nodes",
                   body="Training with DDP on 8 nodes hangs forever in all_reduce. There is no way to find the stuck "
                        "rank today; please add a new tool that reports which rank never entered the collective.")


def test_step5_reads_step4_as_the_hybrid_decided_it():
    """The rubric reads the issue as a feature request, and its step 5 counts the request against the multi-node
    hang (-4): no flag. The hybrid asks the model about step 4 (a feature request is where the rubric is weakest);
    the model answers "none", not a request. Step 5 reads that decision, so the hang is flagged for a person, and
    the plan no longer names a request the plan itself overruled."""
    bundle = load_bundle()
    rubric = plan_issue(STUCK_RANK, bundle)
    assert rubric.step(4).decision == "feature"
    assert rubric.step(5).decision == "no_flag" and "request in step 4 'feature'" in rubric.step(5).reason
    answer = good_answer(route={"decision": "infra", "reason": "a hang in a collective", "quote": "all_reduce"},
                         type={"decision": "none", "performance": False, "reason": "a hang, a bug report",
                               "quote": "hangs forever"})
    client = _Answers(answer)
    plan = plan_issue(STUCK_RANK, bundle, planner=HybridPlanner(client))
    assert client.asked == 1 and plan.planner == "hybrid"
    assert plan.step(4).decision == "none" and plan.step(4).by == "hybrid"
    step5 = plan.step(5)
    assert step5.decision == "flag" and "multinode_hang" in step5.reason, step5.reason
    assert "request in step 4" not in step5.reason
    assert plan.outcome == "high_priority" and bundle.labels.review in plan.add_labels
    assert bundle.labels.marker not in plan.add_labels


def test_step5_keeps_the_request_counter_weight_when_the_decided_step4_is_a_request():
    """The same issue, the model agreeing it is a request: the rubric's own step 5 reads that (the counter-weight
    stays: no flag), and the model, asked (its reading of step 5 decides whenever it is asked), agrees."""
    answer = good_answer(route={"decision": "infra", "reason": "r", "quote": ""},
                         type={"decision": "enhancement", "performance": False, "reason": "r", "quote": ""},
                         high_priority={"decision": "no_flag", "criteria": [], "no_flag_reason": "not_a_bug_report",
                                        "reason": "a request", "quote": "hangs forever"})
    plan = plan_issue(STUCK_RANK, load_bundle(), planner=HybridPlanner(_Answers(answer)))
    assert plan.step(4).decision == "enhancement"
    assert plan.step(5).decision == "no_flag" and plan.step(5).by == "hybrid"
    assert plan.step(5).reason.startswith("step 5 (hybrid): no_flag — a request")
