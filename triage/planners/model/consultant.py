"""Asking the model about one issue: the rendered prompt, the closed schema, one answer and at most one repair of
an answer that does not conform. What an ask cost (calls, tokens, of them cached and written to the provider's
cache, estimated cost, latency) is part of its result, whether it answered or failed: a failure is a value here
(`Asked.failure`), not an exception carrying its bill.

May import: the standard library, `triage.config`, `triage.core`, `triage.llm.errors`, `triage.llm.client`,
`triage.http.errors`,
`triage.planners.model.*` (the client only as an object handed in).
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from triage.config.bundle import Bundle
from triage.core.plan import FallbackKind, ModelFallback
from triage.core.snapshot import IssueSnapshot
from triage.http.errors import HTTPError
from triage.llm.client import LLMBudgetExhausted
from triage.llm.errors import LLMError, LLMInvalidReply
from triage.planners.model.answer import one_line
from triage.planners.model.checks import answer_problems
from triage.planners.model.schema import SCHEMA_NAME, plan_schema, schema_problems


@dataclass(frozen=True)
class Asked:
    """One issue's ask: the conforming answer (None when the ask failed), what it cost (`usage`: provider, model,
    calls, tokens, estimated cost, latency; empty when nothing was sent), and why it failed (None when it
    answered): its kind (the call budget spent, or a failure) and one line."""

    answer: dict | None
    usage: dict[str, Any]
    fallback: ModelFallback | None = None

    @property
    def failure(self) -> str | None:
        return self.fallback.reason if self.fallback is not None else None


# The token counts a reply or an error carries: every input token, the output tokens, and of the input tokens those
# read from the provider's prompt cache and those written to it.
TOKENS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")


class _Spent:
    """What one issue's ask cost, read off the run's budget (the client counts every HTTP attempt there, retries of
    a 429 or a 5xx included, and the tokens of every answer): the issue's figures are the budget's growth while it
    was asked, so the issues' calls and tokens add up to the run's (`usage_totals`) by construction. Counted here,
    they were the answers only: a 5xx retried twice was 3 calls for the run and 1 for its issue."""

    def __init__(self, budget) -> None:
        self.budget = budget
        self.before = self._read()
        self.started = time.perf_counter()

    def _read(self) -> dict[str, int]:
        tokens = {name: getattr(self.budget, name, 0) for name in TOKENS}
        return {"calls": getattr(self.budget, "calls", 0), **tokens}

    @property
    def calls(self) -> int:
        return self._read()["calls"] - self.before["calls"]

    @property
    def tokens(self) -> dict[str, int]:
        now = self._read()
        return {name: now[name] - self.before[name] for name in TOKENS}


def priced(tokens: dict[str, int], prices) -> dict:
    """The token counts, the uncached input among them, and the estimated cost (None without prices)."""
    uncached = tokens["input_tokens"] - tokens["cached_input_tokens"] - tokens["cache_write_tokens"]
    cost = prices.cost(*(tokens[name] for name in TOKENS)) if prices is not None else None
    cost = round(cost, 8) if cost is not None else None
    return {**tokens, "uncached_input_tokens": max(uncached, 0), "cost_usd": cost}


class ModelConsultant:
    """Asks the model for one issue's plan. Keeps run totals (`usage_totals`, for `eval` and the step summary)."""

    def __init__(self, client: Any):
        self.client = client
        self.issues_asked = 0
        self.fallbacks = 0
        self.latency_ms: list[float] = []

    @property
    def budget(self):
        return self.client.budget

    def usage_totals(self) -> dict[str, Any]:
        b = self.budget
        prices = getattr(self.client.config, "prices", None)
        lat = sorted(self.latency_ms)
        return {"issues_asked": self.issues_asked, "calls": b.calls,
                **priced({name: getattr(b, name, 0) for name in TOKENS}, prices), "fallbacks": self.fallbacks,
                "latency_ms": {"mean": sum(lat) / len(lat) if lat else None,
                               "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else None}}

    def ask(self, snapshot: IssueSnapshot, bundle: Bundle) -> Asked:
        """The conforming answer and its usage, or the failure (a provider error, the run's budget, the prompt
        template, an answer that still does not conform, or still contradicts itself, after one repair) and what
        it cost."""
        from triage.planners.model.prompt import PromptError, render

        try:
            prompt = render(snapshot, bundle)
        except PromptError as exc:
            return self._failed(exc, {})
        schema = plan_schema(bundle)
        self.issues_asked += 1
        spent = _Spent(self.budget)
        try:
            answer = self._answer(prompt, schema, str(snapshot.number))
            return Asked(answer, self._usage(spent))
        except (LLMError, HTTPError) as exc:
            return self._failed(exc, self._usage(spent))
        finally:
            self.latency_ms.append((time.perf_counter() - spent.started) * 1000)

    def _answer(self, prompt, schema: dict, key: str) -> dict:
        user = prompt.user
        for attempt in range(2):  # the answer, and at most one repair
            try:
                reply = self.client.complete(prompt.system, user, schema, SCHEMA_NAME, key=key)
            except LLMError as exc:
                if isinstance(exc, LLMInvalidReply) and attempt == 0:
                    user = prompt.user + _repair_note([exc.message])
                    continue
                raise
            problems = schema_problems(reply.plan, schema)
            what = "does not match the plan schema"
            if not problems:  # only a conforming answer can be read for contradictions
                problems, what = answer_problems(reply.plan), "contradicts itself"
            if not problems:
                return reply.plan
            if attempt == 1:
                raise LLMInvalidReply(f"the answer {what} after one repair: " + "; ".join(problems[:3]))
            user = prompt.user + _repair_note(problems)
        raise LLMInvalidReply("no usable answer after one repair")

    def _failed(self, exc: Exception, usage: dict[str, Any]) -> Asked:
        self.fallbacks += 1
        # The kind from the error's type: the run's call budget (llm-max-calls) is a limit the user set.
        kind = FallbackKind.BUDGET if isinstance(exc, LLMBudgetExhausted) else FallbackKind.FAILURE
        return Asked(None, usage, ModelFallback(kind, one_line(f"{type(exc).__name__}: {exc}", 300)))

    def _usage(self, spent: _Spent) -> dict[str, Any]:
        c = self.client.config
        return {"provider": c.provider, "model": c.model, "calls": spent.calls,
                **priced(spent.tokens, getattr(c, "prices", None)),
                "latency_ms": round((time.perf_counter() - spent.started) * 1000, 1)}


def _repair_note(problems: Iterable[str]) -> str:
    listed = "\n".join(f"- {one_line(p, 200)}" for p in list(problems)[:5])
    return ("\n\nYour previous answer was rejected because it does not match the schema or contradicts itself:\n"
            + listed + "\nAnswer again with one JSON object that matches the schema exactly and agrees with "
            "itself.")


__all__ = ["Asked", "ModelConsultant"]
