"""An OpenAI-compatible Chat Completions stand-in: `POST {url}/chat/completions` with `url` like
http://127.0.0.1:PORT/v1.

Checks `Authorization: Bearer KEY` (401 otherwise), validates each request against OpenAI's published description
(tests/contract/llm/, 400 with OpenAI's error shape when invalid) and strict structured output's rules for the
schema, answers with `response_format: json_schema` content, and validates every response it sends. Imports: the
standard library and this package.
"""
from __future__ import annotations

import json

from . import contract
from .base import Answer, ApiError, StandIn, estimate_tokens
from .faults import Fault, cut_text
from .plans import Prompt

DEFAULT_KEY = "sk-fakellm-openai-test-key-0123456789"
_CREATED = 1_790_000_000
_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 403: "invalid_request_error",
                404: "invalid_request_error", 413: "invalid_request_error", 429: "requests"}


def _masked(key: str) -> str:
    return key[:3] + "*" * max(0, len(key) - 7) + key[-4:] if len(key) > 8 else "***"


class FakeOpenAI(StandIn):
    provider = "openai"

    def __init__(self, *, api_key: str | None = DEFAULT_KEY, responder=None, model_name: str | None = None):
        """`api_key=None` accepts any request without a key (as local servers like Ollama do). `model_name` is
        the model reported back (default: the requested one)."""
        super().__init__(responder=responder)
        self.api_key = api_key
        self.model_name = model_name

    @property
    def url(self) -> str:
        return self.origin + "/v1"

    def route(self, method: str, path: str) -> dict[str, str] | None:
        return {} if method == "POST" and path.rstrip("/") == "/v1/chat/completions" else None

    def authenticate(self, method, raw_path, headers, raw_body) -> None:
        if self.api_key is None:
            return
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "You didn't provide an API key. You need to provide your API key in an Authorization "
                                "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", None)
        if token.strip() != self.api_key:
            raise ApiError(401, f"Incorrect API key provided: {_masked(token.strip())}. You can find your API key at "
                                "https://platform.openai.com/account/api-keys.", "invalid_api_key")

    def request_problems(self, body, params, headers) -> list[str]:
        problems = contract.openai_request_errors(body)
        if problems:
            return problems
        if body.get("stream"):
            return ["the stand-in does not stream (stream: true)"]
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema" and (fmt["json_schema"].get("strict") is True):
            name = fmt["json_schema"]["name"]
            schema = fmt["json_schema"].get("schema")
            problems = [f"Invalid schema for response_format '{name}': {p}"
                        for p in contract.openai_strict_schema_errors(schema)]
        return problems

    def render_error(self, err: ApiError) -> Answer:
        status = err.status
        kind = {"invalid_request": "invalid_request_error", "invalid_json": "invalid_request_error",
                "not_found": "invalid_request_error"}.get(err.kind or "", _ERROR_TYPES.get(status, "server_error"))
        code = err.kind if err.kind in ("invalid_api_key",) else None
        param = "response_format" if "response_format" in err.message else None
        return Answer(status, {"error": {"message": err.message, "type": kind, "param": param, "code": code}})

    def prompt_of(self, body: dict) -> Prompt:
        def text(message: dict) -> str:
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))

        messages = body["messages"]
        fmt = body.get("response_format") or {}
        spec = fmt.get("json_schema") or {}
        return Prompt(system="\n".join(text(m) for m in messages if m.get("role") in ("system", "developer")),
                      user="\n".join(text(m) for m in messages if m.get("role") == "user"),
                      schema=spec.get("schema"), schema_name=spec.get("name"),
                      mode=fmt.get("type", "none") if fmt.get("type") != "text" else "none")

    def schema_guaranteed(self, prompt: Prompt) -> bool:
        return prompt.mode == "json_schema" and prompt.schema is not None

    # ---- rendering ---------------------------------------------------------------------------------------------

    def _completion(self, prompt: Prompt, body: dict, *, content: str | None, refusal: str | None = None,
                    finish_reason: str = "stop", tool_calls: list | None = None) -> Answer:
        n = self._next_id()
        input_tokens = estimate_tokens(prompt.system + prompt.user + json.dumps(prompt.schema or {}))
        output_tokens = estimate_tokens(content or refusal or "")
        # OpenAI caches a repeated prefix by itself (the system message first), in 128-token steps.
        cached = self.prompt_cache(prompt.system)[0] // 128 * 128
        completion = {
            "id": f"chatcmpl-fakellm{n:06d}",
            "object": "chat.completion",
            "created": _CREATED + n,
            "model": self.model_name or body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal,
                                                 "annotations": [],
                                                 **({"tool_calls": tool_calls} if tool_calls else {})},
                         "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                      "total_tokens": input_tokens + output_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                    "accepted_prediction_tokens": 0,
                                                    "rejected_prediction_tokens": 0}},
            "service_tier": "default",
        }
        return Answer(200, completion, {"x-request-id": f"req_fakellm{n:06d}"}, input_tokens, output_tokens)

    def render_plan(self, prompt, body, plan, params) -> Answer:
        return self._completion(prompt, body, content=json.dumps(plan))

    def render_fault(self, prompt: Prompt, body: dict, fault: Fault, params) -> Answer:
        def error(status: int, message: str, kind: str, code: str | None, headers=None) -> Answer:
            return Answer(status, {"error": {"message": message, "type": kind, "param": None, "code": code}},
                          dict(headers or {}))

        if fault.kind == "rate_limited":
            headers = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
            return error(429, f"Rate limit reached for {body['model']} in organization org-fakellm on requests per "
                              "min (RPM): Limit 3, Used 3, Requested 1.", "requests", "rate_limit_exceeded", headers)
        if fault.kind == "quota_exhausted":
            return error(429, "You exceeded your current quota, please check your plan and billing details.",
                         "insufficient_quota", "insufficient_quota")
        if fault.kind == "server_error":
            message = ("The server had an error while processing your request. Sorry about that!"
                       if fault.status == 500 else "The engine is currently overloaded, please try again later.")
            return error(fault.status, message, "server_error", None)
        if fault.kind == "error":
            return error(fault.status, fault.message or f"Error {fault.status}",
                         fault.error_type or _ERROR_TYPES.get(fault.status, "server_error"), None, fault.headers)
        if fault.kind == "raw":
            raw = fault.body if isinstance(fault.body, bytes) else json.dumps(fault.body).encode()
            return Answer(fault.status, raw, dict(fault.headers), check_contract=False)
        if fault.kind == "malformed_json":
            whole = json.dumps(self._completion(prompt, body, content="{}").body)
            return Answer(200, whole[: len(whole) // 2].encode(), check_contract=False)
        if fault.kind == "schema_invalid":
            return self._completion(prompt, body, content=json.dumps(fault.plan))
        if fault.kind == "refusal":
            return self._completion(prompt, body, content=None, refusal=fault.text)
        if fault.kind == "truncated":
            plan = fault.plan if fault.plan is not None else self.planned(prompt, body)
            return self._completion(prompt, body, content=cut_text(json.dumps(plan)), finish_reason="length")
        if fault.kind == "raw_output":
            return self._completion(prompt, body, content=fault.text)
        if fault.kind == "stopped":  # tool_calls: content null and a call of a tool nobody offered
            calls = [{"id": "call_fakellm", "type": "function",
                      "function": {"name": "lookup", "arguments": fault.text or "{}"}}]
            return self._completion(prompt, body, content=None, finish_reason=fault.stop_reason,
                                    tool_calls=calls if fault.stop_reason == "tool_calls" else None)
        raise ValueError(f"unknown fault kind {fault.kind!r}")

    def response_problems(self, answer: Answer) -> list[str]:
        return contract.openai_response_errors(answer.status, answer.headers, answer.body)
