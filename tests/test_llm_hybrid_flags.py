"""In `hybrid`, what the model may do with step 5's flag (issue 18), proved over random model answers: it can add
a flag the rubric missed, and every rubric flag that does not survive carries a recorded procedural reason in the
plan (the model's `removal_reason`, or the procedure stopping earlier on the model's step-1 decision); without one
the rubric's flag stands."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from llm_helpers import issue, policy_violations

from triage.config.bundle import load_bundle
from triage.core.steps import StepResult
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.llm.schema import REMOVAL_REASON_TEXT, REMOVAL_REASONS, plan_schema
from triage.planners import plan_issue
from triage.planners.flags import hybrid_step5
from triage.planners import hybrid as hybrid_module
from triage.planners.hybrid import HybridPlanner

DATA = Path(__file__).parent / "data" / "eval_small.jsonl"


class OneAnswer:
    """In-process client: answers every call with the answer it holds."""

    def __init__(self):
        self.answer: dict = {}
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(provider="openai", model="random", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        return Reply(self.answer, 10, 5, json.dumps(self.answer))


def random_answer(rng: random.Random, schema: dict) -> dict:
    """A schema-valid answer with every choice random."""
    def value(node):
        if "enum" in node:
            return rng.choice(node["enum"])
        kind = node.get("type")
        if kind == "object":
            return {k: value(v) for k, v in node["properties"].items()}
        if kind == "array":
            return rng.sample(node["items"]["enum"], rng.randint(0, min(3, len(node["items"]["enum"]))))
        if kind == "boolean":
            return rng.random() < 0.5
        return rng.choice(["", "because the issue says so", "a crash in c10d"])
    return value(schema)


FLAGGING = [
    ("FSDP2 fully_shard segfaults in reduce_scatter on 2 nodes",
     "Since 2.5 (worked in 2.4) training segfaults:\n```python\nfully_shard(model)\nloss.backward()\n```\n"
     "Segmentation fault (core dumped)"),
    ("DDP all_reduce returns wrong gradients with gradient_as_bucket_view",
     "Silent correctness: gradients differ across ranks.\n```python\nmodel = DDP(model, gradient_as_bucket_view=True)\n```"),
    ("Feature request: add a crash-safe async checkpoint",
     "It would be nice if DCP async_save could survive a crash. No bug here, a request."),
]


def snapshots():
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    from triage.core.snapshot import snapshot_from_json

    found = [snapshot_from_json({"issue": r["issue"], "comments": r.get("comments", [])}) for r in rows]
    return found + [issue(number=900 + i, title=t, body=b) for i, (t, b) in enumerate(FLAGGING)]


def _step(plan, n):
    return next((s for s in plan.steps if s.step == n), None)


def test_removed_flags_carry_a_procedural_reason_and_missed_flags_can_be_added(monkeypatch):
    """Random answers through the real HybridPlanner and the policy; the gate (engineer hp's, not under test here)
    is replaced by a random choice of steps, so every combination of asked steps meets every answer."""
    bundle = load_bundle()
    schema = plan_schema(bundle)
    rng = random.Random(18)
    client = OneAnswer()
    planner = HybridPlanner(client)
    asked: list[frozenset[int]] = []

    def random_gate(snapshot, bundle, plan, settings, analysis=None):
        take = frozenset(s for s in range(1, 7) if rng.random() < 0.5) | frozenset({5} if rng.random() < 0.7 else ())
        asked.append(take)
        return take, ("a random gate",) if take else ()

    monkeypatch.setattr(hybrid_module, "uncertain_steps", random_gate)
    counts = {"asked": 0, "removed": 0, "kept_without_reason": 0, "added": 0, "rubric_flags_seen": 0}
    for snapshot in snapshots():
        rubric_plan = plan_issue(snapshot, bundle)
        rubric_flag = _step(rubric_plan, 5) is not None and _step(rubric_plan, 5).decision == "flag"
        for _ in range(60):
            client.answer = answer = random_answer(rng, schema)
            plan = plan_issue(snapshot, bundle, planner=planner)
            assert not policy_violations(plan, snapshot, bundle), (snapshot.number, answer)
            take = asked[-1] if asked else frozenset()
            if not plan.usage or plan.usage.get("fallback"):
                continue  # the model was not asked, or its answer was not used: the rubric's plan
            counts["asked"] += 1
            counts["rubric_flags_seen"] += rubric_flag
            s5, text = _step(plan, 5), "\n".join(plan.reasons)
            hp = answer["high_priority"]
            if rubric_flag and (s5 is None or s5.decision != "flag"):
                if _step(plan, 1) is not None and _step(plan, 1).decision == "not_distributed":
                    assert "step 1 (hybrid): not_distributed" in text  # the procedure stopped earlier, recorded
                    continue
                if s5 is not None and s5.skipped:
                    assert "owns further triage" in text  # the model's route owns the rest, recorded
                    continue
                counts["removed"] += 1
                assert 5 in take, (snapshot.number, take, text)
                assert hp["decision"] == "no_flag" and hp["removal_reason"] != "none", (snapshot.number, answer)
                assert "removed for a procedural reason: " + REMOVAL_REASON_TEXT[hp["removal_reason"]] in text, text
            elif rubric_flag and 5 in take and hp["decision"] == "no_flag":
                counts["kept_without_reason"] += 1
                assert hp["removal_reason"] == "none" and "without a procedural reason" in text, text
            if not rubric_flag and 5 in take and hp["decision"] == "flag" and s5 is not None and not s5.skipped \
                    and not snapshot.review_dismissed:
                counts["added"] += 1
                assert s5.decision == "flag" and plan.outcome == "high_priority", (snapshot.number, text)
                assert "flag added by the model" in text
                assert bundle.labels.review in plan.add_labels and bundle.labels.marker not in plan.add_labels
    print("hybrid flags:", counts)
    assert counts["removed"] > 0 and counts["kept_without_reason"] > 0 and counts["added"] > 0


def test_the_rule_itself():
    flag = StepResult(5, "flag", ("triage review",), reason="step 5: possibly high priority — crash", score=4.0)
    none = StepResult(5, "no_flag", reason="step 5: no high-priority criterion met", score=0.0)
    kw = dict(review="triage review", dismissed=False, by="hybrid", said="r")
    for reason in REMOVAL_REASONS:
        got = hybrid_step5(flag, {"decision": "no_flag", "criteria": [], "removal_reason": reason}, **kw)
        assert (got.decision == "flag") is (reason == "none")
        assert reason == "none" or REMOVAL_REASON_TEXT[reason] in got.reason
    added = hybrid_step5(none, {"decision": "flag", "criteria": ["crash"], "removal_reason": "none"}, **kw)
    assert added.decision == "flag" and added.labels == ("triage review",) and "crash" in added.reason
    dismissed = hybrid_step5(none, {"decision": "flag", "criteria": ["crash"]}, **dict(kw, dismissed=True))
    assert dismissed.decision == "no_flag" and not dismissed.labels
    assert hybrid_step5(none, {"decision": "no_flag"}, **kw) is none


@pytest.mark.parametrize("reason", [r for r in REMOVAL_REASONS if r != "none"])
def test_every_removal_reason_has_a_text(reason):
    assert REMOVAL_REASON_TEXT[reason]
