"""`ModelPlanner`: how a model's answer becomes a proposal, the flow the `llm` and `hybrid` planners share.

The rubric reads the issue first (`triage.core.reading`: it is the fallback; the model is shown the issue only,
never the rubric's findings). Only an issue on which the procedure reaches a judgement is put to the model (never
one a person classified, or one processed already), and only about the steps the planner asks (`steps_to_ask`,
from the rubric's own results: every judgement step for `llm`; where the rubric is unsure for `hybrid`). The model
answers the closed plan schema; a conforming answer becomes per-step judgements (`triage.planners.model.answer`)
that the one procedure runs, once, on the rubric's reading of the issue, merged by the planner's `MergePolicy`
(`triage.core.merge`), and folds into a proposal.
Anything that goes wrong (the provider, the budget, the prompt template, an answer that still does not conform)
gives the rubric's whole plan and a reason saying so, with what the failed ask cost in its usage: never a partial
plan. Whatever comes out, `plan_issue` passes it through the policy.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`,
`triage.planners.rubric`, `triage.planners.model.*`, and (lazily, in `client_from`) `triage.llm.options`.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from triage.config.bundle import Bundle
from triage.core import procedure
from triage.core.merge import MODEL_DECIDES, MergePolicy
from triage.core.plan import FallbackKind, ModelFallback
from triage.core.reading import Reading
from triage.core.snapshot import IssueSnapshot
from triage.planners import rubric as rubric_planner
from triage.planners.base import Decided, Fixed, Judged, Planner
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

    def decide(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Decided:
        """The rubric's reading first (its own result of each step, kept for the procedure); the model is asked
        only about an issue on which the procedure reaches a judgement, and only the steps `steps_to_ask` names;
        the procedure then runs once, on the model's decisions or, when the model is not asked or fails, the
        rubric's."""
        start = rubric_planner.opening(snapshot, bundle, force=force)
        if start.processed is not None:
            return Fixed(start.processed.with_(planner=self.name))
        reading = Reading(snapshot, bundle)
        rubric = Judged(bundle, reading, prefix=start.clipped + start.forced)
        if procedure.step0(snapshot, bundle).stop:  # a person classified it: no judgement to ask for
            return self.not_asked(rubric)
        take, why = self.steps_to_ask(snapshot, bundle, reading)
        if not take:
            return self.not_asked(rubric)
        return self.consult(snapshot, bundle, rubric, take, asked_because=why, prefix=start.forced)

    def steps_to_ask(self, snapshot: IssueSnapshot, bundle: Bundle,
                     reading: Reading) -> tuple[frozenset[int], tuple[str, ...]]:
        """Which judgement steps to put to the model for this issue, and why (empty: the rubric's plan stands).
        `reading`: the rubric's reading of the issue (a gate reads the rubric's own results there,
        `triage.core.procedure.rubric_steps`; the procedure then reuses them)."""
        return ALL_STEPS, ()

    def not_asked(self, rubric: Judged) -> Judged:
        """The rubric's decisions, as this planner's plan: the model was not asked."""
        return replace(rubric, planner=self.name)

    def consult(self, snapshot: IssueSnapshot, bundle: Bundle, rubric: Judged, take: frozenset[int], *,
                asked_because: tuple[str, ...] = (), prefix: tuple[str, ...] = ()) -> Judged:
        """The model's decisions for `take`, for the procedure to run on the rubric's reading of the issue; or,
        when the model fails, the rubric's, with a reason saying why and what the failed ask cost."""
        by = self.name
        asked = self.consultant.ask(snapshot, bundle)
        if asked.fallback is None and asked.answer is not None:
            decisions = decisions_from_answer(asked.answer, take, by, issue_text_for_quotes(snapshot, bundle))
            because = (f"{by}: asked the model ({'; '.join(asked_because)})",) if asked_because else ()
            return replace(rubric, decisions=decisions, merge=self.merge, planner=by, prefix=prefix + because,
                           usage=asked.usage)
        # The plan is the rubric's and says so (`planner`), with the model's failure and its cost in `usage`.
        fallback = asked.fallback or ModelFallback(FallbackKind.FAILURE, "the model gave no answer")
        why = f"{by}: the model's plan was not used ({fallback.reason}); this is the rubric's plan"
        return replace(rubric, planner="rubric", usage=dict(asked.usage, fallback=fallback.reason),
                       fallback=fallback, after=(why,))


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
