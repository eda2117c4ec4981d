"""An answer that contradicts itself is repaired (the one repair call) or dropped, never written (issue 28): one test
per contradiction the schema cannot express, each through the real client and the OpenAI stand-in, the answer
asked again once and, when it still contradicts itself, not used (the rubric plans the issue and says why); and the
quote check the hybrid planner relies on."""
from __future__ import annotations

import copy

import pytest
from llm_helpers import client_for, good_answer, issue

from triage.config.bundle import load_bundle
from triage.planners import plan_issue
from triage.planners.llm import LLMPlanner
from triage.planners.model.answer import normal, quote_found
from triage.planners.model.checks import answer_problems
from triage.planners.model.schema import NO_FLAG_REASONS, plan_schema, schema_problems


def _with(**parts) -> dict:
    answer = good_answer()
    for name, fields in parts.items():
        answer[name] = dict(answer[name], **fields)
    return answer


FLAG = {"decision": "flag", "criteria": ["multinode_hang"], "no_flag_reason": "none"}
NOT_IN_QUEUE = {"decision": "not_distributed"}
CONTRADICTIONS = {
    "not_applicable with module labels": (_with(modules={"decision": "not_applicable"}), "modules: 'not_applicable'"),
    "low with module labels": (_with(modules={"decision": "low"}), "modules: 'low' names no label"),
    "performance without an enhancement": (_with(type={"decision": "feature", "performance": True}),
                                           "performance is only for an enhancement"),
    "a flag without criteria": (_with(high_priority=dict(FLAG, criteria=[])), "a flag names at least one"),
    "a flag with a no_flag_reason": (_with(high_priority=dict(FLAG, no_flag_reason="no_criterion_met")),
                                     "a flag's no_flag_reason is 'none'"),
    "no_flag with criteria": (_with(high_priority={"criteria": ["crash"]}), "no_flag names no criterion"),
    "no_flag without a reason": (_with(high_priority={"no_flag_reason": "none"}),
                                 "no_flag needs a no_flag_reason from the list"),
    "a reproduction asked of a request": (_with(type={"decision": "enhancement"},
                                                reproduction={"decision": "needs_reproduction"}),
                                          "a request (enhancement) is never asked for a reproduction"),
    "not distributed with module labels": (_with(not_distributed=NOT_IN_QUEUE, high_priority={
        "no_flag_reason": "not_distributed"}), "gets no module label"),
    "not distributed and flagged": (_with(not_distributed=NOT_IN_QUEUE, modules={"decision": "not_applicable",
                                                                                  "labels": []},
                                          high_priority=FLAG), "is not flagged"),
    "not_distributed as the reason of a distributed issue": (_with(high_priority={
        "no_flag_reason": "not_distributed"}), "contradicts step 1's 'distributed'"),
}


@pytest.mark.parametrize("name", CONTRADICTIONS)
def test_each_contradiction_is_named(name):
    answer, words = CONTRADICTIONS[name]
    assert schema_problems(answer, plan_schema(load_bundle())) == []  # the schema cannot see it
    problems = answer_problems(answer)
    assert len(problems) == 1 and words in problems[0], problems


def test_an_answer_that_agrees_with_itself_has_no_problem():
    assert answer_problems(good_answer()) == []
    assert answer_problems(_with(high_priority=FLAG)) == []
    out = _with(not_distributed=NOT_IN_QUEUE, modules={"decision": "not_applicable", "labels": []},
                high_priority={"no_flag_reason": "not_distributed"}, type={"decision": "enhancement"})
    assert answer_problems(out) == []
    for reason in NO_FLAG_REASONS:
        if reason != "not_distributed":
            assert answer_problems(_with(high_priority={"no_flag_reason": reason})) == [], reason


@pytest.mark.parametrize("name", CONTRADICTIONS)
def test_a_contradiction_is_repaired_once_then_dropped_never_written(fake_openai, name):
    answer, words = CONTRADICTIONS[name]
    bundle, snapshot = load_bundle(), issue()
    fake_openai.script(copy.deepcopy(answer), copy.deepcopy(answer))
    plan = plan_issue(snapshot, bundle, planner=LLMPlanner(client_for(fake_openai)))
    assert len(fake_openai.answered) == 2  # the answer and the one repair
    repair = fake_openai.answered[1].prompt.user
    assert "contradicts itself" in repair and words in repair
    assert fake_openai.answered[0].prompt.system == fake_openai.answered[1].prompt.system  # the cached prefix
    rubric = plan_issue(snapshot, bundle)
    assert plan.planner == "rubric" and plan.add_labels == rubric.add_labels and plan.comment == rubric.comment
    assert "the answer contradicts itself after one repair" in plan.usage["fallback"] and words in \
        plan.usage["fallback"]


def test_a_repaired_answer_is_used(fake_openai):
    answer, _ = CONTRADICTIONS["a flag without criteria"]
    fake_openai.script(answer, _with(high_priority=FLAG))
    plan = plan_issue(issue(), load_bundle(), planner=LLMPlanner(client_for(fake_openai)))
    assert len(fake_openai.answered) == 2 and plan.planner == "llm" and plan.outcome == "high_priority"
    assert plan.step(5).criteria == ("multinode_hang",)


def test_quotes_are_found_as_a_model_copies_them():
    text = normal("**FSDP2** `fully_shard` hangs in all_gather\n\non 2 nodes — every time. It’s fine on 1 node.")
    assert quote_found("fully_shard hangs in all_gather on 2 nodes", text)
    assert quote_found("FSDP2 fully_shard hangs ... every time", text)  # words left out, in order
    assert quote_found("It's fine on 1 node", text)  # typographic quote and dash copied plainly
    assert not quote_found("every time ... FSDP2", text)  # out of order
    assert not quote_found("it crashes with a segfault", text)  # forged
    assert not quote_found("", text) and not quote_found(" ... ", text)  # nothing quoted is found nowhere
