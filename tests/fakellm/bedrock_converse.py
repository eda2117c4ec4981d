"""An Amazon Bedrock Runtime Converse stand-in: `POST {url}/model/{modelId}/converse` with `url` like
http://127.0.0.1:PORT (a client's `endpoint_url`).

Checks the SigV4 `Authorization` header (`AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/bedrock/aws4_request,
SignedHeaders=..., Signature=...`), `X-Amz-Date`, the session token, the clock skew and the signature itself
(tests/fakellm/sigv4.py; 403 with AWS's exception names), validates each request against the documented shapes
(tests/contract/llm/bedrock-converse.schema.json; 400 ValidationException) and answers the forced tool
(`toolChoice: {tool: {name}}`) with `output.message.content[].toolUse.input`. Errors carry `x-amzn-ErrorType` and a
`{"message": ...}` body, as AWS sends them. Every response is validated. Imports: the standard library and this
package.
"""
from __future__ import annotations

import json
from dataclasses import replace
import re
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from . import contract, sigv4
from .base import Answer, ApiError, StandIn, estimate_tokens
from .faults import Fault, cut_text, half_plan
from .plans import Prompt

ACCESS_KEY = "ASIAFAKELLMEXAMPLE01"
SECRET_KEY = "fakellm/Secret/Key/For/Tests/EXAMPLEKEY0"
SESSION_TOKEN = "fakellm-session-token-from-oidc"
REGION = "us-east-1"
ERROR_STATUS: dict[str, int] = contract.document("bedrock")["operation"]["errors"]
_PATH_RE = re.compile(r"^/model/(?P<model>[^/]+)/converse$")
_CODER = "http://internal.amazon.com/coral/com.amazon.bedrock/"


class FakeBedrock(StandIn):
    provider = "bedrock"

    def __init__(self, *, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY,
                 session_token: str | None = SESSION_TOKEN, region: str = REGION, responder=None,
                 verify_signature: bool = True, max_skew: float | None = 900.0, clock=None):
        """`verify_signature=False` checks only the header's form. `clock()` -> datetime is "now" for the skew
        check (default: the real clock); `max_skew=None` disables it."""
        super().__init__(responder=responder)
        self.access_key, self.secret_key, self.session_token = access_key, secret_key, session_token
        self.region = region
        self.verify_signature, self.max_skew, self.clock = verify_signature, max_skew, clock

    @property
    def credentials(self) -> dict[str, str | None]:
        """The environment `aws-actions/configure-aws-credentials` would export for this stand-in."""
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_SESSION_TOKEN": self.session_token, "AWS_REGION": self.region}

    def route(self, method: str, path: str) -> dict[str, str] | None:
        found = _PATH_RE.match(path)
        if method != "POST" or not found:
            return None
        return {"modelId": unquote(found["model"])}

    def authenticate(self, method, raw_path, headers, raw_body) -> None:
        now: datetime | None = self.clock() if self.clock else None
        problem = sigv4.check(method, raw_path, headers, raw_body, keys={self.access_key: self.secret_key},
                              session_tokens={self.access_key: self.session_token}, region=self.region,
                              now=now, max_skew=self.max_skew)
        if problem and not self.verify_signature and problem[1] == sigv4.MISMATCH:
            problem = None
        if problem:
            raise ApiError(403, problem[1], problem[0])

    def request_problems(self, body, params, headers) -> list[str]:
        problems = contract.bedrock_request_errors(body)
        if problems:
            return problems
        config = body.get("toolConfig") or {}
        names = [t["toolSpec"]["name"] for t in config.get("tools", []) if "toolSpec" in t]
        chosen = (config.get("toolChoice") or {}).get("tool", {}).get("name")
        if chosen is not None and chosen not in names:
            return [f"The tool {chosen} in toolChoice is not among the tools in toolConfig."]
        fmt = (body.get("outputConfig") or {}).get("textFormat")
        if fmt:
            try:
                schema = json.loads(fmt["structure"]["jsonSchema"]["schema"])
            except ValueError:
                return ["outputConfig.textFormat.structure.jsonSchema.schema is not valid JSON"]
            if not isinstance(schema, dict):
                return ["outputConfig.textFormat.structure.jsonSchema.schema must be a JSON object"]
        if body["messages"][-1]["role"] != "user":
            return ["A conversation must end with a user message."]
        return []

    def render_error(self, err: ApiError) -> Answer:
        name = err.kind if err.kind in ERROR_STATUS else (
            "SerializationException" if err.kind == "invalid_json" else
            {404: "ResourceNotFoundException", 500: "InternalServerException"}.get(err.status, "ValidationException"))
        return self._error(name, err.message)

    def _error(self, name: str, message: str, headers: dict[str, str] | None = None,
               status: int | None = None) -> Answer:
        n = self._next_id()
        return Answer(status or ERROR_STATUS[name], {"message": message},
                      {"x-amzn-ErrorType": f"{name}:{_CODER}", "x-amzn-RequestId": f"fakellm-{n:06d}",
                       **(headers or {})})

    def prompt_of(self, body: dict) -> Prompt:
        prompt = self._prompt_of(body)
        return replace(prompt, cache_point=any("cachePoint" in b for b in body.get("system", [])))

    def _prompt_of(self, body: dict) -> Prompt:
        system = "\n".join(b["text"] for b in body.get("system", []) if "text" in b)
        user = "\n".join(b["text"] for m in body["messages"] if m["role"] == "user" for b in m["content"]
                         if "text" in b)
        fmt = (body.get("outputConfig") or {}).get("textFormat")
        if fmt:
            spec = fmt["structure"]["jsonSchema"]
            return Prompt(system, user, json.loads(spec["schema"]), spec.get("name"), "json_schema")
        config = body.get("toolConfig") or {}
        chosen = (config.get("toolChoice") or {}).get("tool", {}).get("name")
        for tool in config.get("tools", []):
            spec = tool.get("toolSpec")
            if spec and spec["name"] == chosen:
                return Prompt(system, user, spec["inputSchema"]["json"], chosen, "tool")
        return Prompt(system, user, None, None, "none")

    # ---- rendering ---------------------------------------------------------------------------------------------

    def schema_guaranteed(self, prompt: Prompt) -> bool:
        return prompt.mode == "json_schema"  # structured output: the text matches the schema

    def _converse(self, prompt: Prompt, content: list[dict], stop_reason: str) -> Answer:
        n = self._next_id()
        input_tokens = estimate_tokens(prompt.system + prompt.user + json.dumps(prompt.schema or {}))
        output_tokens = estimate_tokens("".join(b.get("text") or json.dumps(b.get("toolUse", "")) for b in content))
        # A `cachePoint` after the system prompt ends a cached prefix: written once, then read; `inputTokens`
        # counts what comes after it, `totalTokens` everything.
        marked = prompt.cache_point
        read, written = self.prompt_cache(prompt.system) if marked else (0, 0)
        uncached = max(1, input_tokens - read - written)
        usage = {"inputTokens": uncached, "outputTokens": output_tokens,
                 "totalTokens": uncached + read + written + output_tokens}
        if marked:
            usage.update(cacheReadInputTokens=read, cacheWriteInputTokens=written)
        response = {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop_reason,
                    "usage": usage, "metrics": {"latencyMs": 42}}
        return Answer(200, response, {"x-amzn-RequestId": f"fakellm-{n:06d}"}, input_tokens, output_tokens)

    def _answer_blocks(self, prompt: Prompt, plan: dict) -> tuple[list[dict], str]:
        if prompt.mode == "tool":
            return [{"toolUse": {"toolUseId": f"tooluse_fakellm{self._next_id():06d}", "name": prompt.schema_name,
                                 "input": plan}}], "tool_use"
        return [{"text": json.dumps(plan)}], "end_turn"

    def render_plan(self, prompt, body, plan, params) -> Answer:
        return self._converse(prompt, *self._answer_blocks(prompt, plan))

    def render_fault(self, prompt: Prompt, body: dict, fault: Fault, params) -> Answer:
        if fault.kind == "rate_limited":
            headers = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
            return self._error("ThrottlingException", "Too many requests, please wait before trying again.", headers)
        if fault.kind == "quota_exhausted":
            return self._error("ServiceQuotaExceededException", "Your request exceeds the service quota for your "
                                                                "account. You can view your quotas at Service Quotas.")
        if fault.kind == "server_error":
            if fault.status == 500:
                return self._error("InternalServerException", "An internal server error occurred. Retry your request.")
            # 529 is Anthropic's overloaded status; Bedrock says it with 503 ServiceUnavailableException.
            return self._error("ServiceUnavailableException", "Bedrock is unable to process your request.")
        if fault.kind == "error":
            name = fault.error_type or next((k for k, v in ERROR_STATUS.items() if v == fault.status),
                                            "ValidationException")
            return self._error(name, fault.message or f"Error {fault.status}", fault.headers, fault.status)
        if fault.kind == "raw":
            raw = fault.body if isinstance(fault.body, bytes) else json.dumps(fault.body).encode()
            return Answer(fault.status, raw, dict(fault.headers), check_contract=False)
        if fault.kind == "malformed_json":
            whole = json.dumps(self._converse(prompt, [{"text": "{}"}], "end_turn").body)
            return Answer(200, whole[: len(whole) // 2].encode(), check_contract=False)
        if fault.kind == "schema_invalid":
            return self._converse(prompt, *self._answer_blocks(prompt, fault.plan))
        if fault.kind == "refusal":
            return self._converse(prompt, [{"text": fault.text}], "content_filtered")
        if fault.kind == "truncated":
            plan: dict[str, Any] = fault.plan if fault.plan is not None else self.planned(prompt, body)
            if prompt.mode == "tool":
                blocks, _ = self._answer_blocks(prompt, half_plan(plan))
            else:
                blocks = [{"text": cut_text(json.dumps(plan))}]
            return self._converse(prompt, blocks, "max_tokens")
        if fault.kind == "raw_output":
            return self._converse(prompt, [{"text": fault.text}], "end_turn")
        if fault.kind == "stopped":
            return self._converse(prompt, [{"text": fault.text or " "}], fault.stop_reason)
        raise ValueError(f"unknown fault kind {fault.kind!r}")

    def response_problems(self, answer: Answer) -> list[str]:
        return contract.bedrock_response_errors(answer.status, answer.headers, answer.body)
