"""In `hybrid`, what the model may do with step 5's flag (issue 18), proved by a hypothesis property over random
model answers through the real HybridPlanner and the policy: it can add a flag the rubric missed, and every rubric
flag that does not survive carries a recorded procedural reason in the plan (the model's `removal_reason`, or the
procedure stopping earlier on the model's step-1 decision, or the model's route owning the rest, or step 4 decided
by the model as a request, whose counter-weight step 5 reads); without one the rubric's flag stands and the plan says
the model disagreed. A flag a person dismissed is never raised again."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_helpers import issue, policy_violations

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.core.merge import HYBRID, MODEL_DECIDES, Judgement, flag_added_or_removed_for_cause
from triage.core.steps import StepResult
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.planners.model.schema import NO_FLAG_REASONS as REMOVAL_REASON_TEXT, NO_FLAG_VALUES as REMOVAL_REASONS, \
    plan_schema, schema_problems
from triage.planners import hybrid as hybrid_module
from triage.planners import plan_issue
from triage.planners.hybrid import HybridPlanner

DATA = Path(__file__).parent / "data" / "eval_small.jsonl"
BUNDLE = load_bundle()
SCHEMA = plan_schema(BUNDLE)


class OneAnswer:
    """In-process client: answers every call with the answer it holds."""

    def __init__(self):
        self.answer: dict = {}
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(provider="openai", model="random", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        return Reply(self.answer, 10, 5, json.dumps(self.answer))


def answers(node: dict = SCHEMA) -> st.SearchStrategy:
    """Schema-valid answers with every choice random (the free text too, within the schema)."""
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "object":
        return st.fixed_dictionaries({k: answers(v) for k, v in node["properties"].items()})
    if kind == "array":
        return st.lists(st.sampled_from(node["items"]["enum"]), max_size=3, unique=True)
    if kind == "boolean":
        return st.booleans()
    return st.sampled_from(["", "because the issue says so", "a crash in c10d", "not severe enough to flag"])


FLAGGING = [
    ("FSDP2 fully_shard segfaults in reduce_scatter on 2 nodes",
     "Since 2.5 (worked in 2.4) training segfaults:\n```python\nfully_shard(model)\nloss.backward()\n```\n"
     "Segmentation fault (core dumped)"),
    ("DDP all_reduce returns wrong gradients with gradient_as_bucket_view",
     "Silent correctness: gradients differ across ranks.\n```python\nmodel = DDP(model, gradient_as_bucket_view=True)\n```"),
    ("Feature request: add a crash-safe async checkpoint",
     "It would be nice if DCP async_save could survive a crash. No bug here, a request."),
]


def _snapshots():
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    found = [snapshot_from_json({"issue": r["issue"], "comments": r.get("comments", [])}) for r in rows]
    return found + [issue(number=900 + i, title=t, body=b) for i, (t, b) in enumerate(FLAGGING)]


SNAPSHOTS = _snapshots()
RUBRIC_FLAGS = {s.number for s in SNAPSHOTS if (lambda r: r is not None and r.decision == "flag")(
    plan_issue(s, BUNDLE).step(5))}


def _step(plan, n):
    return next((s for s in plan.steps if s.step == n), None)


def check_hybrid_step5(snapshot, answer: dict, take: frozenset[int], monkeypatch) -> str:
    """Plan `snapshot` with hybrid, the gate asking `take` and the model answering `answer`; assert the property;
    return which case it was (for the tests that show each case is reached)."""
    assert schema_problems(answer, SCHEMA) == []
    client = OneAnswer()
    client.answer = answer
    monkeypatch.setattr(hybrid_module, "uncertain_steps", lambda *a, **k: (take, ("a random gate",) if take else ()))
    rubric_plan = plan_issue(snapshot, BUNDLE)
    plan = plan_issue(snapshot, BUNDLE, planner=HybridPlanner(client))
    assert not policy_violations(plan, snapshot, BUNDLE), (snapshot.number, answer)
    review = BUNDLE.labels.review
    if snapshot.review_dismissed:  # a person dismissed the flag: never raised again, whoever proposes it
        assert _step(plan, 5) is None or _step(plan, 5).decision != "flag", (snapshot.number, answer)
    if not plan.usage or plan.usage.get("fallback") or not take:
        return "not asked"
    r5 = _step(rubric_plan, 5)
    rubric_flag = r5 is not None and r5.decision == "flag"
    s5, s1, text = _step(plan, 5), _step(plan, 1), "\n".join(plan.to_dict()["reasons"])  # what the plan records
    hp = answer["high_priority"]
    if rubric_flag and (s5 is None or s5.decision != "flag"):
        if s1 is not None and s1.decision == "not_distributed":
            assert 1 in take and "step 1 (hybrid): not_distributed" in text  # the procedure stopped earlier
            return "stopped at step 1"
        if s5 is not None and s5.skipped:
            assert 2 in take and "owns further triage" in text  # the model's route owns the rest, recorded
            return "route owns the rest"
        s4, r4 = _step(plan, 4), _step(rubric_plan, 4)
        if 4 in take and s4.labels and not r4.labels and s5.by == "rubric":
            # Step 5 reads step 4 as decided: the model found a request (not a bug report), whose counter-weight
            # the rubric's step 5 now counts, and its reason records. (The real gate asks step 4 only of a
            # request, so this needs a random gate.)
            assert "request in step 4" in s5.reason, s5.reason
            return "step 4 decided a request"
        assert 5 in take, (snapshot.number, take, text)
        assert hp["decision"] == "no_flag" and hp["no_flag_reason"] != "none", (snapshot.number, answer)
        assert "removed for a procedural reason: " + REMOVAL_REASON_TEXT[hp["no_flag_reason"]] in text, text
        assert plan.outcome != "high_priority"
        return "removed with a reason"
    if rubric_flag and 5 in take and hp["decision"] == "no_flag":
        assert hp["no_flag_reason"] == "none" and "without a procedural reason" in text, text
        assert plan.outcome == "high_priority" and review in plan.add_labels + tuple(snapshot.labels)
        return "kept: no reason"
    if not rubric_flag and 5 in take and hp["decision"] == "flag" and s5 is not None and not s5.skipped \
            and not snapshot.review_dismissed:
        assert s5.decision == "flag" and plan.outcome == "high_priority", (snapshot.number, text)
        assert "flag added by the model" in text
        assert review in plan.add_labels and BUNDLE.labels.marker not in plan.add_labels
        return "added"
    return "other"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(snapshot=st.sampled_from(SNAPSHOTS), answer=answers(), dismissed=st.booleans(),
       take=st.sets(st.integers(1, 6)).map(frozenset), ask_five=st.booleans())
def test_removed_flags_carry_a_procedural_reason_and_missed_flags_can_be_added(snapshot, answer, dismissed, take,
                                                                              ask_five, monkeypatch):
    take = take | ({5} if ask_five else set())
    check_hybrid_step5(replace(snapshot, review_dismissed=dismissed), answer, frozenset(take), monkeypatch)


def _answer(**high_priority) -> dict:
    """An answer that agrees the issue is the queue's and routes it as FSDP, with step 5 as given."""
    from llm_helpers import good_answer

    hp = {"decision": "no_flag", "criteria": [], "no_flag_reason": "none", "reason": "r", "quote": ""}
    return good_answer(high_priority={**hp, **high_priority})


@pytest.mark.parametrize("case, number, high_priority", [
    ("removed with a reason", 900, dict(no_flag_reason="no_criterion_met")),
    ("added", None, dict(decision="flag", criteria=["crash"] if "crash" in SCHEMA["properties"]["high_priority"][
        "properties"]["criteria"]["items"]["enum"] else [])),
])
def test_each_case_of_the_property_is_reached(case, number, high_priority, monkeypatch):
    """The property above is not vacuous: each of its cases happens (a removal with a reason, a flag kept because
    the model gave none, a flag the rubric missed added)."""
    assert 900 in RUBRIC_FLAGS, "the fixture issue meant to be flagged by the rubric is not"
    snap = next(s for s in SNAPSHOTS if s.number == number) if number is not None else issue(
        number=950, title="FSDP2 fully_shard: a question about mixed precision",
        body="```python\nfully_shard(model)\n```\nWhich dtype is used for the reduce-scatter?")
    assert (snap.number in RUBRIC_FLAGS) == (case != "added")
    assert check_hybrid_step5(snap, _answer(**high_priority), frozenset({5}), monkeypatch) == case


def _model(decision: str, criteria=(), removal_reason: str = "none"):
    """The model's step-5 answer as the procedure hands it to a merge rule: (judged, judgement)."""
    from triage.planners.model.schema import no_flag_reason_text

    j = Judgement(decision, "r", "hybrid", criteria=tuple(criteria), retraction=no_flag_reason_text(removal_reason))
    judged = StepResult(5, decision, ("triage review",) if decision == "flag" else (), reason="r", by="hybrid",
                        criteria=j.criteria if decision == "flag" else ())
    return judged, j


def test_the_rule_itself():
    """Hybrid's step 5 is one named rule the procedure applies (`HYBRID`); the llm planner's policy has none."""
    rule = HYBRID.rule(5)
    assert rule is flag_added_or_removed_for_cause and MODEL_DECIDES.rule(5) is None
    assert all(HYBRID.rule(step) is None for step in (1, 2, 3, 4, 6))
    flag = StepResult(5, "flag", ("triage review",), reason="step 5: possibly high priority — crash", score=4.0,
                      criteria=("crash",))
    none = StepResult(5, "no_flag", reason="step 5: no high-priority criterion met", score=0.0)
    for reason in REMOVAL_REASONS:
        got = rule(flag, *_model("no_flag", removal_reason=reason))
        assert (got.decision == "flag") is (reason == "none")
        assert reason == "none" or REMOVAL_REASON_TEXT[reason] in got.reason
        assert got.score == 4.0 and got.evidence == flag.evidence
    added = rule(none, *_model("flag", ["crash"]))
    assert added.decision == "flag" and added.labels == ("triage review",) and "crash" in added.reason
    assert added.criteria == ("crash",) and "flag added by the model" in added.reason
    agreed = rule(flag, *_model("flag", ["crash", "regression"]))
    assert agreed.criteria == ("crash", "regression") and "the model agrees" in agreed.reason
    stands = rule(flag, *_model("no_flag"))
    assert stands.criteria == ("crash",) and "without a procedural reason" in stands.reason
    assert rule(none, *_model("no_flag")) is none
    assert rule(none, *_model("no_flag", removal_reason="not_a_bug_report")) is none  # nothing to remove


def test_a_flag_the_model_adds_is_not_raised_again_once_a_person_dismissed_it(monkeypatch):
    """The dismissed-flag rule is the procedure's, applied after hybrid's merge: the model's added flag too."""
    snap = replace(issue(number=950, title="FSDP2 fully_shard: a question about mixed precision",
                         body="```python\nfully_shard(model)\n```\nWhich dtype is used for the reduce-scatter?"),
                   review_dismissed=True)
    client = OneAnswer()
    client.answer = _answer(decision="flag", criteria=["crash"])
    monkeypatch.setattr(hybrid_module, "uncertain_steps", lambda *a, **k: (frozenset({5}), ("a gate",)))
    plan = plan_issue(snap, BUNDLE, planner=HybridPlanner(client))
    step5 = plan.step(5)
    assert step5.decision == "no_flag" and not step5.labels and "not flagged again" in step5.reason
    assert "flag added by the model" in step5.reason  # what the model proposed is still on record
    assert plan.outcome != "high_priority" and BUNDLE.labels.review not in plan.add_labels


@pytest.mark.parametrize("reason", [r for r in REMOVAL_REASONS if r != "none"])
def test_every_no_flag_reason_has_a_text(reason):
    assert REMOVAL_REASON_TEXT[reason]
