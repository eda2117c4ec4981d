"""Where asking again cannot help, the model planner does not pay for it (issue 18): through the real client and the
providers' loopback stand-ins, a spend limit (Anthropic's `error.details.error_code`, even on a 429 with
`retry-after`), Anthropic's `pause_turn`, OpenAI's `content: null` with `tool_calls`, and a context-window stop
(Anthropic and Bedrock `model_context_window_exceeded`) each cost exactly ONE HTTP call (no retry, no repair) and
give the rubric's whole plan with one clear reason naming what the provider said.
"""
from __future__ import annotations


import pytest
from fakellm import Fault
from llm_helpers import client_for, good_answer, issue

from triage.config.bundle import load_bundle
from triage.planners import plan_issue
from triage.planners.llm import LLMPlanner


def _spend_limit(code: str) -> Fault:
    body = {"type": "error", "request_id": "req_1",
            "error": {"type": "rate_limit_error", "message": "Limit reached.",  # only the code says which
                      "details": {"error_code": code}}}
    return Fault.raw(429, body, headers={"retry-after": "1"})


CASES = [
    # (stand-in fixture, fault, the error class, words the reason must carry)
    ("fake_anthropic", _spend_limit("enforced_spend_limit_reached"), "LLMQuotaExceeded",
     "enforced_spend_limit_reached"),
    ("fake_anthropic", _spend_limit("contract_spend_limit_reached"), "LLMQuotaExceeded",
     "contract_spend_limit_reached"),
    ("fake_anthropic", Fault.stopped("pause_turn"), "LLMNoAnswer", "pause_turn"),
    ("fake_anthropic", Fault.stopped("model_context_window_exceeded", text='{"not_distributed": {'),
     "LLMContextExceeded", "context window"),
    ("fake_openai", Fault.stopped("tool_calls"), "LLMNoAnswer", "content: null"),
    ("fake_bedrock", Fault.stopped("model_context_window_exceeded"), "LLMContextExceeded", "context window"),
]


@pytest.mark.parametrize("stand_in, fault, error, words", CASES,
                         ids=["spend limit (enforced)", "spend limit (contract)", "pause_turn",
                              "anthropic context window", "openai tool_calls, content null",
                              "bedrock context window"])
def test_one_call_no_repair_and_a_clear_reason(stand_in, fault, error, words, request):
    server = request.getfixturevalue(stand_in)
    bundle = load_bundle()
    server.script(fault, good_answer(bundle), good_answer(bundle))  # a retry or a repair would get a good answer
    slept: list = []
    snap = issue()
    plan = plan_issue(snap, bundle, planner=LLMPlanner(client_for(server, slept=slept)))
    rubric = plan_issue(snap, bundle)
    assert len(server.calls) == 1 and slept == [], "a second, paid call where it cannot help"
    assert plan.usage["calls"] == 1
    reason = plan.usage["fallback"]
    assert reason.startswith(error + ":") and words in reason, reason
    assert plan.planner == "rubric" and plan.add_labels == rubric.add_labels and plan.comment == rubric.comment
    assert any("the model's plan was not used" in r and error in r for r in plan.reasons), plan.reasons
    server.take_violations()  # the raw spend-limit body is off the stand-in's contract on purpose
    server.clear_script()


def test_a_plain_rate_limit_is_still_retried(fake_anthropic):
    """The control: a 429 with `retry-after` and no spend-limit code is a rate limit, retried after the wait."""
    bundle = load_bundle()
    fake_anthropic.script(Fault.rate_limited(retry_after=1), good_answer(bundle))
    slept: list = []
    plan = plan_issue(issue(), bundle, planner=LLMPlanner(client_for(fake_anthropic, slept=slept)))
    assert len(fake_anthropic.calls) == 2 and slept == [1.0] and not plan.usage.get("fallback")
