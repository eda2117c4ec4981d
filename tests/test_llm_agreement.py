"""The same issue gives the same plan whether the rubric or a model decides, when their judgements agree (issue 18,
shared with issue 16's "the procedure is written once"): for every issue, a model answer that repeats the rubric's
decision at every step is folded into a plan, by the `llm` planner and by `hybrid` asked about every step, and that
plan writes exactly what the rubric's does (labels, comment, outcome, sub-oncall, modules, confidence). Any
difference is a second copy of the procedure that drifted. The in-repo issues always; the shared dev sets too when
`../shared` is there; and one issue per outcome of the procedure (test_procedure's table: the slowdown that asks for
a performance reproduction among them), by both planners, step decisions compared too. (The review label the rubric
adds where it could not read an issue, `high_priority.unread_review`, is its own doubt, not a decision a model
repeats: a model reads the other script or the bare log, so the rubric's plan compared is the one without it.)
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from engine_helpers import shared_dir

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.planners import hybrid as hybrid_module
from triage.planners import plan_issue
from triage.planners.hybrid import HybridPlanner
from triage.planners.llm import LLMPlanner

DATA = Path(__file__).parent / "data" / "eval_small.jsonl"


class Agreeing:
    """In-process client: answers with what the rubric decided for the issue being planned."""

    def __init__(self):
        self.answer: dict = {}
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(provider="openai", model="agreeing", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        return Reply(self.answer, 1, 1, json.dumps(self.answer))


def agreeing_answer(plan, bundle) -> dict:
    """The schema's answer that repeats the rubric's decision at every step."""
    def step(n):
        found = plan.step(n)
        return None if found is None or found.skipped else found

    def part(decision, **extra):
        return {"decision": decision, "reason": "as the rubric found", "quote": "", **extra}

    s1, s2, s3, s4, s5, s6 = (step(n) for n in range(1, 7))
    routes = list(bundle.rubric.routes)
    route = s2.decision if s2 is not None and s2.decision in routes else routes[0]
    modules = part(s3.decision, labels=list(s3.labels)) if s3 is not None and s3.decision in ("high", "medium") \
        else part("low" if s3 is not None else "not_applicable", labels=[])
    kind = s4.decision if s4 is not None and s4.decision in ("feature", "enhancement") else "none"
    performance = s4 is not None and bundle.labels.performance in s4.labels
    flag = s5 is not None and s5.decision == "flag"
    repro = "needs_reproduction" if s6 is not None and s6.decision == "needs_reproduction" else "has_reproduction"
    return {
        "not_distributed": part("not_distributed" if s1 is not None and s1.decision == "not_distributed"
                                else "distributed"),
        "route": part(route),
        "modules": modules,
        "type": part(kind, performance=performance),
        "high_priority": part("flag" if flag else "no_flag", criteria=list(s5.criteria)[:1] or ["crash"] if flag else [],
                              no_flag_reason="none" if flag else "no_criterion_met"),
        "reproduction": part(repro),
    }


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _snapshots(source: str):
    if source == "in-repo":
        rows = _rows(DATA)
    else:
        path = shared_dir() / "eval" / source
        if not path.exists():
            pytest.skip(f"{path} is not here (a fresh clone)")
        rows = _rows(path)
    return [snapshot_from_json({"issue": r["issue"], "comments": r.get("comments", [])}) for r in rows]


WRITES = ("add_labels", "comment", "outcome", "sub_oncall", "modules", "confidence")


@pytest.mark.parametrize("source", ["in-repo", "dev.jsonl", "dev2.jsonl"])
def test_a_model_that_agrees_with_the_rubric_gives_the_rubrics_plan(source, monkeypatch):
    bundle = load_bundle()
    client = Agreeing()
    monkeypatch.setattr(hybrid_module, "uncertain_steps",
                        lambda *a, **k: (frozenset(range(1, 7)), ("every step, for this test",)))
    planners = {"llm": LLMPlanner(client), "hybrid": HybridPlanner(client)}
    hp = replace(bundle.rubric.high_priority, unread_review=False)
    reading = replace(bundle, rubric=replace(bundle.rubric, high_priority=hp))
    differ, asked = [], 0
    for snapshot in _snapshots(source):
        rubric = plan_issue(snapshot, reading)
        client.answer = agreeing_answer(rubric, bundle)
        want = {k: v for k, v in rubric.to_dict().items() if k in WRITES}
        for name, planner in planners.items():
            plan = plan_issue(snapshot, bundle, planner=planner)
            if plan.usage is None:
                continue  # nothing to judge (e.g. a human triaged it): no model was asked
            assert not plan.usage.get("fallback"), plan.usage
            asked += 1
            got = {k: v for k, v in plan.to_dict().items() if k in WRITES}
            if got != want:
                differ.append((name, snapshot.number, {k: (want[k], got[k]) for k in WRITES if want[k] != got[k]}))
    assert asked > 0
    assert not differ, f"{len(differ)} plan(s) differ from the rubric's, e.g. {differ[:3]}"


# ---- every outcome of the procedure, by both model planners ---------------------------------------------------

def _cases():
    from test_procedure import CASES  # one table of an issue per outcome, shared with the procedure's own test

    return CASES


def _written(plan) -> dict:
    """What a plan writes and decides: WRITES, the comment's body, and each step's (decision, labels)."""
    out = {k: v for k, v in plan.to_dict().items() if k in WRITES}
    out["steps"] = [(s.step, str(s.decision), tuple(s.labels)) for s in plan.steps]
    return out


@pytest.mark.parametrize("planner_name", ["llm", "hybrid"])
@pytest.mark.parametrize("case", list(_cases()))
def test_every_outcome_is_the_same_plan_whoever_decides(case, planner_name, monkeypatch):
    """For an issue of each outcome (the slowdown that asks for a performance reproduction among them), a model
    that repeats the rubric's judgements gives the rubric's plan: same writes, same comment, same step decisions."""
    from llm_helpers import issue

    from triage.core.vocab import CommentStep, Outcome

    bundle = load_bundle()
    outcome, fields = _cases()[case]
    snapshot = issue(**fields)
    rubric = plan_issue(snapshot, bundle)
    assert rubric.outcome == outcome
    client = Agreeing()
    client.answer = agreeing_answer(rubric, bundle)
    monkeypatch.setattr(hybrid_module, "uncertain_steps",
                        lambda *a, **k: (frozenset(range(1, 7)), ("every step, for this test",)))
    planner = LLMPlanner(client) if planner_name == "llm" else HybridPlanner(client)
    plan = plan_issue(snapshot, bundle, planner=planner)
    assert _written(plan) == _written(rubric)
    if outcome in (Outcome.ALREADY_TRIAGED, Outcome.NOTHING_TO_DO):
        assert plan.usage is None or plan.usage.get("calls", 0) == 0  # nothing to judge: no model asked
    else:
        assert plan.usage and not plan.usage.get("fallback"), plan.usage  # the model's plan, not the rubric's
        assert any(s.by == planner_name for s in plan.steps if s.step and not s.skipped)
    if case == "slowdown":
        performance = bundle.step_templates[CommentStep.NEEDS_PERFORMANCE_REPRODUCTION]
        assert plan.comment is not None and plan.comment.template == performance


def test_the_cases_cover_every_outcome():
    from triage.core.vocab import Outcome

    assert {outcome for outcome, _ in _cases().values()} == set(Outcome)
