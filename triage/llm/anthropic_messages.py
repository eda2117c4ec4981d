"""Anthropic Messages with structured output, sans I/O: `build_request` and `parse_response`.

Two ways to get the plan: `mode="json_schema"` (the default) asks for `output_config.format` json_schema, as
Anthropic documents structured outputs today: the answer is the `text` block; `mode="tool"` (only when a user
chooses it, for an older model without structured outputs) declares one tool whose `input_schema` is the plan
schema and forces it (`tool_choice: {"type": "tool", "name": ...}`): the answer is that `tool_use` block's
`input`. Current models reject a forced tool choice with HTTP 400, which is why it is never the default.

Prompt caching: with the cache on, the system prompt (the same for every issue of a queue) is one text block with
`cache_control: {"type": "ephemeral"}`, so it (and the output schema or tool before it) is written to the cache
once and read from it by the next issues; `usage.input_tokens` then counts only what came after the cache point,
and `cache_read_input_tokens` / `cache_creation_input_tokens` the rest.

Errors are classified as the `anthropic` SDK classifies them (its `_exceptions.py` and `_should_retry`): the
status, `x-should-retry`, and `error.details.error_code`, which names a reached spend limit or a billing problem:
never retried, whatever the status or `retry-after` say. `PROTOCOL` declares it for the registry
(`triage.llm.providers`). Imports: the standard library and `triage.llm.common/errors` only.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .common import (Headers, Provider, reply_object, Reply, Request, as_count, check_common, check_name,
                     encode_json, error_for_status, header, output_mode, plan_from_text, reply_of, retry_after,
                     usage_tokens)
from .errors import (LLMAuthError, LLMContextExceeded, LLMError, LLMInvalidReply, LLMNoAnswer, LLMQuotaExceeded,
                     LLMRateLimited, LLMRefused, LLMTransient, LLMTruncated)

PROVIDER = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
# What the `anthropic` Python SDK sends (anthropic._constants.ANTHROPIC_API_VERSION in anthropic 2.12.0);
# tests/test_llm_sdk_contract.py fails when the installed SDK sends another.
API_VERSION = "2026-10-21"
TOOL_DESCRIPTION = "Record the triage plan for the issue. Call this exactly once with the complete plan."
# Published prices: a cache read costs 0.1 of an input token, a 5-minute cache write 1.25.
CACHE_READ_RATIO, CACHE_WRITE_RATIO = 0.1, 1.25
# `error.details.error_code` values (anthropic.types.shared.*ErrorDetails) that need a person: a spend limit or a
# billing problem. Never retried, even on a 429 with retry-after. (`ramp_limit_exceeded` is a rate limit: the SDK's
# docs say retry after `retry-after`.)
QUOTA_CODES = frozenset({"contract_spend_limit_reached", "enforced_spend_limit_reached",
                         "linked_organization_spend_limit_reached", "linked_organization_billing_unavailable",
                         "user_profile_not_billable", "user_profile_billing_not_authorized"})
AUTH_CODES = frozenset({"organization_on_hold"})
_QUOTA_HINTS = ("spend limit", "credit balance", "usage limit", "billing")
_CONTEXT_HINTS = ("prompt is too long", "context window", "context length", "too many tokens")


def build_request(*, model: str, system: str, user: str, schema: Mapping[str, Any], schema_name: str,
                  max_tokens: int, base_url: str = DEFAULT_BASE_URL, api_key: str,
                  mode: Literal["auto", "json_schema", "tool"] = "json_schema",
                  temperature: float | None = None, cache: bool = False) -> Request:
    """POST {base_url}/v1/messages (base_url without /v1, e.g. "https://api.anthropic.com"). No tool is forced
    unless `mode="tool"`. `cache`: the system prompt is a cache point (`cache_control`)."""
    check_common(model, max_tokens, schema)
    check_name(schema_name)
    if not api_key:
        raise ValueError("api_key is required")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
                            if cache else system,
                            "messages": [{"role": "user", "content": user}]}
    if output_mode(mode) == "tool":
        body["tools"] = [{"name": schema_name, "description": TOOL_DESCRIPTION, "input_schema": dict(schema)}]
        body["tool_choice"] = {"type": "tool", "name": schema_name}
    else:
        body["output_config"] = {"format": {"type": "json_schema", "schema": dict(schema)}}
    if temperature is not None:
        body["temperature"] = temperature
    headers = {"x-api-key": api_key, "anthropic-version": API_VERSION, "content-type": "application/json",
               "accept": "application/json"}
    return Request("POST", base_url.rstrip("/") + "/v1/messages", headers, encode_json(body))


def parse_response(status: int, headers: Headers, body: bytes, *, now: float | None = None,
                   redact: Iterable[str] = ()) -> Reply:
    """The plan object of a 2xx reply (a `tool_use` block's input, else the text blocks' JSON), or the typed error
    the response means. A 429 without `retry-after` is a spend limit (LLMQuotaExceeded), as Anthropic documents."""
    data = reply_object(status, headers, body, _error, provider=PROVIDER, now=now, redact=redact)

    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tokens = usage_tokens(as_count(usage.get("input_tokens")), as_count(usage.get("output_tokens")),
                          cached=as_count(usage.get("cache_read_input_tokens")),
                          written=as_count(usage.get("cache_creation_input_tokens")))
    stop = data.get("stop_reason")
    content = data.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
    if stop == "refusal":
        raise LLMRefused(f"the model refused{': ' + text if text else ''}", provider=PROVIDER, status=status,
                         redact=redact, **tokens)
    if stop == "max_tokens":
        raise LLMTruncated("the reply hit the output-token limit (stop_reason: max_tokens)", provider=PROVIDER,
                           status=status, **tokens)
    if stop == "model_context_window_exceeded":
        raise LLMContextExceeded("the prompt and answer exceed the model's context window (stop_reason: "
                                 "model_context_window_exceeded)", provider=PROVIDER, status=status, **tokens)
    if stop == "pause_turn":
        raise LLMNoAnswer("the model paused its turn without an answer (stop_reason: pause_turn)",
                          provider=PROVIDER, status=status, **tokens)
    for block in blocks:
        if block.get("type") == "tool_use":
            plan = block.get("input")
            if not isinstance(plan, dict):
                raise LLMInvalidReply("the tool_use input is not a JSON object", provider=PROVIDER, status=status,
                                      **tokens)
            return reply_of(plan, tokens, json.dumps(plan, ensure_ascii=False))
    if not text.strip():
        raise LLMNoAnswer(f"the reply has no answer (stop_reason: {str(stop)[:40]}, no text)", provider=PROVIDER,
                          status=status, **tokens)
    plan = plan_from_text(text, provider=PROVIDER, **tokens)
    return reply_of(plan, tokens, text)


def error_code(data: Any) -> str:
    """`error.details.error_code`, as the SDK's `extract_error_code` reads it ("" when absent)."""
    err = data.get("error") if isinstance(data, dict) else None
    details = err.get("details") if isinstance(err, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else ""


def _error(status: int, headers: Headers, data: Any, *, now: float | None, redact: Iterable[str]) -> LLMError:
    err = data.get("error") if isinstance(data, dict) else None
    err = err if isinstance(err, dict) else {}
    err_type, message = str(err.get("type") or ""), str(err.get("message") or f"HTTP {status}")
    detail = f"{err_type}: {message}" if err_type else message
    code = error_code(data)
    detail = f"{detail} (error_code: {code})" if code else detail
    kw = {"provider": PROVIDER, "status": status, "redact": redact}
    lowered = message.lower()
    if code in QUOTA_CODES or err_type == "billing_error" or status == 402:
        return LLMQuotaExceeded(detail, **kw)
    if code in AUTH_CODES:
        return LLMAuthError(detail, **kw)
    if code == "ramp_limit_exceeded":
        return LLMRateLimited(detail, retry_after=retry_after(headers, now=now), **kw)
    if (status == 429 and header(headers, "retry-after") is None) or (
            status in (400, 403, 429) and any(hint in lowered for hint in _QUOTA_HINTS)):
        return LLMQuotaExceeded(detail, **kw)  # the documented shape of a spend limit without an error_code
    if status == 413 or err_type == "request_too_large" or (
            status == 400 and any(hint in lowered for hint in _CONTEXT_HINTS)):
        return LLMContextExceeded(detail, **kw)
    if err_type in ("overloaded_error", "api_error", "timeout_error") or status == 529:
        return LLMTransient(detail, **kw)
    return error_for_status(status, detail, provider=PROVIDER, headers=headers, now=now, redact=redact)


def request_for(config: Any, environ: Mapping[str, str], **call: Any) -> Request:
    """The request for one call of a client configured with `config` (`triage.llm.client.LLMConfig`)."""
    return build_request(**call, api_key=config.api_key or "none", mode=config.mode,
                         base_url=config.base_url or DEFAULT_BASE_URL, cache=config.prompt_cache)


# The provider's one declaration (listed by triage.llm.providers).
PROTOCOL = Provider(name=PROVIDER, key_variable="ANTHROPIC_API_KEY", default_url=DEFAULT_BASE_URL,
                    output_modes=("json_schema", "tool"), request=request_for, parse=parse_response,
                    cache_read_ratio=CACHE_READ_RATIO, cache_write_ratio=CACHE_WRITE_RATIO)

__all__ = ["API_VERSION", "AUTH_CODES", "QUOTA_CODES", "error_code", "DEFAULT_BASE_URL", "PROTOCOL", "PROVIDER",
           "TOOL_DESCRIPTION", "build_request", "parse_response", "request_for"]
