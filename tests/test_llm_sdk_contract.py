"""The model clients against the providers' OFFICIAL sources (issue 18): every request body the product's small
sans-I/O clients build validates against the SDKs' request types (`anthropic.types.MessageCreateParams`,
`openai.types.chat.CompletionCreateParams`) and botocore's `bedrock-runtime` Converse service model; replies built
from the SDKs' own response models (and botocore's output shape) parse; errors are classified as the SDKs classify
them. The SDKs are test-only dependencies (the `test` extra); the product never imports them.
"""
from __future__ import annotations

import json

import pytest
from llm_helpers import issue
from sdk_oracle import botocore_output_problems, botocore_problems, typed_dict_problems

from triage.config.bundle import load_bundle
from triage.llm import anthropic_messages, bedrock_converse, openai_chat
from triage.llm.client import LLMClient, LLMConfig
from triage.llm.errors import (LLMAuthError, LLMContextExceeded, LLMInvalidReply, LLMNoAnswer, LLMQuotaExceeded,
                               LLMRateLimited, LLMRefused, LLMTransient, LLMTruncated)
from triage.planners.model.prompt import render
from triage.planners.model.schema import SCHEMA_NAME, plan_schema

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pytest.importorskip("botocore")

AWS = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEY000001", "AWS_SECRET_ACCESS_KEY": "very/secret/key",
       "AWS_SESSION_TOKEN": "session-token", "AWS_REGION": "us-east-1"}
PLAN = {"not_distributed": {"decision": "distributed", "reason": "r", "quote": ""}}


def built(provider: str, mode: str = "auto"):
    """The request the product's client builds for a real prompt and the real plan schema."""
    bundle = load_bundle()
    prompt = render(issue(), bundle)
    client = LLMClient(LLMConfig(provider=provider, model="some-model", api_key="sk-test-key-000000",
                                 output_mode=mode), environ=AWS)
    return client.build(prompt.system, prompt.user, plan_schema(bundle), SCHEMA_NAME)


# ---- requests -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "json_schema", "tool"])
def test_anthropic_requests_are_sdk_message_create_params(mode):
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    request = built("anthropic", mode)
    body = request.json()
    assert typed_dict_problems(body, MessageCreateParamsNonStreaming) == []
    assert request.headers["anthropic-version"] == anthropic._constants.ANTHROPIC_API_VERSION
    forced = body.get("tool_choice", {}).get("type") in ("tool", "any")
    assert forced == (mode == "tool"), "a tool is forced only when the user chose tool mode"
    if mode != "tool":
        assert body["output_config"]["format"]["type"] == "json_schema" and "tools" not in body


def test_the_oracle_catches_what_the_sdk_type_refuses():
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    body = built("anthropic").json()
    assert typed_dict_problems(dict(body, bogus=1), MessageCreateParamsNonStreaming)
    assert typed_dict_problems(dict(body, output_config={"format": {"type": "json", "schema": {}}}),
                               MessageCreateParamsNonStreaming)
    assert typed_dict_problems({k: v for k, v in body.items() if k != "max_tokens"}, MessageCreateParamsNonStreaming)


def test_openai_requests_are_sdk_completion_create_params():
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    body = built("openai").json()
    assert typed_dict_problems(body, CompletionCreateParamsNonStreaming) == []
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    assert typed_dict_problems(dict(body, response_format={"type": "xml"}), CompletionCreateParamsNonStreaming)


def test_openai_has_no_tool_mode():
    from triage.llm.errors import LLMConfigError

    with pytest.raises(LLMConfigError, match="tool"):
        LLMConfig(provider="openai", model="m", api_key="k", output_mode="tool").check()


@pytest.mark.parametrize("mode", ["auto", "tool"])
def test_bedrock_requests_validate_against_botocores_service_model(mode):
    request = built("bedrock", mode)
    params = dict(request.json(), modelId="some-model")
    assert botocore_problems(params, "bedrock-runtime", "Converse") == []
    assert ("toolConfig" in params) == (mode == "tool") and ("outputConfig" in params) == (mode != "tool")
    schema_as_object = {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"schema": {}}}}}
    assert botocore_problems(dict(params, outputConfig=schema_as_object), "bedrock-runtime", "Converse")
    assert botocore_problems(dict(params, outputConfig={"textFormat": {"type": "json_schema"}}), "bedrock-runtime",
                             "Converse")


# ---- replies built from the SDKs' response models ------------------------------------------------------------

def _anthropic_message(content, stop_reason, **extra):
    from anthropic.types import Message

    message = Message.model_validate({"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                                      "content": content, "stop_reason": stop_reason, "stop_sequence": None,
                                      "usage": {"input_tokens": 11, "output_tokens": 7}, **extra})
    return message.model_dump_json().encode()


def test_anthropic_sdk_messages_parse():
    text = _anthropic_message([{"type": "text", "text": json.dumps(PLAN)}], "end_turn")
    reply = anthropic_messages.parse_response(200, {}, text)
    assert reply.plan == PLAN and (reply.input_tokens, reply.output_tokens) == (11, 7)
    tool = _anthropic_message([{"type": "tool_use", "id": "t", "name": "plan", "input": PLAN}], "tool_use")
    assert anthropic_messages.parse_response(200, {}, tool).plan == PLAN


@pytest.mark.parametrize("stop, error", [("refusal", LLMRefused), ("max_tokens", LLMTruncated),
                                         ("model_context_window_exceeded", LLMContextExceeded),
                                         ("pause_turn", LLMNoAnswer)])
def test_every_anthropic_stop_reason_without_an_answer_has_one_clear_error(stop, error):
    from anthropic.types import StopReason
    from typing_extensions import get_args

    assert stop in get_args(StopReason)
    body = _anthropic_message([{"type": "text", "text": "{\"not_distri"}] if stop != "pause_turn" else [], stop)
    with pytest.raises(error) as caught:
        anthropic_messages.parse_response(200, {}, body)
    assert not isinstance(caught.value, LLMInvalidReply)  # never repaired: the same prompt cannot do better
    assert caught.value.input_tokens == 11  # what it cost is still counted


def test_every_anthropic_stop_reason_is_handled():
    from anthropic.types import StopReason
    from typing_extensions import get_args

    handled = {"end_turn", "tool_use", "stop_sequence", "refusal", "max_tokens", "model_context_window_exceeded",
               "pause_turn"}
    assert set(get_args(StopReason)) <= handled, "a new stop reason: map it to a clear fallback reason"


def _openai_completion(message, finish_reason):
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})
    return completion.model_dump_json().encode()


def test_openai_sdk_completions_parse_and_stop():
    assert openai_chat.parse_response(200, {}, _openai_completion({"content": json.dumps(PLAN)}, "stop")).plan == PLAN
    cases = [({"content": None, "refusal": "no"}, "stop", LLMRefused),
             ({"content": "{\"a\":", "refusal": None}, "length", LLMTruncated),
             ({"content": None}, "content_filter", LLMRefused),
             ({"content": None, "tool_calls": [{"id": "x", "type": "function",
                                                "function": {"name": "f", "arguments": "{}"}}]}, "tool_calls",
              LLMNoAnswer)]
    for message, finish, error in cases:
        with pytest.raises(error):
            openai_chat.parse_response(200, {}, _openai_completion(message, finish))


def test_bedrock_replies_built_on_botocores_output_shape_parse():
    def converse(content, stop):
        value = {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
                 "usage": {"inputTokens": 4, "outputTokens": 2, "totalTokens": 6}, "metrics": {"latencyMs": 5}}
        assert botocore_output_problems(value, "bedrock-runtime", "Converse") == []
        return json.dumps(value).encode()

    assert bedrock_converse.parse_response(200, {}, converse([{"text": json.dumps(PLAN)}], "end_turn")).plan == PLAN
    tool = [{"toolUse": {"toolUseId": "t", "name": "plan", "input": PLAN}}]
    assert bedrock_converse.parse_response(200, {}, converse(tool, "tool_use")).plan == PLAN
    with pytest.raises(LLMContextExceeded):
        bedrock_converse.parse_response(200, {}, converse([{"text": "{"}], "model_context_window_exceeded"))


# ---- errors as the SDKs classify them ------------------------------------------------------------------------

def _sdk_error_classes():
    from anthropic._error_classes import ERROR_CLASSES

    return ERROR_CLASSES


def test_anthropic_spend_limit_and_billing_codes_are_never_retried():
    spend = {code for (status, code), cls in _sdk_error_classes().items()
             if code and any(w in cls.__name__ for w in ("SpendLimit", "Billing", "NotBillable"))
             and "Admin" not in cls.__name__}
    assert spend >= {"contract_spend_limit_reached", "enforced_spend_limit_reached"}
    for (status, code), cls in _sdk_error_classes().items():
        if code not in spend:
            continue
        body = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "limit",
                                                      "details": {"error_code": code}}}).encode()
        with pytest.raises(LLMQuotaExceeded) as caught:  # even with retry-after: a person must act
            anthropic_messages.parse_response(status, {"retry-after": "5"}, body)
        assert not caught.value.retryable and code in str(caught.value)


@pytest.mark.parametrize("status, kind, error", [
    (529, "overloaded_error", LLMTransient), (500, "api_error", LLMTransient), (401, "authentication_error",
                                                                                LLMAuthError),
    (413, "request_too_large", LLMContextExceeded), (402, "billing_error", LLMQuotaExceeded)])
def test_anthropic_status_classes(status, kind, error):
    sdk = _sdk_error_classes()[(status, None)] if (status, None) in _sdk_error_classes() else None
    body = json.dumps({"type": "error", "error": {"type": kind, "message": "m"}}).encode()
    with pytest.raises(error) as caught:
        anthropic_messages.parse_response(status, {"retry-after": "1"}, body)
    if sdk is not None and sdk.__name__ in ("OverloadedError", "InternalServerError"):
        assert caught.value.retryable


def test_ramp_limit_is_a_rate_limit_and_x_should_retry_is_obeyed():
    body = json.dumps({"type": "error", "error": {"type": "rate_limit_error", "message": "ramp",
                                                  "details": {"error_code": "ramp_limit_exceeded"}}}).encode()
    with pytest.raises(LLMRateLimited) as caught:
        anthropic_messages.parse_response(429, {"retry-after": "3"}, body)
    assert caught.value.retry_after == 3
    plain = json.dumps({"error": {"type": "server_error", "message": "m", "code": None, "param": None}}).encode()
    with pytest.raises(LLMTransient):
        openai_chat.parse_response(500, {}, plain)
    with pytest.raises(Exception) as caught:
        openai_chat.parse_response(500, {"x-should-retry": "false"}, plain)
    assert not caught.value.retryable


def test_openai_context_length_and_quota():
    def body(code):
        return json.dumps({"error": {"type": "invalid_request_error", "message": "m", "code": code,
                                     "param": None}}).encode()

    with pytest.raises(LLMContextExceeded):
        openai_chat.parse_response(400, {}, body("context_length_exceeded"))
    with pytest.raises(LLMQuotaExceeded):
        openai_chat.parse_response(429, {"retry-after": "1"}, body("insufficient_quota"))


def test_every_bedrock_and_openai_stop_reason_is_handled():
    import botocore.session
    from openai.types.chat.chat_completion import Choice
    from typing_extensions import get_args

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    bedrock = set(model.operation_model("Converse").output_shape.members["stopReason"].enum)
    assert bedrock <= {"end_turn", "tool_use", "max_tokens", "stop_sequence", "guardrail_intervened",
                       "content_filtered", "malformed_model_output", "malformed_tool_use",
                       "model_context_window_exceeded"}, "a new Bedrock stop reason: map it"
    finish = set(get_args(Choice.model_fields["finish_reason"].annotation))
    assert finish <= {"stop", "length", "tool_calls", "content_filter", "function_call"}, "a new finish_reason: map it"
