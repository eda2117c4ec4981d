"""Anthropic Messages with structured output, sans I/O: `build_request` and `parse_response`.

Two ways to get the plan: `mode="tool"` (default) declares one tool whose `input_schema` is the plan schema and
forces it (`tool_choice: {"type": "tool", "name": ...}`): the answer is that `tool_use` block's `input`;
`mode="json"` asks for `output_config.format` json_schema: the answer is the `text` block. Imports: the standard
library and `triage.llm.common/errors` only.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from .common import (Headers, reply_object, Reply, Request, as_count, check_common, check_name, encode_json,
                     error_for_status, header, plan_from_text)
from .errors import LLMError, LLMInvalidReply, LLMQuotaExceeded, LLMRefused, LLMTransient, LLMTruncated

PROVIDER = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
TOOL_DESCRIPTION = "Record the triage plan for the issue. Call this exactly once with the complete plan."
_QUOTA_HINTS = ("spend limit", "credit balance", "usage limit", "billing")


def build_request(*, model: str, system: str, user: str, schema: Mapping[str, Any], schema_name: str,
                  max_tokens: int, base_url: str = DEFAULT_BASE_URL, api_key: str,
                  mode: Literal["tool", "json"] = "tool", temperature: float | None = None) -> Request:
    """POST {base_url}/v1/messages (base_url without /v1, e.g. "https://api.anthropic.com")."""
    check_common(model, max_tokens, schema)
    check_name(schema_name)
    if not api_key:
        raise ValueError("api_key is required")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "system": system,
                            "messages": [{"role": "user", "content": user}]}
    if mode == "tool":
        body["tools"] = [{"name": schema_name, "description": TOOL_DESCRIPTION, "input_schema": dict(schema)}]
        body["tool_choice"] = {"type": "tool", "name": schema_name}
    elif mode == "json":
        body["output_config"] = {"format": {"type": "json_schema", "schema": dict(schema)}}
    else:
        raise ValueError(f"mode must be 'tool' or 'json', got {mode!r}")
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
    tokens = {"input_tokens": as_count(usage.get("input_tokens")),
              "output_tokens": as_count(usage.get("output_tokens"))}
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
    for block in blocks:
        if block.get("type") == "tool_use":
            plan = block.get("input")
            if not isinstance(plan, dict):
                raise LLMInvalidReply("the tool_use input is not a JSON object", provider=PROVIDER, status=status,
                                      **tokens)
            return Reply(plan, tokens["input_tokens"], tokens["output_tokens"],
                         json.dumps(plan, ensure_ascii=False))
    plan = plan_from_text(text, provider=PROVIDER, **tokens)
    return Reply(plan, tokens["input_tokens"], tokens["output_tokens"], text)


def _error(status: int, headers: Headers, data: Any, *, now: float | None, redact: Iterable[str]) -> LLMError:
    err = data.get("error") if isinstance(data, dict) else None
    err = err if isinstance(err, dict) else {}
    err_type, message = str(err.get("type") or ""), str(err.get("message") or f"HTTP {status}")
    detail = f"{err_type}: {message}" if err_type else message
    kw = {"provider": PROVIDER, "status": status, "redact": redact}
    lowered = message.lower()
    if err_type == "billing_error" or (status == 429 and header(headers, "retry-after") is None) or (
            status in (400, 402, 403, 429) and any(hint in lowered for hint in _QUOTA_HINTS)):
        return LLMQuotaExceeded(detail, **kw)
    if err_type in ("overloaded_error", "api_error", "timeout_error"):
        return LLMTransient(detail, **kw)
    return error_for_status(status, detail, provider=PROVIDER, headers=headers, now=now, redact=redact)


__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "PROVIDER", "TOOL_DESCRIPTION", "build_request", "parse_response"]
