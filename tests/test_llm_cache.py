"""Cheap by construction (issue 28): the system message of two issues' requests is byte-identical for every
provider; Anthropic's carries `cache_control`, Bedrock's a `cachePoint` after it, OpenAI's API gets
`prompt_cache_key` (and a compatible server no unknown field), each request validated against the providers' own
definitions (the SDKs' request types, botocore's service model); cached and written input tokens are read from
each provider's usage fields (replies built on the SDKs' response models and botocore's output shape) and priced
at the cached price; a run over the stand-ins, which cache a marked prefix as the providers document it, counts
them per issue and per run, and a sweep's step summary shows them with the cost."""
from __future__ import annotations

import dataclasses
import json

import pytest
from llm_helpers import client_for, good_answer, issue
from sdk_oracle import botocore_output_problems, botocore_problems, typed_dict_problems

from triage.config.bundle import load_bundle
from triage.llm import anthropic_messages, bedrock_converse, openai_chat
from triage.llm.client import LLMClient, LLMConfig
from triage.llm.pricing import Prices
from triage.planners import plan_issue
from triage.planners.llm import LLMPlanner
from triage.planners.model.prompt import render
from triage.planners.model.schema import SCHEMA_NAME, plan_schema

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pytest.importorskip("botocore")

AWS = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEY000001", "AWS_SECRET_ACCESS_KEY": "very/secret/key",
       "AWS_SESSION_TOKEN": "session-token", "AWS_REGION": "us-east-1"}
TWO = (issue(7, "DDP hangs in all_reduce on 2 nodes", "It hangs."),
       issue(8, "FSDP2 loses gradients", "```python\nfully_shard(model)\n```", comments=(
           {"id": 1, "body": "same here", "user": {"login": "someone", "type": "User"}},)))


def request(provider: str, snapshot, *, base_url: str | None = None, cache: bool = True, mode: str = "auto"):
    bundle = load_bundle()
    prompt = render(snapshot, bundle)
    client = LLMClient(LLMConfig(provider=provider, model="some-model", api_key="sk-test-key-000000",
                                 base_url=base_url, prompt_cache=cache, output_mode=mode), environ=AWS)
    return client.build(prompt.system, prompt.user, plan_schema(bundle), SCHEMA_NAME).json()


def system_of(provider: str, body: dict):
    if provider == "openai":
        return [m for m in body["messages"] if m["role"] == "system"]
    return body["system"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "bedrock"])
def test_two_issues_send_the_same_system_message(provider):
    one, two = (request(provider, s) for s in TWO)
    assert json.dumps(system_of(provider, one)) == json.dumps(system_of(provider, two))
    assert one != two  # the issues differ, in the user message only
    if provider == "openai":
        assert one["messages"][0]["role"] == "system"  # first: the stable prefix OpenAI caches


@pytest.mark.parametrize("mode", ["auto", "tool"])
def test_anthropic_marks_the_system_prompt_for_the_cache(mode):
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    body = request("anthropic", TWO[0], mode=mode)
    assert typed_dict_problems(body, MessageCreateParamsNonStreaming) == []
    (block,) = body["system"]
    assert block["type"] == "text" and block["cache_control"] == {"type": "ephemeral"}
    assert isinstance(request("anthropic", TWO[0], cache=False)["system"], str)  # off: no marker


@pytest.mark.parametrize("mode", ["auto", "tool"])
def test_bedrock_puts_a_cache_point_after_the_system_prompt(mode):
    body = request("bedrock", TWO[0], mode=mode)
    assert botocore_problems(dict(body, modelId="some-model"), "bedrock-runtime", "Converse") == []
    assert [list(b) for b in body["system"]] == [["text"], ["cachePoint"]]
    assert body["system"][1] == {"cachePoint": {"type": "default"}}
    assert request("bedrock", TWO[0], cache=False)["system"] == [body["system"][0]]


def test_openai_gets_a_prompt_cache_key_and_a_compatible_server_no_unknown_field():
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    one, two = request("openai", TWO[0]), request("openai", TWO[1])
    assert typed_dict_problems(one, CompletionCreateParamsNonStreaming) == []
    assert one["prompt_cache_key"] == two["prompt_cache_key"] == openai_chat.cache_key(
        one["messages"][0]["content"])
    assert one["prompt_cache_key"].startswith("ptd-triage-")
    assert "prompt_cache_key" not in request("openai", TWO[0], base_url="http://127.0.0.1:8000/v1")
    assert "prompt_cache_key" not in request("openai", TWO[0], cache=False)


def test_cached_tokens_are_read_from_each_providers_usage_fields():
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    plan = json.dumps({"a": 1})
    completion = ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": plan}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5000, "completion_tokens": 300, "total_tokens": 5300,
                  "prompt_tokens_details": {"cached_tokens": 3968}}}).model_dump_json().encode()
    got = openai_chat.parse_response(200, {}, completion)
    assert (got.input_tokens, got.cached_input_tokens, got.cache_write_tokens, got.output_tokens) == (
        5000, 3968, 0, 300)
    message = Message.model_validate({
        "id": "m", "type": "message", "role": "assistant", "model": "m", "content": [{"type": "text", "text": plan}],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 900, "output_tokens": 300, "cache_read_input_tokens": 4100,
                  "cache_creation_input_tokens": 0}}).model_dump_json().encode()
    got = anthropic_messages.parse_response(200, {}, message)
    assert (got.input_tokens, got.cached_input_tokens, got.cache_write_tokens) == (5000, 4100, 0)
    converse = {"output": {"message": {"role": "assistant", "content": [{"text": plan}]}}, "stopReason": "end_turn",
                "usage": {"inputTokens": 900, "outputTokens": 300, "totalTokens": 5300, "cacheReadInputTokens": 0,
                          "cacheWriteInputTokens": 4100}, "metrics": {"latencyMs": 5}}
    assert botocore_output_problems(converse, "bedrock-runtime", "Converse") == []
    got = bedrock_converse.parse_response(200, {}, json.dumps(converse).encode())
    assert (got.input_tokens, got.cached_input_tokens, got.cache_write_tokens) == (5000, 0, 4100)


def test_the_cost_prices_cached_and_written_tokens_apart():
    prices = Prices(3.0, 15.0).with_cache_ratios(0.1, 1.25)  # Anthropic's published ratios
    assert prices.cached_input_per_million == pytest.approx(0.3) and prices.cache_write_per_million == 3.75
    # 5,000 input (4,100 cached) + 300 output: 900 x 3 + 4,100 x 0.3 + 300 x 15, per million
    assert prices.cost(5000, 300, 4100, 0) == pytest.approx((900 * 3 + 4100 * 0.3 + 300 * 15) / 1e6)
    assert prices.cost(5000, 300, 0, 4100) == pytest.approx((900 * 3 + 4100 * 3.75 + 300 * 15) / 1e6)
    assert Prices(3.0, 15.0, cached_input_per_million=0.5).with_cache_ratios(0.1, 1.25).cached_input_per_million == 0.5
    for provider, ratios in (("openai", (0.1, 1.0)), ("anthropic", (0.1, 1.25)), ("bedrock", (0.1, 1.25))):
        config = LLMConfig(provider=provider, model="m", api_key="k", prices=Prices(2.0, 8.0))
        assert (config.prices.cached_input_per_million, config.prices.cache_write_per_million) == pytest.approx(
            (2.0 * ratios[0], 2.0 * ratios[1])), provider


@pytest.mark.parametrize("stand_in", ["fake_openai", "fake_anthropic", "fake_bedrock"])
def test_a_run_counts_cached_tokens_per_issue_and_per_run(stand_in, request):
    server = request.getfixturevalue(stand_in)
    bundle = load_bundle()
    client = client_for(server)
    client.config = dataclasses.replace(client.config, prices=Prices(2.0, 8.0))
    planner = LLMPlanner(client)
    server.script(good_answer(), good_answer(), good_answer())
    plans = [plan_issue(issue(n, f"FSDP2 fully_shard hangs in all_gather on 2 nodes #{n}"), bundle, planner=planner)
             for n in (1, 2, 3)]
    first, *later = [p.usage for p in plans]
    assert first["cached_input_tokens"] == 0  # nothing cached yet
    for usage in later:  # the same system prompt: read from the cache
        assert usage["cached_input_tokens"] > 3000 and usage["uncached_input_tokens"] < usage["input_tokens"] / 2
        assert usage["cost_usd"] < first["cost_usd"]
    totals = planner.usage_totals()
    assert totals["cached_input_tokens"] == sum(p.usage["cached_input_tokens"] for p in plans)
    assert totals["input_tokens"] == sum(p.usage["input_tokens"] for p in plans)
    assert totals["cost_usd"] == pytest.approx(sum(p.usage["cost_usd"] for p in plans))
    if stand_in != "fake_openai":  # a marked prefix is written once (OpenAI's automatic cache reports no write)
        assert first["cache_write_tokens"] > 3000 and all(u["cache_write_tokens"] == 0 for u in later)


def test_a_sweeps_step_summary_shows_cached_tokens_and_the_cost(fake_github, fake_anthropic, tmp_path):
    """Through the real entrypoint: a dry-run sweep of three issues with the Anthropic stand-in, prices given."""
    from actionrun import FSDP_WITH_REPRO, run_action, schedule_payload, seed_issue

    for number in (41, 42, 43):
        seed_issue(fake_github, number, FSDP_WITH_REPRO)
    fake_anthropic.script(good_answer(), good_answer(), good_answer())
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={
        "planner": "llm", "llm-provider": "anthropic", "llm-model": "claude-test", "llm-base-url": fake_anthropic.url,
        "llm-api-key": fake_anthropic.api_key, "llm-price-input": "3", "llm-price-output": "15", "dry-run": "true"})
    assert run.returncode == 0, run.stdout + run.stderr
    calls = fake_anthropic.answered
    assert len(calls) == 3 and all(c.body["system"][0]["cache_control"] == {"type": "ephemeral"} for c in calls)
    summary = run.summary.replace("\\", "")  # markdown escapes aside
    line = next(l for l in summary.splitlines() if "model: asked on 3 issue(s)" in l)
    cached = [int(c.response["usage"]["cache_read_input_tokens"]) for c in calls]
    written = [int(c.response["usage"]["cache_creation_input_tokens"]) for c in calls]
    assert cached[0] == 0 and cached[1] > 3000 and written[0] > 3000
    assert f"({sum(cached)} cached, {sum(written)} written to the cache)" in line and "estimated cost $" in line
    from summaryhtml import read

    blocks, _ = read(run.summary)
    per_issue = [dict(zip(b.header, b.rows[0])) for b in blocks if b.tag == "table" and b.header[:1] == ["Model"]]
    assert [int(row["of them cached"].replace(",", "")) for row in per_issue] == cached  # per issue, in its table
    assert [int(row["written to the cache"].replace(",", "")) for row in per_issue] == written


def test_the_cache_options_reach_the_request_and_bad_ones_are_one_line(fake_anthropic, tmp_path):
    """`--llm-prompt-cache off` (the Action's `llm-prompt-cache: false`) sends no cache point; a cached price without
    the other prices is refused in one line, before any call."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from triage.action.settings import ActionError, llm_settings

    root = Path(__file__).resolve().parents[1]
    snapshot = tmp_path / "issue.json"
    snapshot.write_text(json.dumps({"issue": {"number": 5, "title": "DDP hangs", "body": "all_reduce hangs",
                                              "labels": [{"name": "oncall: distributed"}],
                                              "user": {"login": "r", "type": "User"}}}), encoding="utf-8")
    env = dict(os.environ, ANTHROPIC_API_KEY=fake_anthropic.api_key)
    base = [sys.executable, "-m", "triage", "plan", str(snapshot), "--planner", "llm", "--llm-provider", "anthropic",
            "--llm-model", "m", "--llm-base-url", fake_anthropic.url]
    fake_anthropic.script(good_answer())
    run = subprocess.run(base + ["--llm-prompt-cache", "off"], cwd=root, env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert isinstance(fake_anthropic.answered[-1].body["system"], str)
    refused = subprocess.run(base + ["--llm-price-cached-input", "0.3"], cwd=root, env=env, capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2 and "--llm-price-cached-input needs --llm-price IN OUT" in refused.stderr
    assert len(fake_anthropic.answered) == 1
    inputs = {"INPUT_PLANNER": "llm", "INPUT_LLM_PROMPT_CACHE": "false", "INPUT_LLM_PRICE_INPUT": "3",
              "INPUT_LLM_PRICE_OUTPUT": "15", "INPUT_LLM_PRICE_CACHED_INPUT": "0.25"}
    settings = llm_settings(inputs)
    assert settings["llm_prompt_cache"] is False and settings["llm_price_cached_input"] == 0.25
    with pytest.raises(ActionError, match="llm-price-cached-input needs llm-price-input"):
        llm_settings({"INPUT_LLM_PRICE_CACHED_INPUT": "0.25"})
    with pytest.raises(ActionError, match="llm-prompt-cache must be true or false"):
        llm_settings({"INPUT_LLM_PROMPT_CACHE": "maybe"})


def test_a_bedrock_model_that_refuses_the_cache_point_says_how_to_turn_it_off():
    from triage.llm.errors import LLMAuthError, LLMBadRequest

    body = json.dumps({"message": "You invoked an unsupported model or your request did not allow prompt caching."})
    for name, status, error in (("ValidationException", 400, LLMBadRequest), ("AccessDeniedException", 403,
                                                                               LLMAuthError)):
        with pytest.raises(error) as caught:
            bedrock_converse.parse_response(status, {"x-amzn-ErrorType": name}, body.encode())
        assert "set llm-prompt-cache: false (--llm-prompt-cache off)" in str(caught.value)
    with pytest.raises(LLMBadRequest) as other:
        bedrock_converse.parse_response(400, {"x-amzn-ErrorType": "ValidationException"}, b'{"message": "bad"}')
    assert "llm-prompt-cache" not in str(other.value)
