"""Scripted faults for the LLM stand-ins: what one call should get instead of a good answer.

A `Fault` is provider-neutral; each stand-in renders it in its provider's own shape (status, headers, body).
Script it with `server.script(Fault.rate_limited(retry_after=2), {...plan...}, ...)`. Imports: the standard
library only.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

KINDS = ("rate_limited", "quota_exhausted", "server_error", "slow", "malformed_json", "schema_invalid", "refusal",
         "truncated", "raw_output", "error", "raw", "stopped")
# A plan that matches no plan schema a caller would send: an unknown key, nothing required.
INVALID_PLAN: dict[str, Any] = {"unexpected": "this key is not in the requested schema"}


@dataclass(frozen=True)
class Fault:
    """One scripted abnormal answer. Build with the class methods; `delay` (seconds) applies to any fault."""

    kind: str
    status: int = 200
    retry_after: int | float | str | None = None
    message: str | None = None
    error_type: str | None = None
    plan: dict[str, Any] | None = None
    text: str | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0  # seconds between the bytes of the body (0: sent at once)
    stop_reason: str | None = None
    off_contract: bool = False  # the answer breaks the provider's contract on purpose: do not record a violation

    def after(self, seconds: float) -> Fault:
        """The same fault, answered only after `seconds`."""
        return replace(self, delay=seconds)

    def dripping(self, seconds_per_byte: float) -> Fault:
        """The same answer, its body sent one byte every `seconds_per_byte` (each read sees data: only a total
        deadline cuts it)."""
        return replace(self, drip=seconds_per_byte)

    @classmethod
    def stopped(cls, reason: str, text: str | None = None) -> Fault:
        """A 200 whose stop reason is `reason` (Anthropic `pause_turn` / `model_context_window_exceeded`, Bedrock
        `model_context_window_exceeded`, OpenAI `tool_calls` with content null), with `text` said so far."""
        return cls("stopped", 200, text=text, stop_reason=reason)

    @classmethod
    def rate_limited(cls, retry_after: int | float | str | None = None) -> Fault:
        """429 (Bedrock: ThrottlingException) with `Retry-After: retry_after` (seconds or an HTTP date), or none.
        OpenAI's description allows only integer seconds >= 1: any other value is marked off the contract (what an
        OpenAI-compatible proxy may send). On Anthropic a 429 without retry-after is how a spend limit looks."""
        whole = (isinstance(retry_after, int) and not isinstance(retry_after, bool)) or (
            isinstance(retry_after, str) and retry_after.isdigit())
        off = retry_after is not None and not (whole and int(retry_after) >= 1)
        return cls("rate_limited", 429, retry_after=retry_after, off_contract=off)

    @classmethod
    def quota_exhausted(cls) -> Fault:
        """OpenAI 429 `insufficient_quota`, Anthropic 429 spend limit, Bedrock ServiceQuotaExceededException: no
        Retry-After."""
        return cls("quota_exhausted", 429)

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """500, 502, 503, 504 or 529 (Anthropic's overloaded_error) in the provider's error shape."""
        return cls("server_error", status)

    @classmethod
    def overloaded(cls) -> Fault:
        return cls.server_error(529)

    @classmethod
    def slow(cls, seconds: float, plan: dict[str, Any] | None = None) -> Fault:
        """A good answer (`plan`, else the responder's) sent only after `seconds`: for client timeouts."""
        return cls("slow", 200, plan=plan, delay=seconds)

    @classmethod
    def malformed_json(cls) -> Fault:
        """200 whose body is cut in the middle of the JSON envelope."""
        return cls("malformed_json", 200, off_contract=True)

    @classmethod
    def schema_invalid(cls, plan: dict[str, Any] | None = None) -> Fault:
        """A valid envelope whose answer does not match the requested schema (default: INVALID_PLAN)."""
        return cls("schema_invalid", 200, plan=dict(INVALID_PLAN if plan is None else plan))

    @classmethod
    def refusal(cls, text: str = "I'm sorry, but I can't help with that request.") -> Fault:
        """OpenAI `message.refusal` set and content null; Anthropic `stop_reason: refusal`; Bedrock
        `stopReason: content_filtered`."""
        return cls("refusal", 200, text=text)

    @classmethod
    def truncated(cls, plan: dict[str, Any] | None = None) -> Fault:
        """`finish_reason: length` / `stop_reason: max_tokens` / `stopReason: max_tokens`, the answer cut half way
        (text cut mid-JSON; a forced tool's input holds only the first half of the keys)."""
        return cls("truncated", 200, plan=plan)

    @classmethod
    def raw_output(cls, text: str) -> Fault:
        """The model's answer is exactly `text` (e.g. prose, a JSON array), in a valid envelope."""
        return cls("raw_output", 200, text=text)

    @classmethod
    def error(cls, status: int, message: str | None = None, *, error_type: str | None = None,
              headers: dict[str, str] | None = None) -> Fault:
        """Any other error status (400, 401, 403, 404, 413, ...) in the provider's error shape; `error_type`
        overrides the provider's type/code for the status."""
        return cls("error", status, message=message, error_type=error_type, headers=dict(headers or {}))

    @classmethod
    def raw(cls, status: int, body: bytes | dict | list | str, headers: dict[str, str] | None = None) -> Fault:
        """Exactly this status, headers and body; never checked against the contract."""
        return cls("raw", status, body=body, headers=dict(headers or {}), off_contract=True)


def cut_text(text: str) -> str:
    """`text` cut in the middle (at least one character kept, at least one removed)."""
    return text[: max(1, len(text) // 2)] if len(text) > 1 else ""


def half_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """The first half of a plan's keys (what a forced tool's input looks like when the output was cut)."""
    keys = list(plan)[: len(plan) // 2]
    return {key: plan[key] for key in keys}
