"""Record a model's replies once, replay them offline for free: `eval --record DIR` and `eval --replay DIR`.

One file per issue, `DIR/issue-N.json`: the provider and model, and per call either the reply (the model's JSON
object and its tokens) or the error it ended in (its type and one-line, scrubbed message), so a replay reproduces
fallbacks too. The prompt is not part of the key on purpose: replaying a recorded model against a changed rubric
is the point (the rubric's hints in the prompt change, the model's answers do not).

May import: the standard library, `triage.llm`.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from triage.llm import errors as llm_errors
from triage.llm.common import Reply
from triage.llm.errors import LLMError, LLMInvalidReply


# What a call cost, as a reply or an error carries it (`Budget.add_tokens` takes them in this order).
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")


class ReplayMissing(LLMError):
    """No recorded reply for this issue (or fewer calls recorded than asked)."""


def _path(directory: Path, key: str) -> Path:
    safe = "".join(ch for ch in str(key) if ch.isalnum() or ch in "-_") or "unknown"
    return directory / f"issue-{safe}.json"


class RecordingClient:
    """Wraps a client; writes each issue's calls to DIR as they happen."""

    def __init__(self, inner: Any, directory: str | Path):
        self.inner, self.directory = inner, Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.budget, self.config = inner.budget, inner.config
        self._calls: dict[str, list[dict]] = {}

    def complete(self, system, user, schema, schema_name, *, key: str = "unknown") -> Reply:
        started = time.perf_counter()
        entry: dict[str, Any]
        try:
            reply = self.inner.complete(system, user, schema, schema_name, key=key)
            entry = {"reply": {"plan": reply.plan, "input_tokens": reply.input_tokens,
                               "output_tokens": reply.output_tokens,
                               "cached_input_tokens": reply.cached_input_tokens,
                               "cache_write_tokens": reply.cache_write_tokens}}
            return reply
        except Exception as exc:
            entry = {"error": {"type": type(exc).__name__, "message": str(getattr(exc, "message", exc))[:500],
                               **{k: getattr(exc, k, 0) for k in TOKEN_FIELDS}}}
            raise
        finally:
            entry["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
            calls = self._calls.setdefault(key, [])
            calls.append(entry)
            document = {"version": 1, "issue": key, "provider": self.config.provider, "model": self.config.model,
                        "calls": calls}
            _path(self.directory, key).write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")


class ReplayClient:
    """Answers from DIR, in the recorded order per issue; sends nothing."""

    def __init__(self, directory: str | Path, *, budget=None, config=None):
        from triage.llm.client import Budget, LLMConfig

        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise LLMError(f"--replay {directory}: no such directory")
        self.budget = budget or Budget(max_calls=None)
        self.config = config or LLMConfig(model="replay", api_key="replay")
        self._used: dict[str, int] = {}

    def complete(self, system, user, schema, schema_name, *, key: str = "unknown") -> Reply:
        path = _path(self.directory, key)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            calls = document["calls"]
        except (OSError, ValueError, KeyError, TypeError):
            raise ReplayMissing(f"no recorded reply for issue {key} in {self.directory}") from None
        index = self._used.get(key, 0)
        if index >= len(calls):
            raise ReplayMissing(f"issue {key}: only {len(calls)} call(s) recorded")
        self._used[key] = index + 1
        self.budget.take_call()
        call = calls[index]
        if "reply" in call:
            r = call["reply"]
            tokens = _tokens(r)
            self.budget.add_tokens(*tokens.values())
            if not isinstance(r.get("plan"), dict):
                raise LLMInvalidReply("the recorded reply is not a JSON object")
            return Reply(r["plan"], tokens["input_tokens"], tokens["output_tokens"], json.dumps(r["plan"]),
                         cached_input_tokens=tokens["cached_input_tokens"],
                         cache_write_tokens=tokens["cache_write_tokens"])
        err = call.get("error") or {}
        kind = getattr(llm_errors, str(err.get("type")), None)
        kind = kind if isinstance(kind, type) and issubclass(kind, LLMError) else LLMError
        tokens = _tokens(err)
        self.budget.add_tokens(*tokens.values())
        raise kind(f"(replayed) {err.get('message', 'recorded failure')}", **tokens)


def _tokens(recorded: dict) -> dict[str, int]:
    """A recorded call's token counts, in `TOKEN_FIELDS` order (a recording made before cached tokens were
    recorded has none)."""
    return {k: int(recorded.get(k, 0) or 0) for k in TOKEN_FIELDS}


__all__ = ["RecordingClient", "ReplayClient", "ReplayMissing"]
