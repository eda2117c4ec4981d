"""The model providers' protocols, sans I/O (in the spirit of gidgethub's `sansio`), and the client over them.
Nothing here knows about triage: the prompt, the plan schema and how an answer becomes decisions are the model
planners' (`triage.planners.model`).

Each provider module has two pure functions: `build_request(...) -> Request` (method, URL, headers, body bytes)
and `parse_response(status, headers, body) -> Reply` (the model's JSON object and token counts), which raises a
typed error from `triage.llm.errors` for everything else, and declares itself once (`PROTOCOL`: its name, key
variable, default URL, output modes, request builder and parser). The caller owns the HTTP client, timeouts,
retries and budgets. Modules:

- `errors`: the error types; `common`: Provider, Request, Reply and shared helpers (Retry-After, JSON, headers);
- `openai_chat` (any OpenAI-compatible base URL), `anthropic_messages`, `bedrock_converse` (SigV4 via botocore,
  imported lazily: the optional `bedrock` extra); `providers`: the registry that lists them;
- `client`: one structured-output call within a run's budget; `options`: typed options -> the client;
  `recording`: record replies once, replay them offline;
- `pricing`: estimated cost from token counts.

No module here imports an HTTP library, and importing this package imports nothing but the standard library, so
the default rubric planner's start-up is unchanged.

May import: the standard library, `triage.http` (the shared retry loop, in the clients); HTTP libraries and
botocore only lazily, inside the clients. Never `triage.config`, `triage.core` or `triage.planners`
(tests/test_architecture.py).
"""
from __future__ import annotations

from .common import Reply, Request
from .errors import (LLMAuthError, LLMBadRequest, LLMConfigError, LLMContextExceeded, LLMError, LLMInvalidReply,
                     LLMNoAnswer, LLMOversized, LLMQuotaExceeded, LLMRateLimited, LLMRefused, LLMTransient,
                     LLMTruncated)

__all__ = ["LLMAuthError", "LLMBadRequest", "LLMConfigError", "LLMContextExceeded", "LLMError", "LLMInvalidReply",
           "LLMNoAnswer", "LLMOversized", "LLMQuotaExceeded", "LLMRateLimited", "LLMRefused", "LLMTransient",
           "LLMTruncated", "Reply", "Request"]
