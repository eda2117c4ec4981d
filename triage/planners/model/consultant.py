"""Asking the model about one issue: the rendered prompt, the closed schema, one answer and at most one repair of an
answer that does not conform. What an ask cost (calls, tokens, estimated cost, latency) is part of its result,
whether it answered or failed: a failure is a value here (`Asked.failure`), not an exception carrying its bill.

May import: the standard library, `triage.config`, `triage.core`, `triage.llm.errors`, `triage.http.errors`,
`triage.planners.model.*` (the client only as an object handed in).
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from triage.config.bundle import Bundle
from triage.core.snapshot import IssueSnapshot
from triage.http.errors import HTTPError
from triage.llm.errors import LLMError, LLMInvalidReply
from triage.planners.model.answer import one_line
from triage.planners.model.checks import answer_problems
from triage.planners.model.schema import SCHEMA_NAME, plan_schema, schema_problems


@dataclass(frozen=True)
class Asked:
    """One issue's ask: the conforming answer (None when the ask failed), what it cost (`usage`: provider, model,
    calls, tokens, estimated cost, latency; empty when nothing was sent), and why it failed, one line (None when
    it answered)."""

    answer: dict | None
    usage: dict[str, Any]
    failure: str | None = None


class _Spent:
    def __init__(self) -> None:
        self.calls = self.input_tokens = self.output_tokens = 0
        self.started = time.perf_counter()

    def add(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens


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
        cost = prices.cost(b.input_tokens, b.output_tokens) if prices is not None else None
        lat = sorted(self.latency_ms)
        return {"issues_asked": self.issues_asked, "calls": b.calls, "input_tokens": b.input_tokens,
                "output_tokens": b.output_tokens, "cost_usd": cost, "fallbacks": self.fallbacks,
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
        spent = _Spent()
        try:
            answer = self._answer(prompt, schema, str(snapshot.number), spent)
            return Asked(answer, self._usage(spent))
        except (LLMError, HTTPError) as exc:
            return self._failed(exc, self._usage(spent))
        finally:
            self.latency_ms.append((time.perf_counter() - spent.started) * 1000)

    def _answer(self, prompt, schema: dict, key: str, spent: _Spent) -> dict:
        user = prompt.user
        for attempt in range(2):  # the answer, and at most one repair
            spent.calls += 1
            try:
                reply = self.client.complete(prompt.system, user, schema, SCHEMA_NAME, key=key)
            except LLMError as exc:
                spent.add(exc.input_tokens, exc.output_tokens)
                if isinstance(exc, LLMInvalidReply) and attempt == 0:
                    user = prompt.user + _repair_note([exc.message])
                    continue
                raise
            spent.add(reply.input_tokens, reply.output_tokens)
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
        return Asked(None, usage, one_line(f"{type(exc).__name__}: {exc}", 300))

    def _usage(self, spent: _Spent) -> dict[str, Any]:
        c = self.client.config
        prices = getattr(c, "prices", None)
        return {"provider": c.provider, "model": c.model, "calls": spent.calls, "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
                "cost_usd": prices.cost(spent.input_tokens, spent.output_tokens) if prices is not None else None,
                "latency_ms": round((time.perf_counter() - spent.started) * 1000, 1)}


def _repair_note(problems: Iterable[str]) -> str:
    listed = "\n".join(f"- {one_line(p, 200)}" for p in list(problems)[:5])
    return ("\n\nYour previous answer was rejected because it does not match the schema or contradicts itself:\n"
            + listed + "\nAnswer again with one JSON object that matches the schema exactly and agrees with itself.")


__all__ = ["Asked", "ModelConsultant"]
