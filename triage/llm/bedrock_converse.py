"""Amazon Bedrock Converse with structured output, sans I/O: `build_request` (SigV4-signed) and `parse_response`.

Two forms, both in botocore's current `bedrock-runtime` service model (2023-09-30, botocore 1.44):
`mode="json_schema"` (the default) sends `outputConfig.textFormat` (`type: json_schema`, `structure.jsonSchema`
with the schema as a JSON string): the answer is the text block; `mode="tool"` (for a model that does not support
structured output) forces a tool (`toolConfig.tools[].toolSpec.inputSchema.json`, `toolChoice: {"tool": ...}`):
the answer is `output.message.content[].toolUse.input`.
Prompt caching: with the cache on, the system prompt (the same for every issue of a queue) is followed by a
`cachePoint` block; `usage.inputTokens` then counts the tokens after it, `cacheReadInputTokens` and
`cacheWriteInputTokens` the rest. A model without prompt caching refuses a cache point: `llm-prompt-cache: false`.
Signing uses botocore's `SigV4Auth` + `AWSRequest` (the optional extra `ptd-triage[bedrock]`), imported inside
`sign()` only, so importing this module needs nothing but the standard library and `triage.llm.common/errors`.
Credentials come from the caller (`credentials_from_env(os.environ)` reads what
`aws-actions/configure-aws-credentials` exports).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

from .common import (Headers, Provider, reply_object, Reply, Request, as_count, check_common, check_name,
                     encode_json, error_for_status, header, output_mode, plan_from_text, reply_of, retry_after,
                     usage_tokens)
from .errors import (LLMAuthError, LLMBadRequest, LLMConfigError, LLMContextExceeded, LLMError, LLMInvalidReply,
                     LLMNoAnswer, LLMQuotaExceeded, LLMRateLimited, LLMRefused, LLMTransient, LLMTruncated)

PROVIDER = "bedrock"
# The SigV4 signing name of bedrock-runtime (botocore's service model: `signingName: bedrock`), which is also the
# provider's name; tests/test_llm_protocol.py checks it against botocore.
SIGNING_SERVICE = PROVIDER
TOOL_DESCRIPTION = "Record the triage plan for the issue. Call this exactly once with the complete plan."
# Published prices for Anthropic's models on Bedrock (the ones with prompt caching most use): a cache read costs
# 0.1 of an input token, a cache write 1.25. (Amazon Nova: reads 0.25, writes free: set llm-price-cached-input.)
CACHE_READ_RATIO, CACHE_WRITE_RATIO = 0.1, 1.25
CACHE_HINT = "set llm-prompt-cache: false (--llm-prompt-cache off) for a model without prompt caching"

_AUTH_ERRORS = frozenset({"AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException",
                          "IncompleteSignatureException", "MissingAuthenticationTokenException",
                          "ExpiredTokenException", "InvalidClientTokenId", "SignatureDoesNotMatch"})
_TRANSIENT_ERRORS = frozenset({"InternalServerException", "ServiceUnavailableException", "ModelTimeoutException",
                               "ModelNotReadyException", "ModelErrorException"})
_BAD_REQUEST_ERRORS = frozenset({"ValidationException", "ResourceNotFoundException", "SerializationException",
                                 "ModelStreamErrorException"})
_CONTEXT_HINTS = ("too long", "context window", "context length", "too many tokens")


@dataclass(frozen=True)
class AwsCredentials:
    access_key: str
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


def credentials_from_env(env: Mapping[str, str]) -> AwsCredentials | None:
    """AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN from `env` (pass os.environ); None when the
    key pair is incomplete."""
    key, secret = env.get("AWS_ACCESS_KEY_ID", "").strip(), env.get("AWS_SECRET_ACCESS_KEY", "").strip()
    if not key or not secret:
        return None
    return AwsCredentials(key, secret, env.get("AWS_SESSION_TOKEN", "").strip() or None)


def region_from_env(env: Mapping[str, str]) -> str | None:
    return (env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "").strip() or None


def endpoint(region: str) -> str:
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def build_request(*, model: str, system: str, user: str, schema: Mapping[str, Any], schema_name: str,
                  max_tokens: int, credentials: AwsCredentials, region: str, base_url: str | None = None,
                  temperature: float | None = None, now: datetime | None = None,
                  mode: str = "json_schema", cache: bool = False) -> Request:
    """POST {base_url or the regional endpoint}/model/{model}/converse, signed with SigV4 for `region`.
    `now` fixes the signing time (tests); by default botocore reads the clock. `cache`: a `cachePoint` after the
    system prompt."""
    check_common(model, max_tokens, schema)
    check_name(schema_name)
    if not region:
        raise ValueError("region is required (AWS_REGION)")
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": [{"text": user}]}],
        "system": [{"text": system}] + ([{"cachePoint": {"type": "default"}}] if cache else []),
        "inferenceConfig": {"maxTokens": max_tokens},
    }
    if output_mode(mode) == "tool":
        body["toolConfig"] = {"tools": [{"toolSpec": {"name": schema_name, "description": TOOL_DESCRIPTION,
                                                      "inputSchema": {"json": dict(schema)}}}],
                              "toolChoice": {"tool": {"name": schema_name}}}
    else:
        body["outputConfig"] = {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {
            "schema": json.dumps(dict(schema), separators=(",", ":")), "name": schema_name,
            "description": TOOL_DESCRIPTION}}}}
    if temperature is not None:
        body["inferenceConfig"]["temperature"] = temperature
    url = (base_url or endpoint(region)).rstrip("/") + "/model/" + quote(model, safe="") + "/converse"
    unsigned = Request("POST", url, {"Content-Type": "application/json", "Accept": "application/json"},
                       encode_json(body))
    return sign(unsigned, credentials=credentials, region=region, now=now)


def sign(request: Request, *, credentials: AwsCredentials, region: str, service: str = SIGNING_SERVICE,
         now: datetime | None = None) -> Request:
    """`request` with SigV4 `Authorization`, `X-Amz-Date` (and `X-Amz-Security-Token`) headers, by botocore."""
    if credentials is None or not credentials.access_key or not credentials.secret_key:
        raise LLMConfigError("no AWS credentials (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)", provider=PROVIDER)
    try:
        from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError:
        raise LLMConfigError("the Bedrock provider needs botocore: pip install 'ptd-triage[bedrock]'",
                             provider=PROVIDER) from None

    class _Signer(SigV4Auth):
        def _modify_request_before_signing(self, aws_request):  # runs after add_auth read the clock
            if now is not None:
                fixed = now.astimezone(timezone.utc) if now.tzinfo else now
                aws_request.context["timestamp"] = fixed.strftime(SIGV4_TIMESTAMP)
            super()._modify_request_before_signing(aws_request)

    aws_request = AWSRequest(method=request.method, url=request.url, data=request.body,
                             headers=dict(request.headers))
    creds = Credentials(credentials.access_key, credentials.secret_key, credentials.session_token)
    _Signer(creds, service, region).add_auth(aws_request)
    return Request(request.method, request.url, {k: v for k, v in aws_request.headers.items()}, request.body)


def _error_type(headers: Headers, data: Any) -> str:
    """The exception name from `x-amzn-ErrorType` ("ThrottlingException:http://..."), else the body's `__type`
    ("com.amazon...#ThrottlingException") or `code`."""
    raw = header(headers, "x-amzn-errortype") or ""
    if not raw and isinstance(data, dict):
        raw = str(data.get("__type") or data.get("code") or "")
    return raw.split(":", 1)[0].rsplit("#", 1)[-1].strip()


def parse_response(status: int, headers: Headers, body: bytes, *, now: float | None = None,
                   redact: Iterable[str] = ()) -> Reply:
    """The forced tool's input of a 2xx reply (or the text's JSON), or the typed error the response means."""
    data = reply_object(status, headers, body, _error, provider=PROVIDER, now=now, redact=redact)

    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tokens = usage_tokens(as_count(usage.get("inputTokens")), as_count(usage.get("outputTokens")),
                          cached=as_count(usage.get("cacheReadInputTokens")),
                          written=as_count(usage.get("cacheWriteInputTokens")))
    stop = data.get("stopReason")
    kw = {"provider": PROVIDER, "status": status, **tokens}
    if stop == "max_tokens":
        raise LLMTruncated("the reply hit the output-token limit (stopReason: max_tokens)", **kw)
    if stop in ("guardrail_intervened", "content_filtered"):
        raise LLMRefused(f"the reply was withheld (stopReason: {stop})", **kw)
    if stop == "model_context_window_exceeded":
        raise LLMContextExceeded("the prompt and answer exceed the model's context window (stopReason: "
                                 "model_context_window_exceeded)", **kw)
    if stop in ("malformed_model_output", "malformed_tool_use"):
        raise LLMInvalidReply(f"the model produced an unusable reply (stopReason: {stop})", **kw)
    output = data.get("output") if isinstance(data.get("output"), dict) else {}
    message = output.get("message") if isinstance(output.get("message"), dict) else {}
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    for block in blocks:
        tool_use = block.get("toolUse")
        if isinstance(tool_use, dict):
            plan = tool_use.get("input")
            if not isinstance(plan, dict):
                raise LLMInvalidReply("the toolUse input is not a JSON object", **kw)
            return reply_of(plan, tokens, json.dumps(plan, ensure_ascii=False))
    text = "".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
    if not text.strip():
        raise LLMNoAnswer(f"the reply has no answer (stopReason: {str(stop)[:40]}, no text)", **kw)
    plan = plan_from_text(text, provider=PROVIDER, **tokens)
    return reply_of(plan, tokens, text)


def _error(status: int, headers: Headers, data: Any, *, now: float | None, redact: Iterable[str]) -> LLMError:
    name = _error_type(headers, data)
    message = ""
    if isinstance(data, dict):
        message = str(data.get("message") or data.get("Message") or "")
    detail = f"{name}: {message or f'HTTP {status}'}" if name else (message or f"HTTP {status}")
    if "caching" in message.lower() or "cachepoint" in message.lower():
        detail += f" ({CACHE_HINT})"
    kw = {"provider": PROVIDER, "status": status, "redact": redact}
    if name == "ThrottlingException":
        return LLMRateLimited(detail, retry_after=retry_after(headers, now=now), **kw)
    if name == "ServiceQuotaExceededException":
        return LLMQuotaExceeded(detail, **kw)
    if name in _AUTH_ERRORS:
        return LLMAuthError(detail, **kw)
    if name in _TRANSIENT_ERRORS:
        return LLMTransient(detail, **kw)
    if name == "ValidationException" and any(hint in message.lower() for hint in _CONTEXT_HINTS):
        return LLMContextExceeded(detail, **kw)
    if name in _BAD_REQUEST_ERRORS:
        return LLMBadRequest(detail, **kw)
    return error_for_status(status, detail, provider=PROVIDER, headers=headers, now=now, redact=redact)


def request_for(config: Any, environ: Mapping[str, str], **call: Any) -> Request:
    """The signed request for one call of a client configured with `config` (`triage.llm.client.LLMConfig`), with
    the AWS credentials and region of `environ` (`config.region` wins), read at the time of sending."""
    creds = credentials_from_env(environ)
    if creds is None:
        raise LLMConfigError("no AWS credentials for Bedrock (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, e.g. "
                             "from aws-actions/configure-aws-credentials)", provider=PROVIDER)
    region = config.region or region_from_env(environ)
    if not region:
        raise LLMConfigError("no AWS region for Bedrock (AWS_REGION)", provider=PROVIDER)
    return build_request(**call, credentials=creds, region=region, base_url=config.base_url, mode=config.mode,
                         cache=config.prompt_cache)


# The provider's one declaration (listed by triage.llm.providers): credentials are AWS's own variables, read by
# `request_for`; the endpoint is the region's.
PROTOCOL = Provider(name=PROVIDER, key_variable=None, default_url=None, output_modes=("json_schema", "tool"),
                    request=request_for, parse=parse_response,
                    secret_variables=("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
                    cache_read_ratio=CACHE_READ_RATIO, cache_write_ratio=CACHE_WRITE_RATIO)

__all__ = ["PROTOCOL", "PROVIDER", "SIGNING_SERVICE", "TOOL_DESCRIPTION", "AwsCredentials", "build_request",
           "credentials_from_env", "endpoint", "parse_response", "region_from_env", "request_for", "sign"]
