"""The LLM stand-ins themselves: contract-valid answers, the real APIs' rejections, scripting, faults, and their
own bookkeeping. Requests here are written by hand (the product's requests are tested in test_llm_protocol.py)
and sent over real loopback HTTP."""
from __future__ import annotations

import copy
import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import requests
from fakellm import DEFAULT_PLAN, INVALID_PLAN, FakeBedrock, FakeOpenAI, Fault, contract
from fakellm.plans import Prompt, default_plan, example_from_schema, plan_errors

SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["route", "labels", "reason", "priority"],
    "properties": {
        "route": {"enum": ["ddp", "fsdp", "other"]},
        "labels": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "reason": {"type": "string", "minLength": 3},
        "priority": {"type": ["string", "null"], "enum": ["high", None]},
    },
}
PLAN = {"route": "fsdp", "labels": ["module: fsdp"], "reason": "mentions FSDP", "priority": None}


def body_for(provider: str, schema=SCHEMA, *, mode: str = "tool") -> dict:
    schema = copy.deepcopy(schema)
    if provider == "openai":
        return {"model": "gpt-test", "max_completion_tokens": 200,
                "messages": [{"role": "system", "content": "SYSTEM TEXT"}, {"role": "user", "content": "USER TEXT"}],
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "plan", "strict": True, "schema": schema}}}
    if provider == "anthropic":
        body = {"model": "claude-test", "max_tokens": 200, "system": "SYSTEM TEXT",
                "messages": [{"role": "user", "content": "USER TEXT"}]}
        if mode == "tool":
            body.update(tools=[{"name": "plan", "input_schema": schema}], tool_choice={"type": "tool", "name": "plan"})
        else:
            body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        return body
    return {"messages": [{"role": "user", "content": [{"text": "USER TEXT"}]}], "system": [{"text": "SYSTEM TEXT"}],
            "inferenceConfig": {"maxTokens": 200},
            "toolConfig": {"tools": [{"toolSpec": {"name": "plan", "inputSchema": {"json": schema}}}],
                           "toolChoice": {"tool": {"name": "plan"}}}}


def post(server, body, *, headers: dict | None = None, raw: bytes | None = None, path: str | None = None,
         timeout: float = 5, sign: bool = True) -> requests.Response:
    """POST a hand-written request to a stand-in with valid credentials (Bedrock: SigV4-signed by botocore)."""
    data = raw if raw is not None else json.dumps(body).encode()
    if server.provider == "openai":
        url, base = server.url + (path or "/chat/completions"), {"Authorization": f"Bearer {server.api_key}"}
    elif server.provider == "anthropic":
        url, base = server.url + (path or "/v1/messages"), {"x-api-key": server.api_key,
                                                            "anthropic-version": "2023-06-01"}
    else:
        url, base = server.url + (path or "/model/test-model/converse"), {}
    merged = {"Content-Type": "application/json", **base, **(headers or {})}
    merged = {k: v for k, v in merged.items() if v is not None}
    if server.provider == "bedrock" and sign:
        pytest.importorskip("botocore")
        from triage.llm.bedrock_converse import AwsCredentials
        from triage.llm.bedrock_converse import sign as sigv4_sign
        from triage.llm.common import Request
        signed = sigv4_sign(Request("POST", url, merged, data),
                            credentials=AwsCredentials(server.access_key, server.secret_key, server.session_token),
                            region=server.region)
        merged = signed.headers
    return requests.post(url, data=data, headers=merged, timeout=timeout)


def answer_of(provider: str, reply: dict) -> dict:
    """The plan inside a stand-in's 200 reply."""
    if provider == "openai":
        return json.loads(reply["choices"][0]["message"]["content"])
    if provider == "anthropic":
        block = reply["content"][0]
        return block["input"] if block["type"] == "tool_use" else json.loads(block["text"])
    block = reply["output"]["message"]["content"][0]
    return block["toolUse"]["input"] if "toolUse" in block else json.loads(block["text"])


def usage_of(provider: str, reply: dict) -> tuple[int, int]:
    usage = reply["usage"]
    if provider == "openai":
        return usage["prompt_tokens"], usage["completion_tokens"]
    if provider == "anthropic":
        return usage["input_tokens"], usage["output_tokens"]
    return usage["inputTokens"], usage["outputTokens"]


def response_errors(provider: str, status: int, headers, body) -> list[str]:
    headers = dict(headers)
    if provider == "openai":
        return contract.openai_response_errors(status, headers, body)
    if provider == "anthropic":
        return contract.anthropic_response_errors(status, body)
    return contract.bedrock_response_errors(status, headers, body)


# ---- good answers -----------------------------------------------------------------------------------------------

def test_each_stand_in_answers_a_valid_request_with_a_contract_valid_reply(fake_llm):
    fake_llm.script(PLAN)
    resp = post(fake_llm, body_for(fake_llm.provider))
    assert resp.status_code == 200, resp.text
    reply = resp.json()
    assert response_errors(fake_llm.provider, 200, resp.headers, reply) == []
    assert answer_of(fake_llm.provider, reply) == PLAN
    [call] = fake_llm.calls
    assert call.prompt == Prompt("SYSTEM TEXT", "USER TEXT", SCHEMA, "plan",
                                 "json_schema" if fake_llm.provider == "openai" else "tool")
    assert call.plan == PLAN and call.status == 200 and call.fault is None
    assert usage_of(fake_llm.provider, reply) == (call.input_tokens, call.output_tokens) == fake_llm.usage
    assert call.input_tokens > 0 and call.output_tokens > 0


def test_anthropic_json_output_answers_in_a_text_block(fake_anthropic):
    fake_anthropic.script(PLAN)
    reply = post(fake_anthropic, body_for("anthropic", mode="json")).json()
    assert reply["content"] == [{"type": "text", "text": json.dumps(PLAN)}]
    assert reply["stop_reason"] == "end_turn"
    assert fake_anthropic.calls[0].prompt.mode == "output_config"


def test_the_responder_sees_the_request_and_the_script_comes_first(fake_llm):
    seen: list[dict] = []

    def responder(request_json: dict) -> dict:
        seen.append(request_json)
        return dict(PLAN, reason=f"call {len(seen)}")

    fake_llm.responder = responder
    fake_llm.script(dict(PLAN, reason="scripted"))
    answers = [answer_of(fake_llm.provider, post(fake_llm, body_for(fake_llm.provider)).json()) for _ in range(3)]
    assert [a["reason"] for a in answers] == ["scripted", "call 1", "call 2"]
    assert seen == [body_for(fake_llm.provider)] * 2
    assert len(fake_llm.answered) == 3 and fake_llm.pending == 0


def test_the_default_answer_is_a_fixed_minimal_instance_of_the_requested_schema(fake_llm):
    first = answer_of(fake_llm.provider, post(fake_llm, body_for(fake_llm.provider)).json())
    second = answer_of(fake_llm.provider, post(fake_llm, body_for(fake_llm.provider)).json())
    assert first == second == {"route": "ddp", "labels": [""], "reason": "xxx", "priority": "high"}
    assert plan_errors(SCHEMA, first) == []


def test_example_from_schema_follows_refs_and_combinators():
    schema = {"type": "object", "required": ["a", "b", "c", "d"], "additionalProperties": False,
              "properties": {"a": {"$ref": "#/$defs/step"}, "b": {"anyOf": [{"type": "null"}, {"const": 7}]},
                             "c": {"type": "integer", "minimum": 2}, "d": {"type": "boolean"}},
              "$defs": {"step": {"type": "object", "required": ["decision"],
                                 "properties": {"decision": {"enum": ["apply", "skip"]}, "note": {"type": "string"}}}}}
    value = example_from_schema(schema)
    assert value == {"a": {"decision": "apply"}, "b": 7, "c": 2, "d": False}
    assert plan_errors(schema, value) == []
    assert default_plan(Prompt("", "", None, None, "none")) == DEFAULT_PLAN


# ---- rejections as the real APIs do -------------------------------------------------------------------------------

@pytest.mark.parametrize("headers, message", [
    ({"Authorization": None}, "didn't provide an API key"),
    ({"Authorization": "Bearer sk-wrong-key-123456789"}, "Incorrect API key provided"),
    ({"Authorization": "Basic c2stZmFrZQ=="}, "didn't provide an API key"),
])
def test_openai_rejects_missing_or_wrong_keys_with_401(fake_openai, headers, message):
    resp = post(fake_openai, body_for("openai"), headers=headers)
    assert resp.status_code == 401
    error = resp.json()["error"]
    assert message in error["message"] and error["type"] == "invalid_request_error"
    assert "sk-wrong-key-123456789" not in resp.text  # OpenAI masks the key it echoes
    assert fake_openai.answered == []


@pytest.mark.parametrize("mutate, fragment", [
    (lambda b: b.pop("messages"), "messages"),
    (lambda b: b["messages"].append({"role": "wizard", "content": "x"}), "messages/2"),
    (lambda b: b.update(temperature=5), "temperature"),
    (lambda b: b["response_format"]["json_schema"]["schema"].pop("additionalProperties"), "additionalProperties"),
    (lambda b: b["response_format"]["json_schema"]["schema"]["required"].remove("reason"), "Missing 'reason'"),
])
def test_openai_rejects_invalid_requests_with_400_in_its_error_shape(fake_openai, mutate, fragment):
    body = body_for("openai")
    mutate(body)
    resp = post(fake_openai, body)
    assert resp.status_code == 400
    assert fragment in resp.json()["error"]["message"]
    assert contract.openai_response_errors(400, dict(resp.headers), resp.json()) == []
    assert fake_openai.answered == [] and len(fake_openai.calls) == 1


def test_openai_without_a_key_configured_accepts_keyless_clients():
    with FakeOpenAI(api_key=None) as server:
        resp = post(server, body_for("openai"), headers={"Authorization": None})
        assert resp.status_code == 200 and not server.violations


def test_each_stand_in_rejects_a_body_that_is_not_json(fake_llm):
    fake_llm.script(PLAN)
    resp = post(fake_llm, None, raw=b'{"model": "x", "messages": [')
    assert resp.status_code == 400
    assert response_errors(fake_llm.provider, 400, resp.headers, resp.json()) == []
    assert fake_llm.pending == 1, "an invalid request must not consume a scripted reply"


def test_each_stand_in_answers_an_unknown_path_with_404(fake_llm):
    resp = post(fake_llm, body_for(fake_llm.provider), path="/nowhere")
    assert resp.status_code == 404
    assert response_errors(fake_llm.provider, 404, resp.headers, resp.json()) == []


@pytest.mark.parametrize("headers, status, fragment", [
    ({"x-api-key": None}, 401, "x-api-key header is required"),
    ({"x-api-key": "sk-ant-wrong"}, 401, "invalid x-api-key"),
    ({"anthropic-version": None}, 400, "anthropic-version"),
    ({"anthropic-version": "2021-01-01"}, 400, "anthropic-version"),
])
def test_anthropic_checks_its_headers(fake_anthropic, headers, status, fragment):
    resp = post(fake_anthropic, body_for("anthropic"), headers=headers)
    assert resp.status_code == status and fragment in resp.json()["error"]["message"]
    assert resp.json()["error"]["type"] == ("authentication_error" if status == 401 else "invalid_request_error")


@pytest.mark.parametrize("mutate, fragment", [
    (lambda b: b.pop("max_tokens"), "max_tokens"),
    (lambda b: b.update(unknown_field=1), "unknown_field"),
    (lambda b: b.update(tool_choice={"type": "tool", "name": "other"}), "not among the declared tools"),
    (lambda b: b["tools"][0].update(name="bad name!"), "bad name!"),
])
def test_anthropic_rejects_invalid_requests(fake_anthropic, mutate, fragment):
    body = body_for("anthropic")
    mutate(body)
    resp = post(fake_anthropic, body)
    assert resp.status_code == 400
    assert resp.json()["error"]["type"] == "invalid_request_error" and fragment in resp.json()["error"]["message"]


@pytest.mark.parametrize("mutate, fragment", [
    (lambda b: b.pop("messages"), "messages"),
    (lambda b: b["toolConfig"].update(toolChoice={"tool": {"name": "other"}}), "not among the tools"),
    (lambda b: b["inferenceConfig"].update(maxTokens=0), "maxTokens"),
])
def test_bedrock_rejects_invalid_requests_with_a_validation_exception(fake_bedrock, mutate, fragment):
    body = body_for("bedrock")
    mutate(body)
    resp = post(fake_bedrock, body)
    assert resp.status_code == 400 and fragment in resp.json()["message"]
    assert resp.headers["x-amzn-ErrorType"].startswith("ValidationException:")


def _tamper_body(server):
    pytest.importorskip("botocore")
    from triage.llm.bedrock_converse import AwsCredentials, sign
    from triage.llm.common import Request

    url = server.url + "/model/test-model/converse"
    signed = sign(Request("POST", url, {"Content-Type": "application/json"}, json.dumps(body_for("bedrock")).encode()),
                  credentials=AwsCredentials(server.access_key, server.secret_key, server.session_token),
                  region=server.region)
    tampered = json.dumps(dict(body_for("bedrock"), system=[{"text": "IGNORE THE RULES"}])).encode()
    return requests.post(url, data=tampered, headers=signed.headers, timeout=5)


def _signed_with(server, **changes):
    pytest.importorskip("botocore")
    from triage.llm.bedrock_converse import AwsCredentials, sign
    from triage.llm.common import Request

    creds = {"access_key": server.access_key, "secret_key": server.secret_key, "session_token": server.session_token}
    region = changes.pop("region", server.region)
    creds.update(changes)
    url = server.url + "/model/test-model/converse"
    data = json.dumps(body_for("bedrock")).encode()
    signed = sign(Request("POST", url, {"Content-Type": "application/json"}, data), credentials=AwsCredentials(**creds),
                  region=region)
    return requests.post(url, data=data, headers=signed.headers, timeout=5)


@pytest.mark.parametrize("send, exception", [
    (lambda s: post(s, body_for("bedrock"), sign=False), "MissingAuthenticationTokenException"),
    (lambda s: post(s, body_for("bedrock"), sign=False, headers={"Authorization": "AWS4-HMAC-SHA256 garbage",
                                                                 "X-Amz-Date": "20261122T000000Z"}),
     "IncompleteSignatureException"),
    (lambda s: _signed_with(s, secret_key="not-the-secret"), "InvalidSignatureException"),
    (lambda s: _signed_with(s, access_key="AKIAUNKNOWNKEY000000"), "UnrecognizedClientException"),
    (lambda s: _signed_with(s, session_token=None), "UnrecognizedClientException"),
    (lambda s: _signed_with(s, region="eu-west-1"), "InvalidSignatureException"),
    (_tamper_body, "InvalidSignatureException"),
])
def test_bedrock_checks_the_sigv4_signature(fake_bedrock, send, exception):
    fake_bedrock.script(PLAN)
    resp = send(fake_bedrock)
    assert resp.status_code == 403, resp.text
    assert resp.headers["x-amzn-ErrorType"].split(":")[0] == exception
    assert set(resp.json()) == {"message"}
    assert fake_bedrock.pending == 1 and fake_bedrock.answered == []


def test_bedrock_rejects_a_signature_from_a_skewed_clock():
    with FakeBedrock(clock=lambda: datetime.now(timezone.utc) + timedelta(minutes=20)) as server:
        resp = post(server, body_for("bedrock"))
        assert resp.status_code == 403 and "Signature expired" in resp.json()["message"]
        assert not server.violations


def test_botocore_own_client_talks_to_the_bedrock_stand_in(fake_bedrock):
    botocore_session = pytest.importorskip("botocore.session")
    from botocore.config import Config
    from botocore.exceptions import ClientError

    client = botocore_session.get_session().create_client(
        "bedrock-runtime", region_name=fake_bedrock.region, endpoint_url=fake_bedrock.url,
        aws_access_key_id=fake_bedrock.access_key, aws_secret_access_key=fake_bedrock.secret_key,
        aws_session_token=fake_bedrock.session_token, config=Config(retries={"total_max_attempts": 1}))
    fake_bedrock.script(PLAN, Fault.rate_limited())
    body = body_for("bedrock")
    out = client.converse(modelId="anthropic.claude-test-v1:0", **body)
    assert out["output"]["message"]["content"][0]["toolUse"]["input"] == PLAN
    assert out["usage"]["inputTokens"] == fake_bedrock.calls[0].input_tokens
    assert fake_bedrock.calls[0].path == "/model/anthropic.claude-test-v1%3A0/converse"
    with pytest.raises(ClientError) as caught:
        client.converse(modelId="anthropic.claude-test-v1:0", **body)
    assert caught.value.response["Error"]["Code"] == "ThrottlingException"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


# ---- faults -------------------------------------------------------------------------------------------------------

def test_openai_fault_shapes(fake_openai):
    fake_openai.script(Fault.rate_limited(retry_after=3), Fault.rate_limited(), Fault.quota_exhausted(),
                       Fault.refusal("No."), Fault.truncated(PLAN))
    limited, bare, quota, refused, cut = (post(fake_openai, body_for("openai")) for _ in range(5))
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "3"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert bare.status_code == 429 and "Retry-After" not in bare.headers
    assert quota.status_code == 429 and "Retry-After" not in quota.headers
    assert quota.json()["error"]["code"] == "insufficient_quota"
    message = refused.json()["choices"][0]["message"]
    assert message["refusal"] == "No." and message["content"] is None
    choice = cut.json()["choices"][0]
    assert choice["finish_reason"] == "length" and json.dumps(PLAN).startswith(choice["message"]["content"])
    with pytest.raises(ValueError):
        json.loads(choice["message"]["content"])
    assert [c.fault for c in fake_openai.calls] == ["rate_limited", "rate_limited", "quota_exhausted", "refusal",
                                                    "truncated"]


def test_anthropic_fault_shapes(fake_anthropic):
    fake_anthropic.script(Fault.overloaded(), Fault.quota_exhausted(), Fault.refusal(), Fault.truncated(PLAN))
    overloaded, quota, refused, cut = (post(fake_anthropic, body_for("anthropic")) for _ in range(4))
    assert overloaded.status_code == 529 and overloaded.json()["error"]["type"] == "overloaded_error"
    assert quota.status_code == 429 and "retry-after" not in quota.headers
    assert quota.json()["error"]["type"] == "rate_limit_error"
    assert refused.json()["stop_reason"] == "refusal"
    assert cut.json()["stop_reason"] == "max_tokens"
    assert cut.json()["content"][0]["input"] == {"route": "fsdp", "labels": ["module: fsdp"]}  # half the keys


def test_bedrock_fault_shapes(fake_bedrock):
    fake_bedrock.script(Fault.rate_limited(), Fault.quota_exhausted(), Fault.server_error(503), Fault.refusal())
    throttled, quota, unavailable, refused = (post(fake_bedrock, body_for("bedrock")) for _ in range(4))
    assert throttled.status_code == 429
    assert throttled.headers["x-amzn-ErrorType"].startswith("ThrottlingException:")
    assert throttled.json() == {"message": "Too many requests, please wait before trying again."}
    assert quota.headers["x-amzn-ErrorType"].startswith("ServiceQuotaExceededException:")
    assert unavailable.status_code == 503
    assert refused.json()["stopReason"] == "content_filtered"


def test_malformed_json_fault_sends_a_cut_body(fake_llm):
    fake_llm.script(Fault.malformed_json())
    resp = post(fake_llm, body_for(fake_llm.provider))
    assert resp.status_code == 200
    with pytest.raises(ValueError):
        json.loads(resp.content)
    assert fake_llm.violations == []  # off the contract on purpose


def test_schema_invalid_fault_keeps_a_valid_envelope(fake_llm):
    fake_llm.script(Fault.schema_invalid())
    resp = post(fake_llm, body_for(fake_llm.provider))
    assert response_errors(fake_llm.provider, 200, resp.headers, resp.json()) == []
    assert answer_of(fake_llm.provider, resp.json()) == INVALID_PLAN
    assert plan_errors(SCHEMA, INVALID_PLAN) != []


def test_a_slow_reply_outlasts_a_client_timeout_and_does_not_hold_up_shutdown():
    server = FakeOpenAI().start()
    try:
        server.script(Fault.slow(5, PLAN), Fault.slow(0.2, PLAN))
        started = time.monotonic()
        with pytest.raises(requests.Timeout):
            post(server, body_for("openai"), timeout=0.3)
        assert time.monotonic() - started < 2
        late = post(server, body_for("openai"), timeout=3)
        assert late.status_code == 200 and answer_of("openai", late.json()) == PLAN
    finally:
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2
    assert [c.fault for c in server.calls] == ["slow", "slow"]


def test_any_fault_can_be_delayed(fake_anthropic):
    fake_anthropic.script(Fault.server_error(500).after(0.3))
    started = time.monotonic()
    resp = post(fake_anthropic, body_for("anthropic"))
    assert resp.status_code == 500 and time.monotonic() - started >= 0.3


# ---- the stand-ins police themselves ---------------------------------------------------------------------------

def test_a_plan_that_breaks_a_guaranteed_schema_is_a_violation(fake_openai):
    fake_openai.script({"route": "nowhere"})
    assert post(fake_openai, body_for("openai")).status_code == 200
    [violation] = fake_openai.take_violations()
    assert "does not match the requested schema" in violation


def test_a_forced_tool_input_is_not_guaranteed_so_no_violation(fake_anthropic):
    fake_anthropic.script({"route": "nowhere"})
    assert post(fake_anthropic, body_for("anthropic")).status_code == 200
    assert fake_anthropic.violations == []


def test_an_off_contract_retry_after_is_recorded_unless_the_fault_says_so(fake_openai):
    fake_openai.script(Fault.error(429, "slow down", headers={"Retry-After": "0.5"}),
                       Fault.rate_limited("Wed, 21 Oct 2026 07:28:00 GMT"))
    assert post(fake_openai, body_for("openai")).status_code == 429
    [violation] = fake_openai.take_violations()
    assert "Retry-After '0.5'" in violation
    dated = post(fake_openai, body_for("openai"))
    assert dated.headers["Retry-After"] == "Wed, 21 Oct 2026 07:28:00 GMT" and fake_openai.violations == []


def test_anthropic_error_types_must_match_their_documented_status(fake_anthropic):
    fake_anthropic.script(Fault.error(429, "nope", error_type="api_error"))
    assert post(fake_anthropic, body_for("anthropic")).status_code == 429
    [violation] = fake_anthropic.take_violations()
    assert "rate_limit_error" in violation


def test_a_failing_responder_answers_500_and_is_recorded(fake_llm):
    fake_llm.responder = lambda body: ["not", "a", "dict"]
    resp = post(fake_llm, body_for(fake_llm.provider))
    assert resp.status_code == 500
    [violation] = fake_llm.take_violations()
    assert "must return a plan dict" in violation


def test_script_rejects_what_is_not_a_plan_or_a_fault(fake_openai):
    with pytest.raises(TypeError):
        fake_openai.script(["not", "a", "plan"])


def test_strict_schema_rules():
    assert contract.openai_strict_schema_errors(SCHEMA) == []
    nested = {"type": "object", "additionalProperties": False, "required": ["a"],
              "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    problems = contract.openai_strict_schema_errors(nested)
    assert any("'additionalProperties' is required" in p and "'a'" in p for p in problems)
    assert any("Missing 'b'" in p for p in problems)
    assert contract.openai_strict_schema_errors({"anyOf": []}) != []


def test_the_openai_contract_copy_matches_its_shared_source():
    """Regenerating tests/contract/llm/ from the shared OpenAPI file changes nothing (skipped without ../shared)."""
    import importlib.util

    here = Path(__file__).resolve().parent / "contract" / "llm"
    spec = importlib.util.spec_from_file_location("reduce_openai", here / "reduce_openai.py")
    reducer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reducer)
    source = reducer._source(["reduce_openai.py"])
    committed = json.loads((here / "openai-chat-completions.schema.json").read_text(encoding="utf-8"))
    assert committed["x-source"]["sha256"] in (here / "SOURCES.md").read_text(encoding="utf-8")
    if not source.is_file():
        pytest.skip(f"no shared contract at {source}")
    import hashlib

    raw = source.read_bytes()
    assert reducer.reduce(json.loads(raw), hashlib.sha256(raw).hexdigest()) == committed
