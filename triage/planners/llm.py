"""The model planners' shared core, and the `llm` planner (the model proposes every judgement step).

How a model's answer becomes a proposal: the rubric plans first (it is the fallback, and its findings are the
prompt's hints); the model answers the closed plan schema (`triage.llm.schema`); an answer that does not conform
gets ONE repair call that names what was wrong; a conforming answer is turned into the same `StepResult`s the
rubric's steps produce (each marked `by`), and folded by the rubric planner's own `plan_from_steps`. Step 0
(already triaged by a human?) is a fact about labels and always the rubric's. Anything that goes wrong (the
provider, the budget, the prompt template, an answer that still does not conform) gives the rubric's whole plan
and a reason saying so: never a partial plan. Whatever comes out, `plan_issue` passes it through the policy.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.rubric`, `triage.llm`
(`triage.llm.client` only through a client object handed in, or lazily in `planner_from_options`).
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

from triage.config.bundle import Bundle
from triage.core import steps
from triage.core.plan import Plan
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import StepResult
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


class ModelConsultant:
    """Asks the model for one issue's plan and turns the answer into step results. Keeps run totals for `eval`."""

    def __init__(self, client: Any, *, prompt_path: str | None = None):
        self.client = client
        self.prompt_path = prompt_path
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

        prompt = render(snapshot, bundle, hints, path=self.prompt_path)
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


def steps_from_answer(answer: dict, snapshot: IssueSnapshot, bundle: Bundle, rubric_results: tuple[StepResult, ...],
                      take: frozenset[int], by: str, text: str, step5_rule: Any = None) -> list[StepResult]:
    """The procedure again, taking the model's decision for the steps in `take` and the rubric's for the others
    (recomputed when the model's earlier decisions changed what they depend on: the route, the type).
    `step5_rule(rubric_result, answer_part, review=, dismissed=, by=, said=)`, when given, decides step 5 from the
    rubric's and the model's answers (hybrid: the model adds flags, removes one only for a procedural reason)."""
    rubric, labels, comments = bundle.rubric, bundle.labels, bundle.step_templates
    have = {r.step: r for r in rubric_results}
    analysis_cache: list = []

    def analysis():
        if not analysis_cache:
            analysis_cache.append(steps.analyse(snapshot, rubric, bundle.templates.names))
        return analysis_cache[0]

    def why(step: int, key: str) -> str:
        part = answer[key]
        reason = one_line(part["reason"], MAX_REASON)
        quote = one_line(part["quote"], MAX_QUOTE)
        said = f"step {step} ({by}): {part['decision']} — {reason}"
        if quote:
            found = _normal(quote) in text
            said += f' (quotes "{quote}")' + ("" if found else " [quote not found in the issue]")
        return said

    out = [have[0]]
    # 1: not distributed?
    if 1 in take:
        if answer["not_distributed"]["decision"] == "not_distributed":
            out.append(StepResult(1, "not_distributed", (labels.review, labels.marker), reason=why(1, "not_distributed"),
                                  comment=comments["not_distributed"], stop=True, by=by))
            return out
        out.append(StepResult(1, "distributed", reason=why(1, "not_distributed"), by=by))
    else:
        r1 = have.get(1) or steps.step1_not_distributed(analysis(), rubric, labels, comments["not_distributed"])
        out.append(r1)
        if r1.stop:
            return out
    # 2: route (an existing sub-oncall is always kept: that is the rubric's step 2 and the policy's rule)
    r2 = have.get(2) or steps.step2_route(snapshot, analysis(), rubric, labels)
    existing = any(rubric.route_of_label(name) for name in snapshot.labels)
    if 2 in take and not existing:
        route = answer["route"]["decision"]
        s2 = StepResult(2, route, (rubric.route_label(route),), reason=why(2, "route"), stop=route in rubric.stop_after,
                        by=by)
    else:
        s2 = r2
    out.append(s2)
    route, owns = s2.decision, s2.stop
    # 3: modules of the route
    if owns:
        out.append(steps.skipped(3, f"{route} owns further triage"))
    elif 3 in take:
        part = answer["modules"]
        chosen = tuple(dict.fromkeys(l for l in part["labels"] if labels.role(l) == "module" and labels.route(l) == route))
        if part["decision"] == "low" or not chosen:
            out.append(StepResult(3, "low", (labels.review,), reason=why(3, "modules") + (
                "" if part["decision"] == "low" else f" [no module of route {route} named: sent to review]"), by=by))
        else:
            out.append(StepResult(3, part["decision"], chosen, reason=why(3, "modules"), by=by))
    else:
        r3 = have.get(3)
        if r3 is None or r3.skipped or r2.decision != route:
            r3 = steps.step3_modules(snapshot, analysis(), rubric, labels, route)
        out.append(r3)
    every = rubric.checks_on_every_route
    # 4: type
    if owns and "types" not in every:
        s4 = steps.skipped(4, f"{route} owns further triage")
    elif 4 in take:
        kind = answer["type"]["decision"]
        added = () if kind == "none" else (labels.feature,) if kind == "feature" else (
            (labels.enhancement,) + ((labels.performance,) if answer["type"]["performance"] else ()))
        s4 = StepResult(4, kind, added, reason=why(4, "type"), by=by)
    else:
        s4 = have.get(4)
        if s4 is None or s4.skipped:
            s4 = steps.step4_types(analysis(), rubric, labels)
    out.append(s4)
    # 5: possibly high priority (a flag a person dismissed is not raised again, whoever proposes it)
    if owns and "high_priority" not in every:
        out.append(steps.skipped(5, f"{route} owns further triage"))
    elif 5 in take and step5_rule is not None:
        s5 = have.get(5)
        if s5 is None or s5.skipped:
            s5 = steps.step5_high_priority(analysis(), rubric, labels, snapshot)
        out.append(step5_rule(s5, answer["high_priority"], review=labels.review, dismissed=snapshot.review_dismissed,
                              by=by, said=why(5, "high_priority")))
    elif 5 in take:
        flag = answer["high_priority"]["decision"] == "flag"
        if flag and snapshot.review_dismissed:
            out.append(StepResult(5, "no_flag", reason=why(5, "high_priority") +
                                  f" [a person already removed the bot's '{labels.review}' label: not flagged again]",
                                  by=by))
        else:
            out.append(StepResult(5, "flag" if flag else "no_flag", (labels.review,) if flag else (),
                                  reason=why(5, "high_priority"), by=by))
    else:
        s5 = have.get(5)
        out.append(s5 if s5 is not None and not s5.skipped else steps.step5_high_priority(analysis(), rubric, labels,
                                                                                          snapshot))
    # 6: reproduction (never for a request)
    if owns:
        out.append(steps.skipped(6, f"{route} owns further triage"))
    elif s4.labels:
        out.append(StepResult(6, "request", reason="step 6: a request, not a bug: no reproduction needed",
                              by=s4.by))
    elif 6 in take:
        if answer["reproduction"]["decision"] == "needs_reproduction":
            # The wording is the rubric's choice, as in its own step 6: a performance report gets its own.
            perf = comments.get("needs_reproduction_performance")
            wording = perf if perf and steps.passes(rubric.performance, analysis(), rubric)[0] \
                else comments["needs_reproduction"]
            out.append(StepResult(6, "needs_reproduction", (labels.reproduction,), reason=why(6, "reproduction"),
                                  comment=wording, by=by))
        else:
            out.append(StepResult(6, "has_reproduction", reason=why(6, "reproduction"), by=by))
    else:
        s6 = have.get(6)
        if s6 is None or s6.skipped or s6.decision == "request":
            s6 = steps.step6_needs_reproduction(analysis(), rubric, labels, s4, comments["needs_reproduction"],
                                                comments.get("needs_reproduction_performance"))
        out.append(s6)
    return out


def issue_text_for_quotes(snapshot: IssueSnapshot, bundle: Bundle) -> str:
    from triage.llm.prompt import issue_text

    issue = issue_text(snapshot, bundle.templates.names)
    return _normal(" ".join([issue["title"], issue["body"], *issue["comments"]]))


def consult(consultant: ModelConsultant, snapshot: IssueSnapshot, bundle: Bundle, rubric_plan: Plan,
            take: frozenset[int], *, by: str, asked_because: tuple[str, ...] = (), step5_rule: Any = None) -> Plan:
    """The rubric's plan with the model's decisions for `take`, or the rubric's plan and a reason saying why not."""
    from triage.http.errors import HTTPError
    from triage.llm.prompt import PromptError

    hints = [r.reason for r in rubric_plan.steps if not r.skipped]
    try:
        answer, usage = consultant.ask(snapshot, bundle, hints)
    except (LLMError, HTTPError, PromptError) as exc:
        consultant.fallbacks += 1
        usage = dict(getattr(exc, "ptd_usage", {}) or {})
        usage["fallback"] = one_line(f"{type(exc).__name__}: {exc}", 300)
        return rubric_plan.with_(planner=by, usage=usage, reasons=tuple(rubric_plan.reasons) + (
            f"{by}: the model's plan was not used ({usage['fallback']}); this is the rubric's plan",))
    results = steps_from_answer(answer, snapshot, bundle, tuple(rubric_plan.steps), take, by,
                                issue_text_for_quotes(snapshot, bundle), step5_rule)
    prefix = tuple(r for r in rubric_plan.reasons if r.startswith("forced re-triage"))
    prefix += (f"{by}: asked the model ({'; '.join(asked_because)})",) if asked_because else ()
    plan = rubric_planner.plan_from_steps(Plan(issue=snapshot.number, planner=by), results, bundle, snapshot,
                                          prefix)
    return plan.with_(usage=usage)


class LLMPlanner:
    """The model proposes every judgement step (1-6); the rubric answers step 0 and is the fallback."""

    name = "llm"

    def __init__(self, client: Any, *, prompt_path: str | None = None):
        self.consultant = ModelConsultant(client, prompt_path=prompt_path)

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        base = rubric_planner.propose(snapshot, bundle, force=force)
        if not base.steps or base.steps[-1].step == 0:  # nothing to do, or a human triaged it: no judgement asked
            return base.with_(planner=self.name)
        return consult(self.consultant, snapshot, bundle, base, ALL_STEPS, by=self.name)


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
    return LLMPlanner(build_client(options), prompt_path=options.get("prompt"))


__all__ = ["ALL_STEPS", "LLMPlanner", "ModelConsultant", "build_client", "consult", "make_llm", "one_line",
           "steps_from_answer"]
