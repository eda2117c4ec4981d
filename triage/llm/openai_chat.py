"""OpenAI Chat Completions with strict structured output, sans I/O: `build_request` and `parse_response`.

Serves every OpenAI-compatible endpoint (OpenAI, Azure OpenAI's v1 API, OpenRouter, vLLM, Ollama, LiteLLM) through
`base_url`, e.g. "https://api.openai.com/v1". `PROTOCOL` declares it for the registry (`triage.llm.providers`).

Prompt caching: OpenAI caches the longest identical prefix of 1,024 tokens or more by itself; the request keeps the
system message (the same for every issue of a queue) first, and to OpenAI's own API sends `prompt_cache_key`
(derived from the system message), which routes a queue's requests to the same cache. Other compatible servers get
no unknown field. The cached tokens are read from `usage.prompt_tokens_details.cached_tokens`.
Imports: the standard library and `triage.llm.common/errors` only.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from .common import (Headers, Provider, reply_object, Reply, Request, as_count, check_common, check_name,
                     encode_json, error_for_status, plan_from_text, reply_of)
from .errors import (LLMContextExceeded, LLMError, LLMInvalidReply, LLMNoAnswer, LLMQuotaExceeded, LLMRefused,
                     LLMTruncated)

PROVIDER = "openai"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# The API that takes `prompt_cache_key` (compatible servers may refuse a field they do not know).
CACHE_KEY_HOST = "api.openai.com"
# Published prices: a cached input token costs a tenth of an input token on the current (GPT-5) models (older
# models: a half or a quarter); writing the cache costs nothing extra.
CACHE_READ_RATIO, CACHE_WRITE_RATIO = 0.1, 1.0
# 429 codes that need a person (billing), never a retry.
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})
# 400 codes meaning the prompt does not fit the model: asking again cannot help.
CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})


def build_request(*, model: str, system: str, user: str, schema: Mapping[str, Any], schema_name: str,
                  max_tokens: int, base_url: str = DEFAULT_BASE_URL, api_key: str,
                  temperature: float | None = None,
                  token_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens",
                  cache_key: str | None = None) -> Request:
    """POST {base_url}/chat/completions with a system and a user message and
    `response_format: json_schema` in strict mode (the schema must close every object and require every key).
    `temperature` is omitted unless given (reasoning models accept only the default); `token_field="max_tokens"`
    serves older compatible servers that do not know `max_completion_tokens`; `cache_key` is sent as
    `prompt_cache_key`."""
    check_common(model, max_tokens, schema)
    check_name(schema_name)
    if not api_key:
        raise ValueError("api_key is required")
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": schema_name, "strict": True, "schema": dict(schema)}},
        token_field: max_tokens,
    }
    if temperature is not None:
        body["temperature"] = temperature
    if cache_key:
        body["prompt_cache_key"] = cache_key
    headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
               "Accept": "application/json"}
    return Request("POST", base_url.rstrip("/") + "/chat/completions", headers, encode_json(body))


def _error_fields(body: Any) -> tuple[str, str, str]:
    """(type, code, message) from OpenAI's `{"error": {...}}` or the looser shapes compatible servers send."""
    if not isinstance(body, dict):
        return "", "", ""
    err = body.get("error", body)
    if isinstance(err, str):
        return "", "", err
    if not isinstance(err, dict):
        return "", "", ""
    message = err.get("message") or body.get("detail") or ""
    return str(err.get("type") or ""), str(err.get("code") or ""), str(message)


def parse_response(status: int, headers: Headers, body: bytes, *, now: float | None = None,
                   redact: Iterable[str] = ()) -> Reply:
    """The plan object of a 2xx reply, or the typed error the response means. `now` (Unix seconds) turns an
    HTTP-date Retry-After into a delay; `redact` lists secrets (the API key) to keep out of error messages."""
    data = reply_object(status, headers, body, _error, provider=PROVIDER, now=now, redact=redact)

    tokens = _tokens(data.get("usage") if isinstance(data, dict) else None)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMInvalidReply("the response has no choices", provider=PROVIDER, status=status, **tokens)
    choice = choices[0]
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise LLMRefused(f"the model refused: {refusal}", provider=PROVIDER, status=status, redact=redact, **tokens)
    finish = choice.get("finish_reason")
    if finish == "length":
        raise LLMTruncated("the reply hit the output-token limit (finish_reason: length)", provider=PROVIDER,
                           status=status, **tokens)
    if finish == "content_filter":
        raise LLMRefused("the reply was withheld by a content filter (finish_reason: content_filter)",
                         provider=PROVIDER, status=status, **tokens)
    content = message.get("content")
    if (content is None or content == "") and (message.get("tool_calls") or message.get("function_call")
                                               or finish in ("tool_calls", "function_call")):
        # No tool was offered, so a tool call is not an answer; repairing would pay for the same again.
        raise LLMNoAnswer(f"the model called a tool instead of answering (finish_reason: {str(finish)[:40]}, "
                          "content: null)", provider=PROVIDER, status=status, **tokens)
    plan = plan_from_text(content, provider=PROVIDER, **tokens)
    return reply_of(plan, tokens, content)


def _tokens(usage: Any) -> dict[str, int]:
    """`prompt_tokens` counts every input token; `prompt_tokens_details.cached_tokens` of them came from the cache
    (and `cache_write_tokens` were written to it)."""
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    total = as_count(usage.get("prompt_tokens"))
    cached = min(as_count(details.get("cached_tokens")), total)
    return {"input_tokens": total, "output_tokens": as_count(usage.get("completion_tokens")),
            "cached_input_tokens": cached,
            "cache_write_tokens": min(as_count(details.get("cache_write_tokens")), total - cached)}


def _error(status: int, headers: Headers, data: Any, *, now: float | None, redact: Iterable[str]) -> LLMError:
    err_type, code, message = _error_fields(data)
    message = message or f"HTTP {status} without an error message"
    if status == 429 and (code in QUOTA_CODES or err_type in QUOTA_CODES):
        return LLMQuotaExceeded(f"{code or err_type}: {message}", provider=PROVIDER, status=status, redact=redact)
    detail = f"{code}: {message}" if code else message
    if code in CONTEXT_CODES:
        return LLMContextExceeded(detail, provider=PROVIDER, status=status, redact=redact)
    return error_for_status(status, detail, provider=PROVIDER, headers=headers, now=now, redact=redact)


def request_for(config: Any, environ: Mapping[str, str], **call: Any) -> Request:
    """The request for one call of a client configured with `config` (`triage.llm.client.LLMConfig`): with
    `prompt_cache_key` to OpenAI's own API when the prompt cache is on (`config.prompt_cache`)."""
    base_url = config.base_url or DEFAULT_BASE_URL
    return build_request(**call, base_url=base_url, api_key=config.api_key or "none",  # local servers take any key
                         cache_key=cache_key(call["system"]) if config.prompt_cache and urlsplit(
                             base_url).hostname == CACHE_KEY_HOST else None)


def cache_key(system: str) -> str:
    """The same for every request with this system message (a queue's prompt): the cache's routing key."""
    return "ptd-triage-" + hashlib.sha256(system.encode("utf-8")).hexdigest()[:16]


# The provider's one declaration (listed by triage.llm.providers): strict json_schema only, no tool mode.
PROTOCOL = Provider(name=PROVIDER, key_variable="OPENAI_API_KEY", default_url=DEFAULT_BASE_URL,
                    output_modes=("json_schema",), request=request_for, parse=parse_response,
                    cache_read_ratio=CACHE_READ_RATIO, cache_write_ratio=CACHE_WRITE_RATIO)

__all__ = ["CACHE_KEY_HOST", "CONTEXT_CODES", "DEFAULT_BASE_URL", "PROTOCOL", "PROVIDER", "QUOTA_CODES",
           "build_request", "cache_key", "parse_response", "request_for"]
