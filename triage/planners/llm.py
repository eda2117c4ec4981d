"""The model planners' shared core, and the `llm` planner (the model proposes every judgement step).

How a model's answer becomes a proposal: the rubric plans first (it is the fallback, and its findings are the
prompt's hints); the model answers the closed plan schema (`triage.llm.schema`); an answer that does not conform
gets ONE repair call that names what was wrong; a conforming answer is turned into per-step decisions
(`decisions_from_answer`, the only adapter) that the one procedure (`triage.core.procedure`) runs on the rubric's
own analysis of the issue, exactly as it runs the rubric's, and folds into a proposal. Step 0 (already triaged by
a human?) is a fact about labels, never a judgement. Anything that goes wrong (the
provider, the budget, the prompt template, an answer that still does not conform) gives the rubric's whole plan
and a reason saying so: never a partial plan. Whatever comes out, `plan_issue` passes it through the policy.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.rubric`, `triage.llm`, `triage.http.errors`
(`triage.llm.client` only through a client object handed in, or lazily in `planner_from_options`).
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

from triage.config.bundle import Bundle
from triage.core import procedure
from triage.core.plan import Plan
from triage.core.procedure import Judgement
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import Analysis
from triage.llm.errors import LLMError, LLMInvalidReply
from triage.llm.schema import MAX_QUOTE, MAX_REASON, SCHEMA_NAME, plan_schema, schema_problems
from triage.planners import rubric as rubric_planner

ALL_STEPS = frozenset({1, 2, 3, 4, 5, 6})
_SPACE = re.compile(r"\s+")


def one_line(text: Any, limit: int) -> str:
    """A model's text as it may appear in a reason: one line, no control characters, clipped."""
    text = _SPACE.sub(" ", "".join(ch for ch in str(text) if ch.isprintable() or ch.isspace())).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def check_prompt(planner: Any, bundle: Bundle) -> None:
    """Before any issue: a model planner's prompt for this queue exists and parses (PromptError, one line). The
    rubric asks no model and needs none. One check for the CLI and the Action, which each word the error."""
    from triage.llm.prompt import check

    if getattr(planner, "consultant", None) is not None:
        check(bundle)


class ModelConsultant:
    """Asks the model for one issue's plan and turns the answer into step results. Keeps run totals for `eval`."""

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

    def ask(self, snapshot: IssueSnapshot, bundle: Bundle, hints: list[str]) -> tuple[dict, dict]:
        """The conforming answer and its usage, or a typed error (LLMError, HTTPError, PromptError)."""
        from triage.llm.prompt import render

        prompt = render(snapshot, bundle, hints)
        schema = plan_schema(bundle)
        self.issues_asked += 1
        calls, tokens_in, tokens_out = 0, 0, 0
        started = time.perf_counter()
        try:
            user = prompt.user
            for attempt in range(2):  # the answer, and at most one repair
                calls += 1
                try:
                    reply = self.client.complete(prompt.system, user, schema, SCHEMA_NAME, key=str(snapshot.number))
                except LLMError as exc:
                    tokens_in, tokens_out = tokens_in + exc.input_tokens, tokens_out + exc.output_tokens
                    if isinstance(exc, LLMInvalidReply) and attempt == 0:
                        user = prompt.user + _repair_note([exc.message])
                        continue
                    raise
                tokens_in, tokens_out = tokens_in + reply.input_tokens, tokens_out + reply.output_tokens
                problems = schema_problems(reply.plan, schema)
                if not problems:
                    return reply.plan, self._usage(calls, tokens_in, tokens_out, started)
                if attempt == 1:
                    raise LLMInvalidReply("the answer does not match the plan schema after one repair: "
                                          + "; ".join(problems[:3]))
                user = prompt.user + _repair_note(problems)
            raise LLMInvalidReply("no usable answer after one repair")
        except Exception as exc:
            exc.ptd_usage = self._usage(calls, tokens_in, tokens_out, started)  # what the failure cost
            raise
        finally:
            self.latency_ms.append((time.perf_counter() - started) * 1000)

    def _usage(self, calls: int, tokens_in: int, tokens_out: int, started: float) -> dict:
        c = self.client.config
        prices = getattr(c, "prices", None)
        return {"provider": c.provider, "model": c.model, "calls": calls, "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "cost_usd": prices.cost(tokens_in, tokens_out) if prices is not None else None,
                "latency_ms": round((time.perf_counter() - started) * 1000, 1)}


def _repair_note(problems: Iterable[str]) -> str:
    listed = "\n".join(f"- {one_line(p, 200)}" for p in list(problems)[:5])
    return ("\n\nYour previous answer was rejected because it does not match the schema:\n" + listed +
            "\nAnswer again with one JSON object that matches the schema exactly.")


# The answer's part for each step (the plan schema's keys, `triage.llm.schema`).
ANSWER_KEYS = {1: "not_distributed", 2: "route", 3: "modules", 4: "type", 5: "high_priority", 6: "reproduction"}


def decisions_from_answer(answer: dict, snapshot: IssueSnapshot, bundle: Bundle, take: frozenset[int], by: str,
                          text: str, step5_rule: Any = None) -> dict[int, Judgement]:
    """The adapter from a model's conforming answer to the procedure's per-step decisions, for the steps in `take`
    (the rubric decides the others). Nothing here sequences steps: `triage.core.procedure.run` does, for every
    planner alike. `text` is the issue's normalised text, to check the model's quotes against.
    `step5_rule(rubric_result, answer_part, review=, dismissed=, by=, said=)`, when given, decides step 5 from the
    rubric's and the model's answers (hybrid: the model adds flags, removes one only for a procedural reason)."""
    out: dict[int, Judgement] = {}
    for step in sorted(take & ANSWER_KEYS.keys()):
        part = answer[ANSWER_KEYS[step]]
        said = _said(step, part, by, text)
        out[step] = Judgement(str(part["decision"]), said, by, labels=tuple(part.get("labels") or ()),
                              performance=bool(part.get("performance")),
                              criteria=tuple(str(c) for c in part.get("criteria") or ()) if step == 5 else ())
    if 5 in out and step5_rule is not None:
        part, said = answer[ANSWER_KEYS[5]], out[5].reason
        out[5] = Judgement(out[5].decision, said, by, combine=lambda own: step5_rule(
            own, part, review=bundle.labels.review, dismissed=snapshot.review_dismissed, by=by, said=said))
    return out


def _said(step: int, part: dict, by: str, text: str) -> str:
    """The model's decision as a plan's reason: one line, clipped, its quote checked against the issue."""
    reason = one_line(part["reason"], MAX_REASON)
    quote = one_line(part["quote"], MAX_QUOTE)
    said = f"step {step} ({by}): {part['decision']} — {reason}"
    if quote:
        found = _normal(quote) in text
        said += f' (quotes "{quote}")' + ("" if found else " [quote not found in the issue]")
    return said


def issue_text_for_quotes(snapshot: IssueSnapshot, bundle: Bundle) -> str:
    from triage.llm.prompt import issue_text

    issue = issue_text(snapshot, bundle.templates.names)
    return _normal(" ".join([issue["title"], issue["body"], *issue["comments"]]))


def consult(consultant: ModelConsultant, snapshot: IssueSnapshot, bundle: Bundle, rubric_plan: Plan,
            take: frozenset[int], *, by: str, asked_because: tuple[str, ...] = (), step5_rule: Any = None,
            analysis: Analysis | None = None) -> Plan:
    """The procedure with the model's decisions for `take` (on the rubric's `analysis` of the issue, when the
    caller has it), or the rubric's plan and a reason saying why not. An issue with nothing to judge (already
    processed, or classified by a person: the rubric stopped at step 0) is never put to the model, whatever a
    caller's gate asked: the procedure's own stop, in one place for every model planner."""
    from triage.http.errors import HTTPError
    from triage.llm.prompt import PromptError

    if not rubric_plan.steps or rubric_plan.steps[-1].step == 0:
        return rubric_plan.with_(planner=by)
    hints = [r.reason for r in rubric_plan.steps if not r.skipped]
    try:
        answer, usage = consultant.ask(snapshot, bundle, hints)
    except (LLMError, HTTPError, PromptError) as exc:
        consultant.fallbacks += 1
        usage = dict(getattr(exc, "ptd_usage", {}) or {})
        usage["fallback"] = one_line(f"{type(exc).__name__}: {exc}", 300)
        # The plan is the rubric's and says so (`planner`), with the model's failure in `usage.fallback`.
        return rubric_plan.with_(planner="rubric", usage=usage, reasons=tuple(rubric_plan.reasons) + (
            f"{by}: the model's plan was not used ({usage['fallback']}); this is the rubric's plan",))
    decisions = decisions_from_answer(answer, snapshot, bundle, take, by, issue_text_for_quotes(snapshot, bundle),
                                      step5_rule)
    done = procedure.run(snapshot, bundle, decisions, analysis=analysis)
    prefix = tuple(r for r in rubric_plan.reasons if r.startswith("forced re-triage"))
    prefix += (f"{by}: asked the model ({'; '.join(asked_because)})",) if asked_because else ()
    plan = procedure.fold(Plan(issue=snapshot.number, planner=by), done.results, bundle, prefix)
    return plan.with_(usage=usage)


class LLMPlanner:
    """The model proposes every judgement step (1-6); the rubric answers step 0 and is the fallback."""

    name = "llm"

    def __init__(self, client: Any):
        self.consultant = ModelConsultant(client)

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        base, analysis = rubric_planner.propose_with_analysis(snapshot, bundle, force=force)
        return consult(self.consultant, snapshot, bundle, base, ALL_STEPS, by=self.name, analysis=analysis)


def build_client(options: dict[str, Any]):
    """A model client from planner options: `client` (given), `replay` (DIR), or a live `LLMConfig` from the
    options and the environment, wrapped for `record` (DIR) when asked."""
    import os

    if options.get("client") is not None:
        return options["client"]
    from triage.llm.client import Budget, LLMClient, LLMConfig, config_from_environ

    keys = ("provider", "model", "base_url", "api_key", "timeout", "max_calls", "max_tokens_per_run", "prices",
            "connect_timeout", "max_retries", "max_wait")
    config_options = {k: options.get(k) for k in keys}
    if options.get("replay"):
        from triage.llm.recording import ReplayClient

        c = LLMConfig(provider=options.get("provider") or "openai", model=options.get("model") or "replay",
                      api_key="replay", **({"prices": options["prices"]} if options.get("prices") else {}))
        return ReplayClient(options["replay"], config=c, budget=Budget(max_calls=None))
    config = config_from_environ(options.get("environ") or os.environ, **config_options)
    client = LLMClient(config, environ=options.get("environ"))
    if options.get("record"):
        from triage.llm.recording import RecordingClient

        return RecordingClient(client, options["record"])
    return client


def make_llm(**options) -> LLMPlanner:
    return LLMPlanner(build_client(options))


__all__ = ["ALL_STEPS", "LLMPlanner", "ModelConsultant", "build_client", "consult", "make_llm", "one_line",
           "decisions_from_answer"]
