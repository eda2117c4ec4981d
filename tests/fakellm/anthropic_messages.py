"""An Anthropic Messages stand-in: `POST {url}/v1/messages` with `url` like http://127.0.0.1:PORT.

Checks `x-api-key` (401 authentication_error) and `anthropic-version` (one of the contract's, else 400), validates each request
against the documented shapes (tests/contract/llm/anthropic-messages.schema.json; 400 invalid_request_error), and
answers structured output both ways: a forced tool (`tool_choice: {type: tool, name}` -> a `tool_use` block whose
`input` is the plan) or `output_config.format` json_schema (-> a `text` block). Every response is validated.
Imports: the standard library and this package.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from . import contract
from .base import Answer, ApiError, StandIn, estimate_tokens
from .faults import Fault, cut_text, half_plan
from .plans import Prompt

DEFAULT_KEY = "sk-ant-fakellm-test-key-0123456789"
VERSIONS = tuple(contract.document("anthropic")["operation"]["headers"]["anthropic-version"]["enum"])
VERSION = VERSIONS[-1]  # the newest: what the SDK sends
ERROR_TYPES = {int(k): v for k, v in contract.document("anthropic")["operation"]["errorTypes"].items()}


class FakeAnthropic(StandIn):
    provider = "anthropic"

    def __init__(self, *, api_key: str = DEFAULT_KEY, responder=None):
        super().__init__(responder=responder)
        self.api_key = api_key

    def route(self, method: str, path: str) -> dict[str, str] | None:
        return {} if method == "POST" and path.rstrip("/") == "/v1/messages" else None

    def authenticate(self, method, raw_path, headers, raw_body) -> None:
        key = headers.get("x-api-key")
        if not key:
            raise ApiError(401, "x-api-key header is required")
        if key != self.api_key:
            raise ApiError(401, "invalid x-api-key")
        version = headers.get("anthropic-version")
        if not version:
            raise ApiError(400, "anthropic-version: header is required")
        if version not in VERSIONS:
            raise ApiError(400, f"anthropic-version: invalid version {version!r}")

    def request_problems(self, body, params, headers) -> list[str]:
        problems = contract.anthropic_request_errors(body)
        if problems:
            return problems
        if body.get("stream"):
            return ["the stand-in does not stream (stream: true)"]
        choice = body.get("tool_choice")
        names = [tool["name"] for tool in body.get("tools") or []]
        if choice and choice.get("type") == "tool" and choice["name"] not in names:
            return [f"tool_choice: tool {choice['name']!r} is not among the declared tools {names}"]
        if choice and choice.get("type") in ("any", "tool") and not names:
            return ["tool_choice: no tools are declared"]
        if choice and body.get("output_config", {}).get("format") and choice.get("type") in ("any", "tool"):
            return ["output_config.format cannot be combined with a forced tool_choice"]
        return []

    def render_error(self, err: ApiError) -> Answer:
        return self._error(err.status, err.message)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None,
               error_type: str | None = None) -> Answer:
        n = self._next_id()
        kind = error_type or ERROR_TYPES.get(status, "api_error")
        return Answer(status, {"type": "error", "error": {"type": kind, "message": message},
                               "request_id": f"req_fakellm{n:06d}"},
                      {"request-id": f"req_fakellm{n:06d}", **(headers or {})})

    def prompt_of(self, body: dict) -> Prompt:
        system = body.get("system")
        marked = isinstance(system, list) and any(isinstance(b, dict) and b.get("cache_control") for b in system)
        return replace(self._prompt_of(body), cache_point=marked)

    def _prompt_of(self, body: dict) -> Prompt:
        def text(content: Any) -> str:
            if isinstance(content, str):
                return content
            return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")

        user = "\n".join(text(m["content"]) for m in body["messages"] if m["role"] == "user")
        choice = body.get("tool_choice") or {}
        if choice.get("type") == "tool":
            tool = next(t for t in body["tools"] if t["name"] == choice["name"])
            return Prompt(text(body.get("system", "")), user, tool["input_schema"], tool["name"], "tool")
        fmt = (body.get("output_config") or {}).get("format")
        if fmt:
            return Prompt(text(body.get("system", "")), user, fmt["schema"], None, "output_config")
        return Prompt(text(body.get("system", "")), user, None, None, "none")

    def schema_guaranteed(self, prompt: Prompt) -> bool:
        return prompt.mode == "output_config"  # a forced tool's input is not guaranteed to match its schema

    # ---- rendering ---------------------------------------------------------------------------------------------

    def _message(self, prompt: Prompt, body: dict, content: list[dict], stop_reason: str) -> Answer:
        n = self._next_id()
        input_tokens = estimate_tokens(prompt.system + prompt.user + json.dumps(prompt.schema or {}))
        output_tokens = estimate_tokens("".join(b.get("text") or json.dumps(b.get("input", "")) for b in content))
        # A system block with `cache_control` ends a cached prefix: written once, then read; `input_tokens` counts
        # only what comes after it.
        marked = prompt.cache_point
        read, written = self.prompt_cache(json.dumps(prompt.schema or {}) + prompt.system) if marked else (0, 0)
        input_tokens = max(1, input_tokens - read - written)
        message = {"id": f"msg_fakellm{n:06d}", "type": "message", "role": "assistant", "model": body["model"],
                   "content": content, "stop_reason": stop_reason, "stop_sequence": None,
                   "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                             "cache_creation_input_tokens": written, "cache_read_input_tokens": read}}
        return Answer(200, message, {"request-id": f"req_fakellm{n:06d}"}, input_tokens, output_tokens)

    def _answer_blocks(self, prompt: Prompt, plan: dict) -> tuple[list[dict], str]:
        if prompt.mode == "tool":
            block = {"type": "tool_use", "id": f"toolu_fakellm{self._next_id():06d}", "name": prompt.schema_name,
                     "input": plan}
            return [block], "tool_use"
        return [{"type": "text", "text": json.dumps(plan)}], "end_turn"

    def render_plan(self, prompt, body, plan, params) -> Answer:
        return self._message(prompt, body, *self._answer_blocks(prompt, plan))

    def render_fault(self, prompt: Prompt, body: dict, fault: Fault, params) -> Answer:
        if fault.kind == "rate_limited":
            headers = {} if fault.retry_after is None else {"retry-after": str(fault.retry_after)}
            return self._error(429, "This request would exceed the rate limit for your organization of 50 requests "
                                    "per minute. Please reduce the prompt length or the maximum tokens requested, or "
                                    "try again later.", headers)
        if fault.kind == "quota_exhausted":
            return self._error(429, "You have reached your specified API usage limits. You will regain access on "
                                    "2026-12-01 at 00:00 UTC.")
        if fault.kind == "server_error":
            message = "Overloaded" if fault.status == 529 else "Internal server error"
            return self._error(fault.status, message)
        if fault.kind == "error":
            return self._error(fault.status, fault.message or f"Error {fault.status}", fault.headers,
                               fault.error_type)
        if fault.kind == "raw":
            raw = fault.body if isinstance(fault.body, bytes) else json.dumps(fault.body).encode()
            return Answer(fault.status, raw, dict(fault.headers), check_contract=False)
        if fault.kind == "malformed_json":
            whole = json.dumps(self._message(prompt, body, [{"type": "text", "text": "{}"}], "end_turn").body)
            return Answer(200, whole[: len(whole) // 2].encode(), check_contract=False)
        if fault.kind == "schema_invalid":
            return self._message(prompt, body, *self._answer_blocks(prompt, fault.plan))
        if fault.kind == "refusal":
            return self._message(prompt, body, [{"type": "text", "text": fault.text}], "refusal")
        if fault.kind == "truncated":
            plan = fault.plan if fault.plan is not None else self.planned(prompt, body)
            if prompt.mode == "tool":
                blocks, _ = self._answer_blocks(prompt, half_plan(plan))
            else:
                blocks = [{"type": "text", "text": cut_text(json.dumps(plan))}]
            return self._message(prompt, body, blocks, "max_tokens")
        if fault.kind == "raw_output":
            return self._message(prompt, body, [{"type": "text", "text": fault.text}], "end_turn")
        if fault.kind == "stopped":  # e.g. pause_turn or model_context_window_exceeded, with what was said so far
            return self._message(prompt, body, [{"type": "text", "text": fault.text}] if fault.text else [],
                                 fault.stop_reason)
        raise ValueError(f"unknown fault kind {fault.kind!r}")

    def response_problems(self, answer: Answer) -> list[str]:
        return contract.anthropic_response_errors(answer.status, answer.body)
