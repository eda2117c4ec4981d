"""The `hybrid` planner: the rubric routes and classifies modules where it is sure; the model reads the type
(step 4) and possible high priority (step 5) of every issue on which those steps run, and decides them.

When to ask is data, in the rubric's optional `hybrid:` section (defaults below when it is absent):
- `gate` (default false): false, the model is asked on every issue whose steps 4 and 5 run, whatever the rubric
  recognised (a writer the rubric has never seen states a criterion or a request in words it does not know, and a
  gate on the rubric's findings never shows the model those issues); true, only where one of the triggers below
  fires (cheaper; its measured loss on a fresh writer is in docs/llm.md). The triggers also say, either way, when
  the model decides steps 1-3 and 6;
- whatever the gate: an issue the rubric could not read (`unread` on the rubric's analysis: prose in a script it
  has no words for, nothing but a log, a bot's template, a one-line body) is asked about steps 4-6, and about step
  1 when the rubric sent it away as not the queue's;
- `trap_mixed`: a not-distributed trap matched while distributed evidence is above `trap_max_distributed`
  and below `trap_outweighed` times the trap's score (step 1 is then the model's; evidence that outweighs
  the trap that many times over is an answer, not a doubt: "[FSDP][DTensor] dynamo error" is not a question);
- `route_margin`: the chosen route's score beats the next route by less than this (steps 2 and 3);
- `module_confidence`: step 3 ended with one of these confidences (default: low) (step 3);
- `on_request`: step 4 found a request type (default: either) (steps 4 and 6: feature vs enhancement is where the
  rubric is weakest, and a request the model reads as a bug report needs step 6 judged);
- `on_request_evidence`: request evidence matched below step 4's threshold (a request the rubric may have missed;
  off by default);
- `high_priority`: step 5 is asked by the issue's class, not by closeness to the threshold
  (`triage.planners.escalation`: every issue the rubric flags; a bug report with high-priority evidence or a
  failure cue, or a version named with a failure; a request only with a strong cue);
- `model_decides`: the steps the model's reading decides whenever it is asked at all (default: types and
  high_priority): the call is paid for, and on these steps its reading is the better one.
One model call per issue at most (plus one repair of a non-conforming answer); any failure keeps the rubric's plan.

How the model's answer and the rubric's result make each step's decision is `triage.core.merge.HYBRID`: the
model's judgement decides the steps it was asked; step 4's reason records a type the rubric read otherwise, and on
step 5 a flag the model raises stands, while the rubric's flag is cleared only for a reason from the closed list
with a quote found in the issue. The rest of the flow is `ModelPlanner`'s, shared with `llm`.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`,
`triage.planners.model.*`,
`triage.planners.escalation`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from triage.config.bundle import Bundle
from triage.core import procedure, steps
from triage.core.merge import HYBRID
from triage.core.plan import Plan
from triage.core.reading import Reading
from triage.core.snapshot import IssueSnapshot
from triage.core.vocab import InQueue
from triage.planners.base import Judged
from triage.planners.escalation import HighPriorityGate, step5_escalation
from triage.planners.model.planner import ModelPlanner, client_from


@dataclass(frozen=True)
class HybridSettings:
    # False: the model reads steps 4 and 5 of every issue on which they run; true: only where a trigger fires.
    gate: bool = False
    trap_mixed: bool = True
    trap_max_distributed: float = 0.0
    # Distributed evidence this many times the trap's score outweighs it: the rubric is sure (0: never).
    trap_outweighed: float = 0.0
    route_margin: float = 3.0
    module_confidence: tuple[str, ...] = ("low",)
    # Step 4: the request decisions the model re-checks (wholly new, or an improvement of what exists?), and
    # whether request evidence below the threshold asks too (a request the rubric did not see as one).
    on_request: tuple[str, ...] = ("feature", "enhancement")
    on_request_evidence: bool = False
    # Step 5: by the issue's class (`triage.planners.escalation`); the misses of a rubric score zero, so a band
    # around the threshold would never show them to the model.
    high_priority: HighPriorityGate = HighPriorityGate()
    # The steps the model's reading decides whenever the model is asked, whatever asked it.
    model_decides: tuple[int, ...] = (4, 5)

    @classmethod
    def from_rubric(cls, rubric) -> HybridSettings:
        raw: Mapping[str, Any] = getattr(rubric, "hybrid", None) or {}
        base = cls()
        return cls(
            gate=bool(raw.get("gate", base.gate)),
            trap_mixed=bool(raw.get("trap_mixed", base.trap_mixed)),
            trap_max_distributed=float(raw.get("trap_max_distributed", base.trap_max_distributed)),
            trap_outweighed=float(raw.get("trap_outweighed", base.trap_outweighed)),
            route_margin=float(raw.get("route_margin", base.route_margin)),
            module_confidence=tuple(raw.get("module_confidence", base.module_confidence)),
            on_request=_decisions(raw.get("on_request", base.on_request)),
            on_request_evidence=bool(raw.get("on_request_evidence", base.on_request_evidence)),
            high_priority=HighPriorityGate.from_raw(raw.get("high_priority")),
            model_decides=tuple(STEP_OF[name] for name in raw["model_decides"]) if "model_decides" in raw
            else base.model_decides,
        )


# `model_decides` names steps as `routing.checks_on_every_route` does.
STEP_OF = {"types": 4, "high_priority": 5}


def _decisions(value) -> tuple[str, ...]:
    """`on_request` as data: a list of step 4 decisions, or true (every request) / false (none)."""
    if value is True:
        return ("feature", "enhancement")
    if not value:
        return ()
    return tuple(value)


def uncertain_steps(snapshot: IssueSnapshot, bundle: Bundle, own: Plan | Mapping[int, steps.StepResult],
                    settings: HybridSettings, analysis: steps.Analysis | None = None
                    ) -> tuple[frozenset[int], tuple[str, ...]]:
    """Which steps the model should decide for this issue, and why (empty: the rubric is sure). `own` is the
    rubric's own result of each step along its own path (`triage.core.procedure.rubric_steps`; or the rubric's
    plan, whose steps say the same) of an issue on which the procedure reaches a judgement (the planner asks
    nothing about any other); `analysis`: the one they were decided on, so the issue is read once."""
    rubric, labels = bundle.rubric, bundle.labels
    by_step = _by_step(own)
    analysis = analysis or steps.analyse(snapshot, rubric, bundle.templates.names)
    take: set[int] = set()
    why: list[str] = []
    if settings.trap_mixed:
        trapped, trap, _ = steps.passes(rubric.not_in_queue, analysis, rubric)
        outweighed = settings.trap_outweighed > 0 and analysis.queue_score >= settings.trap_outweighed * trap
        if trapped and analysis.queue_score > settings.trap_max_distributed and not outweighed:
            take.add(1)
            words = bundle.words  # a storage queue's reasons never say another queue's name
            why.append(f"a '{words.not_in_queue}' trap matched but {words.queue} evidence is "
                       f"{analysis.queue_score:g}")
    s2 = by_step.get(2)
    if s2 is not None and s2.labels:  # a route the rubric chose (not an existing sub-oncall)
        totals, _ = steps.route_scores(snapshot, analysis, rubric, labels)
        others = max((v for k, v in totals.items() if k != s2.decision), default=0.0)
        margin = totals[s2.decision] - others
        if margin < settings.route_margin:
            take.update({2, 3})
            why.append(f"weak routing margin ({margin:g} < {settings.route_margin:g})")
    s3 = by_step.get(3)
    if s3 is not None and not s3.skipped and s3.decision in settings.module_confidence:
        take.add(3)
        why.append(f"module confidence {s3.decision}")
    s4 = by_step.get(4)
    if s4 is not None and s4.labels and s4.decision in settings.on_request:
        take.update({4, 6})
        why.append(f"a request ({s4.decision})")
    elif settings.on_request_evidence and s4 is not None and not s4.skipped and not s4.labels:
        seen = next((e for e in s4.evidence if e.points > 0), None)
        if seen is not None:
            take.add(4)
            why.append(f"request evidence below the threshold ({seen.describe()})")
    reason = step5_escalation(by_step, analysis, rubric, settings.high_priority)
    if reason:
        take.add(5)
        why.append(reason)
    judged = [s for s in (s4, by_step.get(5)) if s is not None and not s.skipped]
    if judged and not settings.gate:
        take.update({4, 5})
        why.insert(0, "steps 4 and 5 run on this issue: the model reads them")
    unread = unread_parts(analysis)
    if unread:  # whatever the gate: what the rubric could not read, the model reads
        take.update({4, 5, 6})
        s1 = by_step.get(1)
        if s1 is not None and s1.decision == InQueue.NO:
            take.add(1)
        why.append(f"the rubric could not read the issue ({'; '.join(unread)})")
    if take:  # asked at all: its reading of these steps decides
        take.update(settings.model_decides)
    return frozenset(take), tuple(why)


def unread_parts(analysis: steps.Analysis) -> tuple[str, ...]:
    """What the rubric's reading of the issue says it could not read (its analysis' `unread` note: a phrase or a
    sequence of them; nothing when the analysis carries no such note)."""
    note = getattr(analysis, "unread", None)
    if not note:
        return ()
    if isinstance(note, str):
        return (note,)
    try:
        return tuple(str(part) for part in note if part) or (str(note),)
    except TypeError:
        return (str(note),)


def _by_step(own: Plan | Mapping[int, steps.StepResult]) -> Mapping[int, steps.StepResult]:
    return {r.step: r for r in own.steps} if isinstance(own, Plan) else own


class HybridPlanner(ModelPlanner):
    name = "hybrid"
    merge = HYBRID

    def steps_to_ask(self, snapshot: IssueSnapshot, bundle: Bundle,
                     reading: Reading) -> tuple[frozenset[int], tuple[str, ...]]:
        return uncertain_steps(snapshot, bundle, procedure.rubric_steps(reading),
                               HybridSettings.from_rubric(bundle.rubric), analysis=reading.analysis)

    def not_asked(self, rubric: Judged) -> Judged:
        sure = "hybrid: the rubric was sure of every step; the model was not asked"
        return replace(rubric, planner=self.name, after=rubric.after + (sure,))


def make_hybrid(client: Any = None, **options) -> HybridPlanner:
    return HybridPlanner(client if client is not None else client_from(options))


__all__ = ["HybridPlanner", "HybridSettings", "make_hybrid", "uncertain_steps", "unread_parts"]
