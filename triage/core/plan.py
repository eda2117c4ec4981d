"""The plan: what the bot would add to one issue, and why. A stable contract other tools read.

May import: the standard library, `triage.core.vocab`, `triage.core.drops`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from triage.core.drops import Drop
from triage.core.vocab import Confidence, Outcome

OUTCOMES = tuple(Outcome)  # what each means: `triage.core.vocab.Outcome`
CONFIDENCES = tuple(Confidence)


class FallbackKind(StrEnum):
    """Why a model planner's plan is the rubric's: the run's configured call budget was spent (a limit the user
    set: said, not a failure), or the model failed (provider, timeout, prompt template, an unusable answer)."""

    BUDGET = "budget"
    FAILURE = "failure"


@dataclass(frozen=True)
class ModelFallback:
    """A model planner fell back to the rubric's plan: of which kind, and why in one line (the plan's JSON keeps
    the line as `usage.fallback`). The Action's and the CLI's exit status are chosen from `kind`."""

    kind: FallbackKind
    reason: str

    @property
    def failed(self) -> bool:
        return self.kind == FallbackKind.FAILURE


@dataclass(frozen=True)
class PlannedComment:
    template: str
    body: str


@dataclass(frozen=True)
class Plan:
    issue: int
    add_labels: tuple[str, ...] = ()
    comment: PlannedComment | None = None
    outcome: str = Outcome.NOTHING_TO_DO
    sub_oncall: str | None = None
    modules: tuple[str, ...] = ()
    confidence: str | None = None
    reasons: tuple[str, ...] = field(default_factory=tuple)
    # What the policy dropped or changed, and why (`triage.core.drops`): records; `explained` renders them.
    drops: tuple[Drop, ...] = ()
    elapsed_ms: float = 0.0
    planner: str = "rubric"
    # Per step, what it decided (`triage.core.steps.StepResult`), for reports and evaluation; not compared.
    steps: tuple[Any, ...] = field(default=(), compare=False)
    # What the planner spent (model calls, tokens, cost), when it spent anything.
    usage: dict[str, Any] | None = field(default=None, compare=False)
    # A model planner fell back to the rubric: the typed kind and reason (the JSON says it in `usage.fallback`).
    fallback: ModelFallback | None = field(default=None, compare=False)

    def with_(self, **changes) -> Plan:
        return replace(self, **changes)

    @property
    def explained(self) -> tuple[str, ...]:
        """The reasons as a person reads them: the planner's, then the policy's drops in words."""
        return tuple(self.reasons) + tuple(d.text() for d in self.drops)

    def dropped(self, kind) -> tuple[Drop, ...]:
        return tuple(d for d in self.drops if d.kind == kind)

    def step(self, number: int):
        return next((s for s in self.steps if s.step == number), None)

    @property
    def high_priority_score(self) -> float | None:
        found = self.step(5)
        return found.score if found is not None else None

    def to_dict(self) -> dict:
        return {
            "issue": self.issue,
            "add_labels": list(self.add_labels),
            "comment": {"template": self.comment.template, "body": self.comment.body} if self.comment else None,
            "outcome": self.outcome,
            "sub_oncall": self.sub_oncall,
            "modules": list(self.modules),
            "confidence": self.confidence,
            "reasons": list(self.explained),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "planner": self.planner,
            "steps": [
                {"step": s.step, "decision": s.decision, "labels": list(s.labels),
                 "score": None if s.score is None else round(s.score, 3), "by": getattr(s, "by", self.planner),
                 **({"criteria": list(s.criteria)} if getattr(s, "criteria", ()) else {})}
                for s in self.steps
            ],
            **({"usage": self.usage} if self.usage else {}),
        }
