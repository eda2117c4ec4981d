"""In `hybrid`, steps 4 and 5 are the model's reading whenever it is asked, with the guards that keep the procedure's
conservatism (issue 28), through the real HybridPlanner, the procedure and the policy:

- a flag the model raises always stands (a person looks), recorded as added;
- the model clears a rubric flag only with a reason from the closed list AND a quote found in the issue: a test per
  reason, and per guard (a forged quote, a reason outside the list, no reason);
- its step-4 type is taken (feature / enhancement / none, performance beside it), the rubric's other reading
  recorded;
- a hypothesis property over random answers: every rubric flag that does not survive carries the model's listed
  reason and a quote that is words of the issue (or the procedure stopped earlier on a step the model decided, or
  step 4 decided a request whose counter-weight the rubric's own step 5 reads); a flag a person dismissed is
  never raised again.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_helpers import good_answer, issue, policy_violations

from triage.config.bundle import load_bundle
from triage.core.merge import HYBRID, MODEL_DECIDES, Judgement, flag_stands_unless_cleared_for_cause, \
    type_read_by_the_model
from triage.core.snapshot import snapshot_from_json
from triage.core.steps import StepResult
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.planners import hybrid as hybrid_module
from triage.planners import plan_issue
from triage.planners.hybrid import HybridPlanner
from triage.planners.model.answer import issue_text_for_quotes, quote_found
from triage.planners.model.checks import answer_problems
from triage.planners.model.schema import NO_FLAG_REASONS, no_flag_reason_text, plan_schema, schema_problems

DATA = Path(__file__).parent / "data" / "eval_small.jsonl"
BUNDLE = load_bundle()
SCHEMA = plan_schema(BUNDLE)


class OneAnswer:
    """In-process client: answers every call with the answer it holds; counts the calls."""

    def __init__(self, answer: dict | None = None):
        self.answer: dict = answer or {}
        self.calls = 0
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(provider="openai", model="random", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        self.calls += 1
        return Reply(self.answer, 10, 5, json.dumps(self.answer))


SEGFAULT = issue(number=900, title="FSDP2 fully_shard segfaults in reduce_scatter on 2 nodes",
                 body="Since 2.5 (worked in 2.4) training segfaults:\n```python\nfully_shard(model)\n"
                      "loss.backward()\n```\nSegmentation fault (core dumped)")
QUESTION = issue(number=950, title="FSDP2 fully_shard: a question about mixed precision",
                 body="```python\nfully_shard(model)\n```\nWhich dtype is used for the reduce-scatter?")


def _hybrid(snapshot, answer: dict, take=frozenset({4, 5}), monkeypatch=None):
    client = OneAnswer(answer)
    if monkeypatch is not None:
        monkeypatch.setattr(hybrid_module, "uncertain_steps", lambda *a, **k: (take, ("a gate",)))
    return plan_issue(snapshot, BUNDLE, planner=HybridPlanner(client)), client


def _no_flag(reason: str, quote: str, **extra) -> dict:
    return {"decision": "no_flag", "criteria": [], "no_flag_reason": reason, "reason": "the model's reading",
            "quote": quote, **extra}


def test_the_fixture_issues_are_what_the_tests_say():
    assert plan_issue(SEGFAULT, BUNDLE).step(5).decision == "flag"
    assert plan_issue(QUESTION, BUNDLE).step(5).decision == "no_flag"
    # The real gate asks about both: the flag to confirm it, the question... only through the property's gates.
    take, why = hybrid_module.uncertain_steps(SEGFAULT, BUNDLE, plan_issue(SEGFAULT, BUNDLE),
                                              hybrid_module.HybridSettings.from_rubric(BUNDLE.rubric))
    assert {4, 5} <= take and "confirm the rubric's high-priority flag" in why


@pytest.mark.parametrize("reason", list(NO_FLAG_REASONS))
def test_each_listed_reason_with_a_found_quote_clears_the_rubrics_flag(reason):
    """A test per no_flag reason: the model's reading clears the rubric's flag, and the plan says why."""
    answer = good_answer(high_priority=_no_flag(reason, "segfaults in reduce_scatter on 2 nodes"))
    if reason == "not_distributed":  # the answer must agree with itself: step 1 says so too
        answer["not_distributed"] = {"decision": "not_distributed", "reason": "r", "quote": ""}
        answer["modules"] = {"decision": "not_applicable", "labels": [], "reason": "r", "quote": ""}
    assert answer_problems(answer) == []
    plan, client = _hybrid(SEGFAULT, answer)
    step5 = plan.step(5)
    assert client.calls == 1 and plan.planner == "hybrid"
    assert step5.decision == "no_flag" and step5.by == "hybrid"
    assert f"the rubric's flag cleared by the model's reading: {NO_FLAG_REASONS[reason]}" in step5.reason
    assert plan.outcome != "high_priority" and BUNDLE.labels.review not in plan.add_labels
    assert any(NO_FLAG_REASONS[reason] in r for r in plan.reasons)  # in the plan, and so the step summary
    assert not policy_violations(plan, SEGFAULT, BUNDLE)


def test_guard_a_forged_quote_keeps_the_rubrics_flag():
    forged = "the reporter says it was their own CUDA kernel"
    assert not quote_found(forged, issue_text_for_quotes(SEGFAULT, BUNDLE))
    plan, _ = _hybrid(SEGFAULT, good_answer(high_priority=_no_flag("third_party_code", forged)))
    step5 = plan.step(5)
    assert step5.decision == "flag" and plan.outcome == "high_priority"
    assert "the model's no_flag quotes no phrase the reporter or a maintainer wrote, so the rubric's flag stands" in step5.reason
    assert "[quote not found in the issue]" in step5.reason and BUNDLE.labels.marker not in plan.add_labels


def test_guard_an_empty_quote_keeps_the_rubrics_flag():
    plan, _ = _hybrid(SEGFAULT, good_answer(high_priority=_no_flag("no_criterion_met", "")))
    assert plan.step(5).decision == "flag" and "quotes no phrase the reporter or a maintainer wrote" in plan.step(5).reason


def test_guard_a_reason_outside_the_list_is_never_used():
    """The schema's enum refuses it: the answer is asked again once, then not used; the rubric's flag stands."""
    answer = good_answer(high_priority=_no_flag("not_severe_enough", "segfaults in reduce_scatter"))
    assert schema_problems(answer, SCHEMA)
    plan, client = _hybrid(SEGFAULT, answer)
    assert client.calls == 2 and plan.planner == "rubric" and plan.outcome == "high_priority"
    assert "not_severe_enough" in plan.usage["fallback"]
    # At the rule itself: a judgement without a listed reason (no retraction) cannot clear a flag, quoted or not.
    own = StepResult(5, "flag", ("triage review",), reason="step 5: possibly high priority — crash", score=4.0,
                     criteria=("crash",))
    judged = StepResult(5, "no_flag", reason="r", by="hybrid")
    kept = flag_stands_unless_cleared_for_cause(own, judged, Judgement("no_flag", "r", "hybrid", quoted=True))
    assert kept.decision == "flag" and "without a reason from the list" in kept.reason and kept.criteria == ("crash",)


def test_guard_a_flag_the_model_adds_always_stands(monkeypatch):
    answer = good_answer(high_priority={"decision": "flag", "criteria": ["silent_correctness"],
                                        "no_flag_reason": "none", "reason": "wrong dtype", "quote": "reduce-scatter"})
    plan, _ = _hybrid(QUESTION, answer, monkeypatch=monkeypatch)
    step5 = plan.step(5)
    assert step5.decision == "flag" and step5.by == "hybrid" and step5.criteria == ("silent_correctness",)
    assert "flag added by the model, which the rubric missed (criteria: silent_correctness)" in step5.reason
    assert plan.outcome == "high_priority" and BUNDLE.labels.review in plan.add_labels
    assert BUNDLE.labels.marker not in plan.add_labels


def test_the_model_agreeing_keeps_the_flag_with_both_criteria():
    answer = good_answer(high_priority={"decision": "flag", "criteria": ["regression"], "no_flag_reason": "none",
                                        "reason": "worked in 2.4", "quote": "worked in 2.4"})
    step5 = _hybrid(SEGFAULT, answer)[0].step(5)
    assert step5.decision == "flag" and "the model agrees (criteria: regression)" in step5.reason
    assert "regression" in step5.criteria and len(step5.criteria) >= 2


def test_step4_the_models_type_is_taken_and_the_rubrics_reading_recorded(monkeypatch):
    answer = good_answer(type={"decision": "enhancement", "performance": True, "reason": "asks for speed",
                               "quote": "reduce-scatter"},
                         high_priority=_no_flag("not_a_bug_report", "Which dtype is used"))
    plan, _ = _hybrid(QUESTION, answer, monkeypatch=monkeypatch)
    step4 = plan.step(4)
    assert step4.decision == "enhancement" and step4.by == "hybrid"
    assert set(step4.labels) == {BUNDLE.labels.enhancement, BUNDLE.labels.performance}
    assert "[the rubric read none (no type label); the model's reading decides]" in step4.reason
    assert BUNDLE.labels.enhancement in plan.add_labels and plan.step(6).decision == "request"
    # And to none: a request the rubric saw is a bug report in the model's reading.
    rule = HYBRID.rule(4)
    own = StepResult(4, "feature", ("feature",), reason="step 4: feature request")
    judged = StepResult(4, "none", reason="step 4 (hybrid): none — a bug report", by="hybrid")
    got = rule(own, judged, Judgement("none", judged.reason, "hybrid"))
    assert got.decision == "none" and got.labels == () and "the rubric read feature (feature)" in got.reason
    assert rule(judged, judged, Judgement("none", judged.reason, "hybrid")) is judged  # agreeing: nothing to say


def test_the_rules_are_named_once():
    assert HYBRID.rule(4) is type_read_by_the_model and HYBRID.rule(5) is flag_stands_unless_cleared_for_cause
    assert all(HYBRID.rule(step) is None for step in (1, 2, 3, 6))
    assert all(MODEL_DECIDES.rule(step) is None for step in range(1, 7))


def test_a_flag_the_model_adds_is_not_raised_again_once_a_person_dismissed_it(monkeypatch):
    """The dismissed-flag rule is the procedure's, applied after hybrid's merge: the model's added flag too."""
    answer = good_answer(high_priority={"decision": "flag", "criteria": ["crash"], "no_flag_reason": "none",
                                        "reason": "r", "quote": ""})
    plan, _ = _hybrid(replace(QUESTION, review_dismissed=True), answer, monkeypatch=monkeypatch)
    step5 = plan.step(5)
    assert step5.decision == "no_flag" and not step5.labels and "not flagged again" in step5.reason
    assert "flag added by the model" in step5.reason  # what the model proposed is still on record
    assert plan.outcome != "high_priority" and BUNDLE.labels.review not in plan.add_labels


# ---- the property over random answers ---------------------------------------------------------------------------

def answers(node: dict = SCHEMA) -> st.SearchStrategy:
    """Schema-valid answers with every choice random (the free text and quotes too, within the schema)."""
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "object":
        return st.fixed_dictionaries({k: answers(v) for k, v in node["properties"].items()})
    if kind == "array":
        return st.lists(st.sampled_from(node["items"]["enum"]), max_size=3, unique=True)
    if kind == "boolean":
        return st.booleans()
    return st.sampled_from(["", "because the issue says so", "segfaults", "fully_shard", "not severe enough"])


def _snapshots():
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [snapshot_from_json({"issue": r["issue"], "comments": r.get("comments", [])}) for r in rows] + [
        SEGFAULT, QUESTION]


SNAPSHOTS = _snapshots()


def check_hybrid(snapshot, answer: dict, take: frozenset[int], monkeypatch) -> str:
    plan, _ = _hybrid(snapshot, answer, take, monkeypatch)
    assert not policy_violations(plan, snapshot, BUNDLE), (snapshot.number, answer)
    if snapshot.review_dismissed:  # a person dismissed the flag: never raised again, whoever proposes it
        assert plan.step(5) is None or plan.step(5).decision != "flag"
    if not take:
        return "not asked"
    if plan.usage.get("fallback"):
        assert answer_problems(answer), "a coherent answer was not used"
        return "dropped"
    rubric = plan_issue(snapshot, BUNDLE)
    r5, s5, s1 = rubric.step(5), plan.step(5), plan.step(1)
    text, hp = "\n".join(plan.reasons), answer["high_priority"]
    if r5 is not None and r5.decision == "flag" and (s5 is None or s5.decision != "flag"):
        if s1 is not None and s1.decision == "not_distributed":
            assert 1 in take and "step 1 (hybrid): not_distributed" in text
            return "stopped at step 1"
        if s5 is not None and s5.skipped:
            assert 2 in take and "owns further triage" in text
            return "route owns the rest"
        if s5.by == "rubric":  # the rubric's own step 5 read the model's request: its counter-weight, recorded
            assert 4 in take and plan.step(4).labels and "request in step 4" in s5.reason
            return "step 4 decided a request"
        assert 5 in take and hp["decision"] == "no_flag", (snapshot.number, answer)
        assert quote_found(hp["quote"], issue_text_for_quotes(snapshot, BUNDLE)), (snapshot.number, hp)
        assert "cleared by the model's reading: " + no_flag_reason_text(hp["no_flag_reason"]) in s5.reason
        return "cleared with a reason and a quote"
    if 5 in take and hp["decision"] == "flag" and s5 is not None and not s5.skipped and not snapshot.review_dismissed:
        assert s5.decision == "flag" and plan.outcome == "high_priority", (snapshot.number, text)
        return "flag stands" if r5 is not None and r5.decision == "flag" else "added"
    return "other"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(snapshot=st.sampled_from(SNAPSHOTS), answer=answers(), dismissed=st.booleans(),
       take=st.sets(st.integers(1, 6)).map(frozenset), ask_five=st.booleans())
def test_a_cleared_flag_always_has_a_listed_reason_and_a_found_quote(snapshot, answer, dismissed, take, ask_five,
                                                                     monkeypatch):
    take = take | ({5} if ask_five else set())
    check_hybrid(replace(snapshot, review_dismissed=dismissed), answer, frozenset(take), monkeypatch)
