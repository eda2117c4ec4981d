"""`ModelPlanner`: how a model's answer becomes a proposal, the flow the `llm` and `hybrid` planners share.

The rubric plans first (it is the fallback; the model is shown the issue only, never the rubric's findings). Only
an issue on which the procedure reached a judgement is put to the model (`triage.core.procedure.reached_judgement`:
never one a person classified, or one processed already), and only about the steps the planner asks
(`steps_to_ask`: every judgement step for `llm`; where the rubric is unsure for `hybrid`). The model answers the closed plan schema; a conforming
answer becomes per-step judgements (`triage.planners.model.answer`) that the one procedure runs on the rubric's
own analysis of the issue, merged by the planner's `MergePolicy` (`triage.core.merge`), and folds into a proposal.
Anything that goes wrong (the provider, the budget, the prompt template, an answer that still does not conform)
gives the rubric's whole plan and a reason saying so, with what the failed ask cost in its usage: never a partial
plan. Whatever comes out, `plan_issue` passes it through the policy.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`,
`triage.planners.rubric`, `triage.planners.model.*`, and (lazily, in `client_from`) `triage.llm.options`.
"""
from __future__ import annotations

from typing import Any

from triage.config.bundle import Bundle
from triage.core import procedure
from triage.core.merge import MODEL_DECIDES, MergePolicy
from triage.core.plan import Plan
from triage.core.snapshot import IssueSnapshot
from triage.core.steps import Analysis
from triage.planners import rubric as rubric_planner
from triage.planners.base import Planner
from triage.planners.model.answer import decisions_from_answer, issue_text_for_quotes
from triage.planners.model.consultant import ModelConsultant
from triage.planners.model.schema import PARTS

ALL_STEPS = frozenset(PARTS)


class ModelPlanner(Planner):
    """A planner that asks a model (`client`: anything with `complete`, `budget` and `config`, e.g.
    `triage.llm.client.LLMClient`). Subclasses say which steps to ask, how the answer merges with the rubric's
    (`merge`), and what a plan the model was not asked about says."""

    name = "model"
    needs_prompt = True
    merge: MergePolicy = MODEL_DECIDES

    def __init__(self, client: Any):
        self.consultant = ModelConsultant(client)

    def usage_totals(self) -> dict[str, Any]:
        return self.consultant.usage_totals()

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        base, analysis = rubric_planner.propose_with_analysis(snapshot, bundle, force=force)
        if not procedure.reached_judgement(base.steps):
            return self.not_asked(base)
        take, why = self.steps_to_ask(snapshot, bundle, base, analysis)
        if not take:
            return self.not_asked(base)
        return self.consult(snapshot, bundle, base, take, asked_because=why, analysis=analysis)

    def steps_to_ask(self, snapshot: IssueSnapshot, bundle: Bundle, base: Plan,
                     analysis: Analysis | None) -> tuple[frozenset[int], tuple[str, ...]]:
        """Which judgement steps to put to the model for this issue, and why (empty: the rubric's plan stands)."""
        return ALL_STEPS, ()

    def not_asked(self, base: Plan) -> Plan:
        """The plan when the model is not asked: the rubric's."""
        return base.with_(planner=self.name)

    def consult(self, snapshot: IssueSnapshot, bundle: Bundle, rubric_plan: Plan, take: frozenset[int], *,
                asked_because: tuple[str, ...] = (), analysis: Analysis | None = None) -> Plan:
        """The procedure with the model's decisions for `take` (on the rubric's `analysis` of the issue, when the
        caller has it), or the rubric's plan and a reason saying why not."""
        by = self.name
        asked = self.consultant.ask(snapshot, bundle)
        if asked.answer is None:
            # The plan is the rubric's and says so (`planner`), with the model's failure and its cost in `usage`.
            usage = dict(asked.usage, fallback=asked.failure)
            return rubric_plan.with_(planner="rubric", usage=usage, reasons=tuple(rubric_plan.reasons) + (
                f"{by}: the model's plan was not used ({asked.failure}); this is the rubric's plan",))
        decisions = decisions_from_answer(asked.answer, take, by, issue_text_for_quotes(snapshot, bundle))
        done = procedure.run(snapshot, bundle, decisions, analysis=analysis, merge=self.merge)
        prefix = tuple(r for r in rubric_plan.reasons if r.startswith("forced re-triage"))
        prefix += (f"{by}: asked the model ({'; '.join(asked_because)})",) if asked_because else ()
        plan = procedure.fold(Plan(issue=snapshot.number, planner=by), done.results, bundle, prefix)
        return plan.with_(usage=asked.usage)


def client_from(options: dict[str, Any]):
    """The model client for a planner factory called with options instead of a client (a fork's code, a test):
    through the one function that turns typed options into a client, `triage.llm.options.model_client`
    (`environ`: the environment to read keys from, os.environ by default)."""
    import os

    from triage.llm.options import ModelOptions, model_client

    options = dict(options)
    environ = options.pop("environ", None)
    return model_client(ModelOptions(**options), os.environ if environ is None else environ)


__all__ = ["ALL_STEPS", "ModelPlanner", "client_from"]
