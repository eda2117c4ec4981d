"""The sans-I/O provider protocols (triage.llm): the requests they build are accepted by the loopback stand-ins over
real HTTP, every fault maps to its typed error, and the pure helpers (Retry-After, redaction, pricing) hold."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from email.utils import format_datetime

import pytest
import requests
from fakellm import INVALID_PLAN, FakeBedrock, Fault

from triage.llm import anthropic_messages, bedrock_converse, common, errors, openai_chat, pricing
from triage.llm.errors import (LLMAuthError, LLMBadRequest, LLMConfigError, LLMError, LLMInvalidReply,
                               LLMQuotaExceeded, LLMRateLimited, LLMRefused, LLMTransient, LLMTruncated)

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["route", "labels", "reason"],
    "properties": {"route": {"enum": ["ddp", "fsdp", "other"]},
                   "labels": {"type": "array", "items": {"type": "string"}},
                   "reason": {"type": "string"}},
}
PLAN = {"route": "ddp", "labels": ["oncall: distributed"], "reason": "DDP hangs at barrier"}
SYSTEM, USER = "You triage issues. Answer with the plan.", "<issue>DDP hangs</issue>"
MODULES = {"openai": openai_chat, "anthropic": anthropic_messages, "bedrock": bedrock_converse}
NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)


def build(server, **overrides) -> common.Request:
    """The product's request for `server`'s provider, pointed at the stand-in."""
    kwargs = dict(model="test-model", system=SYSTEM, user=USER, schema=SCHEMA, schema_name="triage_plan",
                  max_tokens=300, base_url=server.url)
    if server.provider == "bedrock":
        pytest.importorskip("botocore")
        kwargs.update(credentials=bedrock_converse.credentials_from_env(server.credentials), region=server.region,
                      model="anthropic.claude-test-v1:0")
    else:
        kwargs["api_key"] = server.api_key
    kwargs.update(overrides)
    return MODULES[server.provider].build_request(**kwargs)


def send(request: common.Request, timeout: float = 5) -> tuple[int, dict, bytes]:
    resp = requests.request(request.method, request.url, headers=request.headers, data=request.body, timeout=timeout)
    return resp.status_code, resp.headers, resp.content


def roundtrip(server, **kwargs) -> common.Reply:
    status, headers, body = send(build(server))
    return MODULES[server.provider].parse_response(status, headers, body, **kwargs)


# ---- build_request: pure ------------------------------------------------------------------------------------------

def test_openai_request_shape():
    req = openai_chat.build_request(model="gpt-x", system=SYSTEM, user=USER, schema=SCHEMA, schema_name="plan",
                                    max_tokens=100, base_url="https://example.invalid/v1/", api_key="sk-secret-1")
    assert (req.method, req.url) == ("POST", "https://example.invalid/v1/chat/completions")
    assert req.headers["Authorization"] == "Bearer sk-secret-1"
    body = req.json()
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    assert body["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "plan", "strict": True, "schema": SCHEMA}}
    assert body["max_completion_tokens"] == 100 and "temperature" not in body
    legacy = openai_chat.build_request(model="m", system="s", user="u", schema=SCHEMA, schema_name="plan",
                                       max_tokens=5, api_key="k", token_field="max_tokens", temperature=0)
    assert legacy.json()["max_tokens"] == 5 and legacy.json()["temperature"] == 0
    assert legacy.url == "https://api.openai.com/v1/chat/completions"
    assert "sk-secret-1" not in repr(req)


def test_anthropic_request_shapes():
    as_json = anthropic_messages.build_request(model="claude-x", system=SYSTEM, user=USER, schema=SCHEMA,
                                               schema_name="plan", max_tokens=100, api_key="sk-ant-secret")
    assert as_json.url == "https://api.anthropic.com/v1/messages"
    assert as_json.headers["x-api-key"] == "sk-ant-secret"
    assert as_json.headers["anthropic-version"] == anthropic_messages.API_VERSION == "2026-10-21"
    body = as_json.json()  # the default: structured output, no tool forced
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "tools" not in body and "tool_choice" not in body
    assert body["system"] == SYSTEM and body["messages"] == [{"role": "user", "content": USER}]
    tool = anthropic_messages.build_request(model="claude-x", system=SYSTEM, user=USER, schema=SCHEMA,
                                            schema_name="plan", max_tokens=100, api_key="k", mode="tool")
    assert tool.json()["tools"][0]["input_schema"] == SCHEMA
    assert tool.json()["tool_choice"] == {"type": "tool", "name": "plan"} and "output_config" not in tool.json()
    assert "sk-ant-secret" not in repr(as_json)


def test_bedrock_request_is_signed_deterministically_for_a_fixed_time():
    pytest.importorskip("botocore")
    creds = bedrock_converse.AwsCredentials("AKIAEXAMPLEKEY000001", "very/secret", "session-token")
    kwargs = dict(model="anthropic.claude-x-v1:0", system=SYSTEM, user=USER, schema=SCHEMA, schema_name="plan",
                  max_tokens=100, credentials=creds, region="us-west-2", now=NOW)
    first, again = bedrock_converse.build_request(**kwargs), bedrock_converse.build_request(**kwargs)
    assert first.url == "https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-x-v1%3A0/converse"
    assert first.headers == again.headers and first.body == again.body
    auth = first.headers["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIAEXAMPLEKEY000001/20261122/us-west-2/bedrock/aws4_request, "
                           "SignedHeaders=")
    assert first.headers["X-Amz-Date"] == "20261122T120000Z"
    assert first.headers["X-Amz-Security-Token"] == "session-token"
    other = bedrock_converse.build_request(**dict(kwargs, user="something else"))
    assert other.headers["Authorization"] != auth  # the signature covers the body
    body = first.json()  # the default: structured output (outputConfig), no tool forced
    fmt = body["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema" and json.loads(fmt["structure"]["jsonSchema"]["schema"]) == SCHEMA
    assert "toolConfig" not in body and body["inferenceConfig"] == {"maxTokens": 100}
    tool = bedrock_converse.build_request(**kwargs, mode="tool").json()
    assert tool["toolConfig"]["toolChoice"] == {"tool": {"name": "plan"}} and "outputConfig" not in tool
    assert tool["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {"json": SCHEMA}
    assert "very/secret" not in repr(first) + repr(creds) and "session-token" not in repr(first) + repr(creds)


@pytest.mark.parametrize("bad", [dict(schema_name="has space"), dict(schema_name="x" * 65), dict(max_tokens=0),
                                 dict(schema={"type": "array"}), dict(model=" ")])
@pytest.mark.parametrize("module", [openai_chat, anthropic_messages])
def test_build_request_refuses_bad_arguments(module, bad):
    kwargs = dict(model="m", system="s", user="u", schema=SCHEMA, schema_name="plan", max_tokens=10, api_key="k")
    with pytest.raises(ValueError):
        module.build_request(**dict(kwargs, **bad))


def test_bedrock_credentials_and_region_from_the_environment():
    env = {"AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t",
           "AWS_DEFAULT_REGION": "eu-west-1"}
    assert bedrock_converse.credentials_from_env(env) == bedrock_converse.AwsCredentials("AKIA1", "s", "t")
    assert bedrock_converse.region_from_env(env) == "eu-west-1"
    assert bedrock_converse.region_from_env(dict(env, AWS_REGION="us-east-2")) == "us-east-2"
    assert bedrock_converse.credentials_from_env({"AWS_ACCESS_KEY_ID": "AKIA1"}) is None


def test_bedrock_signs_as_botocores_service_model_says():
    """The SigV4 signing name is botocore's for bedrock-runtime (it is also the provider's name, written once)."""
    botocore_session = pytest.importorskip("botocore.session")
    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    assert bedrock_converse.SIGNING_SERVICE == model.signing_name


def test_bedrock_without_botocore_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "botocore.auth", None)  # makes `import botocore.auth` fail
    with pytest.raises(LLMConfigError, match=r"ptd-triage\[bedrock\]"):
        bedrock_converse.build_request(model="m", system="s", user="u", schema=SCHEMA, schema_name="plan",
                                       max_tokens=10, region="us-east-1",
                                       credentials=bedrock_converse.AwsCredentials("AKIA1", "s"))


def test_the_package_imports_no_http_library():
    code = ("import sys, triage.llm, triage.llm.openai_chat, triage.llm.anthropic_messages, "
            "triage.llm.bedrock_converse, triage.llm.pricing; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('requests', 'urllib3', 'botocore', 'http', 'httpx', 'jsonschema')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- over real HTTP: accepted, answered, parsed ----------------------------------------------------------------

def test_each_providers_request_is_accepted_and_its_reply_parsed(fake_llm):
    fake_llm.script(PLAN)
    reply = roundtrip(fake_llm)
    assert reply.plan == PLAN and json.loads(reply.raw_text) == PLAN
    [call] = fake_llm.answered
    assert (call.prompt.system, call.prompt.user, call.prompt.schema) == (SYSTEM, USER, SCHEMA)
    assert (reply.input_tokens, reply.output_tokens) == fake_llm.usage and reply.input_tokens > 0


def test_anthropic_json_mode_is_accepted_and_parsed(fake_anthropic):
    fake_anthropic.script(PLAN)
    status, headers, body = send(build(fake_anthropic, mode="json_schema"))
    assert anthropic_messages.parse_response(status, headers, body).plan == PLAN
    assert fake_anthropic.calls[0].prompt.mode == "output_config"


def test_the_default_answer_round_trips(fake_llm):
    reply = roundtrip(fake_llm)
    assert reply.plan == {"route": "ddp", "labels": [], "reason": ""}


# ---- faults -> typed errors -------------------------------------------------------------------------------------

FAULT_CASES = [
    # (fault, {provider: expected error class}, extra check on the error)
    (Fault.rate_limited(retry_after=7), LLMRateLimited, lambda e: e.retry_after == 7.0),
    (Fault.rate_limited(), {"openai": LLMRateLimited, "anthropic": LLMQuotaExceeded, "bedrock": LLMRateLimited},
     lambda e: getattr(e, "retry_after", None) is None),
    (Fault.quota_exhausted(), LLMQuotaExceeded, lambda e: not e.retryable),
    (Fault.server_error(500), LLMTransient, lambda e: e.retryable and e.status == 500),
    (Fault.server_error(503), LLMTransient, lambda e: e.status == 503),
    (Fault.overloaded(), LLMTransient, lambda e: e.status in (529, 503)),
    (Fault.malformed_json(), LLMInvalidReply, lambda e: "not valid JSON" in e.message),
    (Fault.refusal("I will not."), LLMRefused, lambda e: e.output_tokens > 0),
    (Fault.truncated(), LLMTruncated, lambda e: e.output_tokens > 0 and not e.retryable),
    (Fault.raw_output("Sure! Here is the plan: route ddp"), LLMInvalidReply, lambda e: "not valid JSON" in e.message),
    (Fault.raw_output("[1, 2]"), LLMInvalidReply, lambda e: "not an object" in e.message),
    (Fault.error(400, "bad things"), LLMBadRequest, lambda e: "bad things" in e.message),
    (Fault.error(403, "not allowed"), LLMAuthError, lambda e: e.status == 403),
    (Fault.error(404, "no such model"), LLMBadRequest, lambda e: e.status == 404),
]


@pytest.mark.parametrize("fault, expected, check", FAULT_CASES,
                         ids=[f"{case[0].kind}-{case[0].status}-{i}" for i, case in enumerate(FAULT_CASES)])
def test_each_fault_maps_to_its_typed_error(fake_llm, fault, expected, check):
    fake_llm.script(fault)
    expected = expected[fake_llm.provider] if isinstance(expected, dict) else expected
    with pytest.raises(expected) as caught:
        roundtrip(fake_llm)
    assert type(caught.value) is expected
    assert check(caught.value), caught.value
    assert caught.value.provider == fake_llm.provider


def test_a_truncated_tool_answer_never_yields_a_partial_plan(fake_llm):
    fake_llm.script(Fault.truncated(PLAN))
    with pytest.raises(LLMTruncated) as caught:
        roundtrip(fake_llm)
    call = fake_llm.calls[0]
    assert (caught.value.input_tokens, caught.value.output_tokens) == (call.input_tokens, call.output_tokens)


def test_a_schema_invalid_plan_is_returned_for_the_plan_validator(fake_llm):
    fake_llm.script(Fault.schema_invalid())
    assert roundtrip(fake_llm).plan == INVALID_PLAN  # checking it against the plan schema is not this layer's job


def test_an_http_date_retry_after_becomes_a_delay(fake_llm):
    when = format_datetime(datetime(2026, 11, 22, 12, 0, 30, tzinfo=timezone.utc), usegmt=True)
    fake_llm.script(Fault.rate_limited(when))
    with pytest.raises(LLMRateLimited) as caught:
        roundtrip(fake_llm, now=NOW.timestamp())
    assert caught.value.retry_after == 30.0


def test_a_slow_reply_times_out_in_the_client(fake_llm):
    fake_llm.script(Fault.slow(3))
    with pytest.raises(requests.Timeout):
        send(build(fake_llm), timeout=0.3)


def test_a_wrong_key_is_an_auth_error_that_does_not_contain_the_key(fake_llm):
    if fake_llm.provider == "bedrock":
        req = build(fake_llm, credentials=bedrock_converse.AwsCredentials(
            fake_llm.access_key, "wrong-secret-value", fake_llm.session_token))
        secrets = ["wrong-secret-value"]
    else:
        secrets = ["sk-live-abcdefghijklmnop0123"]
        req = build(fake_llm, api_key=secrets[0])
    status, headers, body = send(req)
    with pytest.raises(LLMAuthError) as caught:
        MODULES[fake_llm.provider].parse_response(status, headers, body, redact=secrets)
    shown = str(caught.value) + repr(caught.value) + repr(caught.value.args)
    assert caught.value.status in (401, 403) and all(secret not in shown for secret in secrets)


def test_the_stand_in_rejects_a_request_the_protocol_should_never_send(fake_openai):
    loose = dict(SCHEMA, additionalProperties=True)  # strict mode refuses it, as OpenAI does
    status, headers, body = send(build(fake_openai, schema=loose))
    with pytest.raises(LLMBadRequest, match="additionalProperties"):
        openai_chat.parse_response(status, headers, body)


def test_bedrock_request_signed_at_a_fixed_time_is_refused_when_stale():
    pytest.importorskip("botocore")
    with FakeBedrock() as server:
        status, headers, body = send(build(server, now=datetime(2020, 1, 1, tzinfo=timezone.utc)))
        with pytest.raises(LLMAuthError, match="Signature expired"):
            bedrock_converse.parse_response(status, headers, body)
        assert not server.violations


# ---- parse_response: pure edge cases ----------------------------------------------------------------------------

def _openai_error(status, error, headers=None):
    return openai_chat.parse_response(status, headers or {}, json.dumps({"error": error}).encode())


def test_openai_quota_codes_are_never_retried_and_other_429s_are():
    for code in ("insufficient_quota", "billing_hard_limit_reached"):
        with pytest.raises(LLMQuotaExceeded):
            _openai_error(429, {"message": "pay up", "type": "insufficient_quota", "param": None, "code": code})
    with pytest.raises(LLMRateLimited) as caught:
        _openai_error(429, {"message": "slow", "type": "requests", "param": None, "code": "rate_limit_exceeded"},
                      [("retry-after-ms", "1500"), ("Retry-After", "9")])
    assert caught.value.retry_after == 1.5


@pytest.mark.parametrize("status, expected", [(401, LLMAuthError), (408, LLMTransient), (409, LLMTransient),
                                              (410, LLMBadRequest), (422, LLMBadRequest), (502, LLMTransient)])
def test_openai_status_mapping(status, expected):
    with pytest.raises(expected):
        openai_chat.parse_response(status, {}, b"<html>gateway</html>")


def test_openai_reply_variants():
    def reply(message, finish="stop"):
        body = {"choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}}
        return openai_chat.parse_response(200, {}, json.dumps(body).encode())

    fenced = reply({"role": "assistant", "content": '```json\n{"a": 1}\n```', "refusal": None})
    assert fenced.plan == {"a": 1} and (fenced.input_tokens, fenced.output_tokens) == (11, 5)
    with pytest.raises(LLMRefused):
        reply({"role": "assistant", "content": "{}", "refusal": None}, finish="content_filter")
    with pytest.raises(LLMInvalidReply, match="no text content"):
        reply({"role": "assistant", "content": None, "refusal": None})
    with pytest.raises(LLMInvalidReply, match="no choices"):
        openai_chat.parse_response(200, {}, b'{"choices": []}')


def test_anthropic_quota_and_transient_mapping():
    def error(status, kind, message, headers=None):
        body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "r"}
        return anthropic_messages.parse_response(status, headers or {}, json.dumps(body).encode())

    with pytest.raises(LLMQuotaExceeded):
        error(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API.")
    with pytest.raises(LLMRateLimited) as caught:
        error(429, "rate_limit_error", "slow down", {"retry-after": "12"})
    assert caught.value.retry_after == 12.0
    with pytest.raises(LLMTransient):
        error(529, "overloaded_error", "Overloaded")
    with pytest.raises(LLMAuthError):
        error(401, "authentication_error", "invalid x-api-key")


def test_bedrock_error_type_from_header_or_body():
    with pytest.raises(LLMRateLimited):
        bedrock_converse.parse_response(400, {}, b'{"__type": "com.amazon.coral#ThrottlingException", "message": "x"}')
    with pytest.raises(LLMTransient):
        bedrock_converse.parse_response(424, {"x-amzn-ErrorType": "ModelErrorException:http://x/"}, b'{"message": ""}')
    with pytest.raises(LLMAuthError):
        bedrock_converse.parse_response(403, {"X-Amzn-ErrorType": "ExpiredTokenException"}, b'{"Message": "expired"}')
    with pytest.raises(LLMInvalidReply):
        bedrock_converse.parse_response(200, {}, json.dumps(
            {"output": {"message": {"role": "assistant", "content": []}}, "stopReason": "malformed_tool_use",
             "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}).encode())


# ---- helpers ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, now, expected", [
    ("2", None, 2.0), ("1.5", None, 1.5), (" 0 ", None, 0.0), ("-1", None, None), ("soon", None, None),
    (None, None, None), ("", None, None), ("nan", None, None),
    ("Sun, 22 Nov 2026 12:00:10 GMT", NOW.timestamp(), 10.0),
    ("Sun, 22 Nov 2026 11:00:00 GMT", NOW.timestamp(), 0.0),  # in the past
    ("Sun, 22 Nov 2026 12:00:10 GMT", None, None),  # a date needs `now`
])
def test_parse_retry_after(value, now, expected):
    assert common.parse_retry_after(value, now=now) == expected


def test_header_lookup_is_case_insensitive_over_any_header_container():
    assert common.header({"Retry-After": "3"}, "retry-after") == "3"
    assert common.header([("X-A", "1"), ("retry-after", "4")], "Retry-After") == "4"
    assert common.header(requests.structures.CaseInsensitiveDict({"x": "y"}), "X") == "y"
    assert common.header({}, "x") is None


def test_errors_never_show_a_secret():
    key = "sk-proj-REALKEY1234567890abcdef"
    body = {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error",
                      "param": None, "code": "invalid_api_key"}}
    with pytest.raises(LLMAuthError) as caught:
        openai_chat.parse_response(401, {}, json.dumps(body).encode(), redact=[key])
    assert key not in str(caught.value) and "***" in str(caught.value)
    # Even without `redact`, key-shaped tokens are scrubbed.
    assert key not in errors.scrub(f"bad key {key}") and "AKIAABCDEFGHIJKLMNOP" not in errors.scrub(
        "id AKIAABCDEFGHIJKLMNOP") and "tok123456789" not in errors.scrub("Bearer tok123456789")
    assert len(errors.scrub("x" * 5000)) == errors.MAX_MESSAGE and errors.scrub("a\n  b") == "a b"
    assert issubclass(LLMQuotaExceeded, LLMError) and not LLMQuotaExceeded.retryable and LLMRateLimited.retryable


def test_pricing():
    assert pricing.estimate_cost(1_000_000, 500_000, input_per_million=3.0, output_per_million=15.0) == 10.5
    assert pricing.estimate_cost(1200, 300, input_per_million=0.15, output_per_million=0.6) == pytest.approx(0.00036)
    assert pricing.estimate_cost(10, 10) is None
    assert pricing.estimate_cost(10, 10, input_per_million=1.0) is None  # a cost only when both prices are known
    prices = pricing.Prices(2.5, 10.0)
    assert prices.configured and prices.cost(400, 100) == pytest.approx(0.002)
    assert not pricing.Prices().configured and pricing.Prices().cost(1, 1) is None
    for bad in (dict(input_per_million=-1.0, output_per_million=1.0), dict(input_per_million=float("nan"),
                                                                           output_per_million=1.0)):
        with pytest.raises(ValueError):
            pricing.estimate_cost(1, 1, **bad)
    with pytest.raises(ValueError):
        pricing.estimate_cost(-1, 0, input_per_million=1.0, output_per_million=1.0)
    assert pricing.format_usd(0.00036) == "$0.0004" and pricing.format_usd(12.345) == "$12.35"
    assert pricing.format_usd(None) == "n/a"
