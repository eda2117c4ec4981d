"""The model client: one structured-output call over the provider protocols (declared in `openai_chat`,
`anthropic_messages`, `bedrock_converse`, listed by `triage.llm.providers`, which every provider-specific choice
here goes through) and the shared retry loop (`triage.http.retry`), within a per-run budget.

What it promises: `Retry-After` is honoured (within `max_wait`); quota and spend-limit errors, refusals, truncated
and unusable replies are never retried; a timeout is not retried either (the provider may still bill the call);
every HTTP attempt counts against the run's `Budget` of calls, and the tokens providers report count against its
tokens; the key is passed to every error as a secret to scrub and never appears in a repr; a reply that repeats
8 consecutive characters of the key (or an AWS secret) is refused (`LLMSecretEchoed`): a model cannot know the
key, so its answer is not trusted, and the rubric plans the issue.

Bounds (a model is hostile too): one attempt has a TOTAL deadline (`timeout`: connecting, sending, the headers
and the body together; a server that drips one byte a second is cut when it passes, not only a silent one), and
at most `MAX_REPLY_BYTES` are read; the body is parsed only within the depth limit (`triage.llm.common`).

May import: the standard library, `triage.llm`, `triage.http`, and `requests` (inside `_send` only, so building
a client for a test or a replay needs no HTTP library).
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from triage.http.retry import call_with_retries, verdict_from_exception, retry as retry_verdict, fail as fail_verdict
from triage.llm import providers
from triage.llm.common import MAX_REPLY_BYTES, Reply, Request, repeats_secret
from triage.llm.errors import LLMConfigError, LLMError, LLMOversized, LLMSecretEchoed, LLMTransient
from triage.llm.pricing import Prices

DEFAULT_MAX_TOKENS = 1500


class LLMBudgetExhausted(LLMError):
    """The run's budget of model calls or tokens is spent: the rubric plans the rest of the run."""


class LLMTimeout(LLMError):
    """No whole answer within the call's total deadline. Not retried: the provider may still be working on (and
    billing) it."""


@dataclass
class Budget:
    """Per run: at most `max_calls` HTTP attempts to the model and `max_tokens` tokens (None: unlimited). Shared
    by every issue of the run (a sweep), thread-safe."""

    max_calls: int | None = 50
    max_tokens: int | None = None
    calls: int = 0
    input_tokens: int = 0  # every input token, cached or not
    output_tokens: int = 0
    cached_input_tokens: int = 0  # of the input tokens, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of the input tokens, written to it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def take_call(self) -> None:
        with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                raise LLMBudgetExhausted(f"the run's budget of {self.max_calls} model calls is spent")
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                raise LLMBudgetExhausted(f"the run's budget of {self.max_tokens} tokens is spent")
            self.calls += 1

    def add_tokens(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
                   cache_write_tokens: int = 0) -> None:
        with self._lock:
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            self.cached_input_tokens += cached_input_tokens
            self.cache_write_tokens += cache_write_tokens

    def add(self, counted) -> None:
        """The tokens a `Reply` or an `LLMError` carries."""
        self.add_tokens(counted.input_tokens, counted.output_tokens, getattr(counted, "cached_input_tokens", 0),
                        getattr(counted, "cache_write_tokens", 0))


@dataclass(frozen=True)
class LLMConfig:
    """What the model planner needs to reach a model. `api_key` is never shown (repr=False)."""

    provider: str = ""  # a name in triage.llm.providers; "" is its default
    model: str = ""
    base_url: str | None = None
    api_key: str = field(default="", repr=False)
    connect_timeout: float = 10.0
    timeout: float = 60.0  # total deadline of one attempt (connect, send, headers, body), seconds
    max_calls: int | None = 50
    max_tokens_per_run: int | None = None
    max_output_tokens: int = DEFAULT_MAX_TOKENS
    max_retries: int = 2
    max_wait: float = 30.0
    prices: Prices = Prices()
    region: str | None = None  # Bedrock
    output_mode: str = "auto"  # auto | json_schema | tool (see triage.llm.common.OUTPUT_MODES)
    max_reply_bytes: int = MAX_REPLY_BYTES
    # Mark the system prompt (the same for every issue of a queue) as the provider's cache point: Anthropic's
    # `cache_control`, Bedrock's `cachePoint`, OpenAI's `prompt_cache_key` (its own API only).
    prompt_cache: bool = True

    def __post_init__(self) -> None:
        if not self.provider:
            object.__setattr__(self, "provider", providers.DEFAULT)
        known = providers.REGISTRY.get(self.provider)  # an unknown one: check() says so
        if known is not None and self.prices is not None:  # cache prices: the provider's published ratios
            object.__setattr__(self, "prices", self.prices.with_cache_ratios(known.cache_read_ratio,
                                                                             known.cache_write_ratio))

    @property
    def mode(self) -> str:
        """The structured-output form sent: the provider's first (json_schema for every one) unless another one it
        offers (`tool`) was chosen; LLMConfigError for one it does not offer."""
        return providers.mode_for(providers.get(self.provider), self.output_mode)

    def check(self) -> "LLMConfig":
        provider = providers.get(self.provider)
        providers.mode_for(provider, self.output_mode)
        if not (self.timeout > 0 and self.connect_timeout > 0):
            raise LLMConfigError("the model call's timeouts must be positive numbers of seconds")
        if not self.model.strip():
            raise LLMConfigError(f"no model named for the {self.provider} provider (--llm-model / llm-model)")
        if provider.key_variable and not self.api_key and not self.base_url:
            raise LLMConfigError(f"no API key for the {self.provider} provider: set {provider.key_variable} "
                                 "(or the llm-api-key input from a secret)")
        return self


def config_from_environ(environ: Mapping[str, str], **given: Any) -> LLMConfig:
    """`given` options (None and "" ones are not given) over what the environment says: the provider's key
    variable. Every given option is a field of `LLMConfig`: one it does not have is a TypeError, never dropped."""
    options = {k: v for k, v in given.items() if v is not None and v != ""}
    provider = providers.REGISTRY.get(options.get("provider") or providers.DEFAULT)  # unknown: check() says so
    if provider is not None and provider.key_variable and not options.get("api_key"):
        options["api_key"] = environ.get(provider.key_variable, "").strip()
    return LLMConfig(**options)


class LLMClient:
    """`complete(system, user, schema)` -> `Reply`, or a typed `LLMError` (or `triage.http.errors.HTTPError`'s
    `BudgetExhausted` when the retry loop's deadline ran out). `send` may be injected: `(Request, timeouts) ->
    (status, headers, body)`."""

    def __init__(self, config: LLMConfig, *, budget: Budget | None = None, environ: Mapping[str, str] | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 send: Callable[[Request, tuple[float, float]], tuple[int, Any, bytes]] | None = None):
        self.config = config.check()
        self.budget = budget or Budget(config.max_calls, config.max_tokens_per_run)
        self._environ = os.environ if environ is None else environ
        self._sleep, self._clock = sleep, clock
        self._send = send or _send

    def __repr__(self) -> str:
        return f"LLMClient(provider={self.config.provider!r}, model={self.config.model!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        env = self._environ
        return tuple(s for s in (self.config.api_key, *(env.get(v, "") for v in providers.secret_variables())) if s)

    def build(self, system: str, user: str, schema: Mapping[str, Any], schema_name: str) -> Request:
        c = self.config
        return providers.get(c.provider).request(c, self._environ, model=c.model, system=system, user=user,
                                                 schema=schema, schema_name=schema_name,
                                                 max_tokens=c.max_output_tokens)

    def complete(self, system: str, user: str, schema: Mapping[str, Any], schema_name: str, *,
                 key: str = "") -> Reply:
        """One answer (`key` names the issue for recording wrappers; unused here)."""
        c = self.config
        secrets = self.secrets
        parse_response = providers.get(c.provider).parse
        timeouts = (c.connect_timeout, c.timeout)

        def send():
            self.budget.take_call()  # raises when spent: before the request, never after
            request = self.build(system, user, schema, schema_name)  # Bedrock signs with the time of sending
            return _within(c.timeout, lambda: self._send(request, timeouts), provider=c.provider)

        def parse(result):
            status, headers, body = result
            try:
                reply = parse_response(status, headers, body, now=time.time(), redact=secrets)
            except LLMError as exc:
                self.budget.add(exc)
                raise
            self.budget.add(reply)
            if repeats_secret((reply.raw_text, json.dumps(reply.plan, ensure_ascii=False)), secrets):
                raise LLMSecretEchoed("the reply repeats part of the model's credential, which the model cannot "
                                      "know: the answer is not trusted", provider=c.provider, status=status,
                                      input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                                      cached_input_tokens=reply.cached_input_tokens,
                                      cache_write_tokens=reply.cache_write_tokens)
            return reply

        def on_transport_error(exc: BaseException):
            if isinstance(exc, LLMError):
                return fail_verdict(exc)  # our own budget or configuration: never retried
            name = type(exc).__name__
            if name in ("ReadTimeout", "Timeout") or isinstance(exc, TimeoutError):
                return fail_verdict(LLMTimeout(f"no whole answer within {c.timeout:g} s (llm-timeout)",
                                               provider=c.provider))
            # Connection refused or reset before an answer: nothing was processed, safe to try again.
            return retry_verdict(LLMTransient(f"connection failed ({name})", provider=c.provider, redact=secrets))

        deadline = self._clock() + (c.max_retries + 1) * (c.timeout + c.connect_timeout) + c.max_wait
        return call_with_retries(send, verdict_from_exception(parse), sleep=self._sleep, clock=self._clock,
                                 max_retries=c.max_retries, max_wait=c.max_wait, deadline=deadline,
                                 on_transport_error=on_transport_error, what=f"POST {c.provider}")


def _within(seconds: float, work: Callable[[], Any], *, provider: str) -> Any:
    """`work()`'s result, or TimeoutError once `seconds` have passed in total, however the bytes arrive. The work
    runs in a daemon thread; on the deadline it is abandoned (it holds one socket until the server gives up or the
    run ends) and the call fails now, so a server dripping a byte a second cannot hold the run."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as is
            box["error"] = exc

    worker = threading.Thread(target=run, name=f"ptd-triage-{provider}-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"no whole answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["result"]


def _send(request: Request, timeouts: tuple[float, float], *, limit: int = MAX_REPLY_BYTES) -> tuple[int, Any, bytes]:
    """One HTTP exchange with `requests`, reading at most `limit` bytes of the body (LLMOversized beyond)."""
    import requests

    try:
        response = requests.request(request.method, request.url, headers=request.headers, data=request.body,
                                    timeout=timeouts, allow_redirects=False, stream=True)
        with response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise LLMOversized(f"the reply is {int(declared)} bytes; the limit is {limit}",
                                   status=response.status_code)
            chunks, size = [], 0
            for chunk in response.iter_content(64 * 1024):
                size += len(chunk)
                if size > limit:
                    raise LLMOversized(f"the reply is larger than {limit} bytes", status=response.status_code)
                chunks.append(chunk)
    except requests.exceptions.Timeout as exc:
        raise TimeoutError(str(type(exc).__name__)) from None
    return response.status_code, response.headers, b"".join(chunks)


__all__ = ["Budget", "LLMBudgetExhausted", "LLMClient", "LLMConfig", "LLMTimeout", "config_from_environ"]
