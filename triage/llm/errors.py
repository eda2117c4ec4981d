"""Typed errors of the LLM provider protocol (`triage.llm`). Imports: the standard library only.

Every error says what the caller's retry loop must do (`retryable`) and carries the tokens the call cost when the
provider reported them (a refusal or a truncated reply is billed). Messages are clipped and scrubbed: the caller's
secrets (`redact=`) and anything shaped like an API key, bearer token or AWS access key id are replaced by `***`,
so an error can be printed or logged without leaking a credential.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from triage.http.errors import MAX_MESSAGE, scrub

# One scrubber for every client's errors: the shared one in triage.http.errors (keys, tokens, the given secrets).


class LLMError(Exception):
    """Base class. `status` is the HTTP status (None when not from a response); `provider` names the protocol."""

    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, provider: str = "", status: int | None = None, input_tokens: int = 0,
                 output_tokens: int = 0, cached_input_tokens: int = 0, cache_write_tokens: int = 0,
                 redact: Iterable[str] = ()):
        self.message = scrub(str(message), redact)
        self.provider, self.status = provider, status
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        # Of `input_tokens`: read from the provider's prompt cache, and written to it (billed differently).
        self.cached_input_tokens, self.cache_write_tokens = cached_input_tokens, cache_write_tokens
        super().__init__(self.message)

    def __str__(self) -> str:
        where = " ".join(part for part in (self.provider, f"HTTP {self.status}" if self.status else "") if part)
        return f"{where}: {self.message}" if where else self.message


class LLMRateLimited(LLMError):
    """429 (or a provider's throttling error): retry after `retry_after` seconds, or a backoff of the caller's
    choice when the provider gave no delay (None)."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class LLMQuotaExceeded(LLMError):
    """Quota, spend limit or credit exhausted: needs a person, never retried."""


class LLMTransient(LLMError):
    """A server-side failure worth retrying: 5xx, 529 overloaded, 408/409, a model not ready or timed out."""

    retryable = True


class LLMAuthError(LLMError):
    """The credentials were missing, wrong, expired or not allowed (401/403)."""


class LLMRefused(LLMError):
    """The model declined to answer (a refusal or a content filter)."""


class LLMTruncated(LLMError):
    """The reply hit the output-token limit (`finish_reason: length`, `stop_reason: max_tokens`)."""


class LLMInvalidReply(LLMError):
    """The reply was not usable: malformed JSON, no content, or an answer that is not a JSON object."""


class LLMContextExceeded(LLMError):
    """The prompt does not fit the model's context window (OpenAI `context_length_exceeded`, Anthropic and Bedrock
    `model_context_window_exceeded`, a 413): the same prompt cannot fit on a second try, so no repair, no retry."""


class LLMNoAnswer(LLMError):
    """The model stopped without the structured answer and asking again costs a call that cannot help: Anthropic
    `pause_turn`, an OpenAI reply with `tool_calls` and `content: null`, an empty turn."""


class LLMOversized(LLMError):
    """The reply is larger than the size limit or nested deeper than the depth limit: read no further, parsed
    never (a 100,000-deep array would exhaust the parser's recursion). Not repaired: the next reply can be the same."""


class LLMSecretEchoed(LLMError):
    """The reply repeats the model's credential (8 or more consecutive characters of the API key or an AWS secret):
    the model cannot know it, so something between the run and the model is not what it seems, and the answer is not
    trusted. Not repaired, not retried: the rubric plans the issue. The message never shows what was repeated."""


class LLMBadRequest(LLMError):
    """The provider rejected the request (400/404/413/422 and other 4xx): a bug or a configuration error."""


class LLMConfigError(LLMError):
    """The protocol cannot be used as configured (e.g. the `bedrock` extra, botocore, is not installed)."""


__all__ = ["LLMAuthError", "LLMBadRequest", "LLMConfigError", "LLMContextExceeded", "LLMError", "LLMInvalidReply",
           "LLMNoAnswer", "LLMOversized", "LLMQuotaExceeded", "LLMRateLimited", "LLMRefused", "LLMSecretEchoed",
           "LLMTransient", "LLMTruncated", "MAX_MESSAGE", "scrub"]
