"""What every provider protocol shares: its declaration (`Provider`), the `Request` to send, the `Reply` read back,
and pure helpers for headers, Retry-After, JSON bodies and the status -> error mapping. Imports: the standard library,
`triage.llm.errors` and `triage.http.errors` (the secret run length) only (no HTTP library: the caller does the I/O).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from triage.http.errors import SECRET_RUN, secret_grams

from .errors import (LLMAuthError, LLMBadRequest, LLMContextExceeded, LLMError, LLMInvalidReply, LLMOversized,
                     LLMRateLimited, LLMTransient)

Headers = Union[Mapping[str, str], Iterable[tuple[str, str]]]
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-amz-security-token"})
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FENCE_TAG = re.compile(r"[A-Za-z0-9_-]*")
# A model's reply is hostile: at most this many bytes are read, and no JSON nested deeper than this is parsed.
# The plan schema nests 4 levels inside the provider's envelope (about 6): 64 leaves room and refuses the
# 100,000-deep array that would exhaust the parser's recursion.
MAX_REPLY_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
# JSON strings (possessive: linear, no backtracking) and the brackets outside them.
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.S)
_BRACKETS = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
# Output modes: `json_schema` (the provider's native structured output: OpenAI `response_format`, Anthropic
# `output_config.format`, Bedrock `outputConfig.textFormat`) and `tool` (a forced tool, for older Anthropic and
# Bedrock models that lack the native form). `auto` is the provider's default, json_schema for all three.
OUTPUT_MODES = ("auto", "json_schema", "tool")


@dataclass(frozen=True)
class Provider:
    """One provider protocol, declared once in its own module (`PROTOCOL`) and listed by `triage.llm.providers`.

    `name` is what `--llm-provider` / the `llm-provider` input say; `key_variable` the environment variable its
    API key is read from (None: its request builder reads its own credentials, Bedrock's AWS variables);
    `secret_variables` further variables that hold secrets (kept out of every error); `default_url` where requests
    go without a base URL (None: derived per request, Bedrock's regional endpoint); `output_modes` the structured
    output forms it offers (`OUTPUT_MODES`; the first is what `auto` means); `request(config, environ, *, model,
    system, user, schema, schema_name, max_tokens)` builds a `Request` from the client's configuration;
    `parse(status, headers, body, *, now, redact)` reads a `Reply` or raises the typed error. `cache_read_ratio`
    and `cache_write_ratio` are the provider's published prices of an input token read from and written to its
    prompt cache, as a share of an ordinary input token's: the cost estimate's defaults when no cached price is
    configured."""

    name: str
    key_variable: str | None
    default_url: str | None
    output_modes: tuple[str, ...]
    request: Callable[..., "Request"]
    parse: Callable[..., "Reply"]
    secret_variables: tuple[str, ...] = ()
    cache_read_ratio: float = 1.0
    cache_write_ratio: float = 1.0


@dataclass(frozen=True)
class Request:
    """One HTTP request, ready to send as is (the body is final: Bedrock's signature covers it)."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes

    def __repr__(self) -> str:  # never show credentials, e.g. in a test failure or a log line
        shown = {k: ("***" if k.lower() in SECRET_HEADERS else v) for k, v in self.headers.items()}
        return f"Request(method={self.method!r}, url={self.url!r}, headers={shown!r}, body=<{len(self.body)} bytes>)"

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    """A usable answer: the model's JSON object (`plan`, not yet checked against the plan schema), the tokens the
    provider reported, and the raw text the object was read from. `input_tokens` counts every input token, cached
    or not; `cached_input_tokens` of them were read from the provider's prompt cache and `cache_write_tokens`
    written to it (each provider reports these in its own fields; its parser reads them into these)."""

    plan: dict[str, Any]
    input_tokens: int
    output_tokens: int
    raw_text: str = field(repr=False)
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0


def header(headers: Headers, name: str) -> str | None:
    """Case-insensitive header lookup over a mapping (dict, requests' or http.client's) or (name, value) pairs."""
    items = headers.items() if isinstance(headers, Mapping) or hasattr(headers, "items") else headers
    wanted = name.lower()
    for key, value in items:
        if key.lower() == wanted:
            return value
    return None


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After value: delta-seconds ("2", also "1.5") or an HTTP date, which needs `now`
    (Unix seconds) to become a delay; a date in the past gives 0. None when absent, unparseable, or a date without
    `now`."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    if now is None:
        return None
    from email.utils import parsedate_to_datetime  # only for a date: most replies give seconds, or nothing

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def retry_after(headers: Headers, *, now: float | None = None) -> float | None:
    """The delay a response asks for: `retry-after-ms` (OpenAI and compatible servers) wins over `Retry-After`."""
    millis = parse_retry_after(header(headers, "retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    return parse_retry_after(header(headers, "retry-after"), now=now)


def encode_json(obj: Any) -> bytes:
    """The request body bytes: compact, UTF-8, deterministic."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_depth(text: str) -> int:
    """How deeply `text`'s JSON arrays and objects nest, counted without recursion and without parsing (strings
    removed by one linear regex, then a running sum over the brackets), so a hostile reply is measured safely."""
    depth = deepest = 0
    for ch in _JSON_STRING.sub("", text):
        step = _BRACKETS.get(ord(ch))
        if step:
            depth += step
            deepest = max(deepest, depth)
    return deepest


def loads_bounded(text: str | bytes, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_REPLY_BYTES,
                  provider: str = "", what: str = "the reply") -> Any:
    """json.loads with a size and a depth limit checked first (LLMOversized); ValueError when it is not JSON."""
    if isinstance(text, bytes):
        if len(text) > max_bytes:
            raise LLMOversized(f"{what} is larger than {max_bytes} bytes", provider=provider)
        text = text.decode("utf-8")
    if len(text) > max_bytes:
        raise LLMOversized(f"{what} is larger than {max_bytes} characters", provider=provider)
    depth = json_depth(text)
    if depth > max_depth:
        raise LLMOversized(f"{what} nests JSON {depth} levels deep (the limit is {max_depth})", provider=provider)
    return json.loads(text)


def decode_json(body: bytes, *, provider: str = "") -> Any:
    """Parse a response body within the size and depth limits; ValueError when it is not JSON, LLMOversized when
    it is too large or too deep."""
    return loads_bounded(body if isinstance(body, bytes) else body.encode("utf-8"), provider=provider,
                         what="the response body")


def check_name(name: str) -> str:
    """Schema and tool names must match ^[A-Za-z0-9_-]{1,64}$ for all three providers."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"schema_name must match ^[A-Za-z0-9_-]{{1,64}}$, got {name!r}")
    return name


def check_common(model: str, max_tokens: int, schema: Mapping[str, Any]) -> None:
    if not isinstance(model, str) or not model.strip():
        raise ValueError("model must be a non-empty string")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError("schema must be a JSON Schema whose root is {'type': 'object', ...}")


def plan_from_text(text: Any, *, provider: str, input_tokens: int = 0, output_tokens: int = 0,
                   cached_input_tokens: int = 0, cache_write_tokens: int = 0) -> dict[str, Any]:
    """The JSON object in a model's text answer (one surrounding ``` fence is tolerated); LLMInvalidReply when the
    text is missing, not JSON, or not an object."""
    tokens = {"provider": provider, "input_tokens": input_tokens, "output_tokens": output_tokens,
              "cached_input_tokens": cached_input_tokens, "cache_write_tokens": cache_write_tokens}
    if not isinstance(text, str) or not text.strip():
        raise LLMInvalidReply("the reply has no text content", **tokens)
    stripped = _unfenced(text.strip())
    try:
        value = loads_bounded(stripped, provider=provider, what="the model's answer")
    except LLMOversized as exc:
        exc.input_tokens, exc.output_tokens = input_tokens, output_tokens
        exc.cached_input_tokens, exc.cache_write_tokens = cached_input_tokens, cache_write_tokens
        raise
    except ValueError as exc:
        raise LLMInvalidReply(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})", **tokens) from None
    if not isinstance(value, dict):
        raise LLMInvalidReply(f"the reply is JSON but not an object (got {type(value).__name__})", **tokens)
    return value


def _unfenced(text: str) -> str:
    """`text` without one surrounding ``` fence (an opening line "```tag", a closing "```" on its own line), else
    as is. String operations, not a regex: a fence pattern with `\\s*` on both sides of `(.*)` backtracks
    cubically on a reply of many newlines (10,000 of them never finished), and no deadline covers parsing."""
    if len(text) < 7 or not (text.startswith("```") and text.endswith("```")):
        return text
    head, newline, rest = text.partition("\n")
    if not newline or not _FENCE_TAG.fullmatch(head[3:].strip()):
        return text
    inner = rest[:-3]
    tail = inner[len(inner.rstrip()):]
    if "\n" not in tail:  # the closing fence is not on its own line
        return text
    return inner.strip()


# The providers' published key prefixes ("sk-proj-", "sk-ant-api03-", an AWS key id's "AKIA"): every key of a kind
# starts with them, so they are no secret, and an issue that quotes one (a reporter's auth error, say) must not
# make the model's answer look like a leak. Only what follows counts.
PUBLIC_KEY_PREFIX = re.compile(r"^(?:sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin)\d*-)?|AKIA|ASIA)")


def repeats_secret(texts: Iterable[str], secrets: Iterable[str], *, run: int = SECRET_RUN) -> bool:
    """Whether any of `texts` holds `run` consecutive characters of one of `secrets` or of one of their common
    transforms (reversed, URL-encoded, base64: `triage.http.errors.secret_forms`) (SECRET_RUN: the length the
    Action's scrubber masks too). A secret shorter than `run` is not a credential a model could be talked into
    leaking but a local server's placeholder ("none", "EMPTY", "ollama"), and words like "none" are in every
    answer: it never counts; nor does a provider's public key prefix (PUBLIC_KEY_PREFIX). One pass per text."""
    private = {PUBLIC_KEY_PREFIX.sub("", s.strip(), count=1) for s in secrets if s}
    grams = secret_grams(tuple(sorted(s for s in private if len(s) >= run)), run)  # its transforms too (issue 30)
    return bool(grams) and any(text[i:i + run] in grams for text in texts for i in range(len(text) - run + 1))


def as_count(value: Any) -> int:
    """A token count from a usage field; anything that is not a non-negative integer counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def usage_tokens(uncached: int, output: int, cached: int = 0, written: int = 0) -> dict[str, int]:
    """The token counts every reply and error carries, from a provider that reports its input tokens apart from
    the cached (read) and cache-write ones (Anthropic, Bedrock): `input_tokens` counts them all."""
    return {"input_tokens": uncached + cached + written, "output_tokens": output, "cached_input_tokens": cached,
            "cache_write_tokens": written}


def reply_of(plan: dict[str, Any], tokens: dict[str, int], raw_text: str) -> Reply:
    """A `Reply` with the token counts `usage_tokens` (or a parser's own dict of the same keys) gives."""
    return Reply(plan, tokens["input_tokens"], tokens["output_tokens"], raw_text,
                 cached_input_tokens=tokens.get("cached_input_tokens", 0),
                 cache_write_tokens=tokens.get("cache_write_tokens", 0))


def error_for_status(status: int, message: str, *, provider: str, headers: Headers, now: float | None,
                     redact: Iterable[str]) -> LLMError:
    """The generic mapping used when a provider-specific rule did not decide, as the official SDKs decide it:
    `x-should-retry: true|false` first (both SDKs obey it), then 401/403 auth, 413 context, 429 rate limit,
    408/409/5xx (and 529) transient, any other status bad request."""
    kw = {"provider": provider, "status": status, "redact": redact}
    should = (header(headers, "x-should-retry") or "").strip().lower()
    if should == "true" and status not in (401, 403):
        return LLMRateLimited(message, retry_after=retry_after(headers, now=now), **kw) if status == 429 else \
            LLMTransient(message, **kw)
    if should == "false" and status not in (401, 403):
        return LLMBadRequest(message, **kw)
    if status == 413:
        return LLMContextExceeded(message, **kw)
    if status in (401, 403):
        return LLMAuthError(message, **kw)
    if status == 429:
        return LLMRateLimited(message, retry_after=retry_after(headers, now=now), **kw)
    if status in (408, 409) or status >= 500:
        return LLMTransient(message, **kw)
    return LLMBadRequest(message, **kw)


def output_mode(mode: str | None) -> str:
    """`auto` (or nothing) -> json_schema; json_schema and tool as they are; ValueError otherwise."""
    chosen = chosen_mode(mode)
    if chosen not in OUTPUT_MODES:
        raise ValueError(f"output mode must be one of {', '.join(OUTPUT_MODES)}, got {mode!r}")
    return "json_schema" if chosen == "auto" else chosen


def chosen_mode(mode: str | None) -> str:
    """An output mode as a user may write it ("Tool", "json-schema", nothing), in `OUTPUT_MODES`' spelling."""
    return (mode or "auto").strip().lower().replace("-", "_")


__all__ = ["Headers", "MAX_DEPTH", "MAX_REPLY_BYTES", "OUTPUT_MODES", "Provider", "Reply", "Request",
           "SECRET_HEADERS", "as_count", "check_common", "check_name", "chosen_mode", "decode_json", "encode_json",
           "error_for_status", "header", "json_depth", "loads_bounded", "output_mode", "parse_retry_after",
           "plan_from_text", "repeats_secret", "reply_of", "retry_after", "usage_tokens"]


def reply_object(status: int, headers: Headers, body: bytes, error: Any, *, provider: str, now: float | None,
                 redact: Iterable[str]) -> dict[str, Any]:
    """The JSON object of a 2xx reply, or the typed error the response means (`error(status, headers, data, now=,
    redact=)` is the provider's own mapping of its error bodies). Every provider's `parse_response` starts here."""
    try:
        data = decode_json(body, provider=provider)
    except LLMOversized as exc:
        exc.status = status
        raise
    except ValueError:
        data = None
        if 200 <= status < 300:
            raise LLMInvalidReply("the response body is not valid JSON", provider=provider, status=status) from None
    if not 200 <= status < 300:
        raise error(status, headers, data, now=now, redact=redact)
    if not isinstance(data, dict):
        raise LLMInvalidReply("the response is not a JSON object", provider=provider, status=status)
    return data
