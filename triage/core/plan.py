"""The plan: what the bot would add to one issue, and why. A stable contract other tools read.

May import: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

OUTCOMES = (
    "already_triaged",  # step 0: a human classified it (module + sub-oncall)
    "not_distributed",  # step 1: flagged as mislabelled, for a human to re-route
    "routed",  # step 2: sent to a sub-team that triages further itself
    "classified",  # step 3: module(s) found with high/medium confidence
    "needs_review",  # a human decides: module unclear, or the policy refused to guess
    "high_priority",  # step 5: possibly high priority: a human must look first (no marker)
    "nothing_to_do",  # already processed by the bot, or nothing left to add
)
CONFIDENCES = ("high", "medium", "low")


@dataclass(frozen=True)
class PlannedComment:
    template: str
    body: str


@dataclass(frozen=True)
class Plan:
    issue: int
    add_labels: tuple[str, ...] = ()
    comment: PlannedComment | None = None
    outcome: str = "nothing_to_do"
    sub_oncall: str | None = None
    modules: tuple[str, ...] = ()
    confidence: str | None = None
    reasons: tuple[str, ...] = field(default_factory=tuple)
    elapsed_ms: float = 0.0
    planner: str = "rubric"
    # Per step, what it decided (`triage.core.steps.StepResult`), for reports and evaluation; not compared.
    steps: tuple[Any, ...] = field(default=(), compare=False)
    # What the planner spent (model calls, tokens, cost), when it spent anything.
    usage: dict[str, Any] | None = field(default=None, compare=False)

    def with_(self, **changes) -> "Plan":
        return replace(self, **changes)

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
            "reasons": list(self.reasons),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "planner": self.planner,
            "steps": [
                {"step": s.step, "decision": s.decision, "labels": list(s.labels),
                 "score": None if s.score is None else round(s.score, 3), "by": getattr(s, "by", self.planner)}
                for s in self.steps
            ],
            **({"usage": self.usage} if self.usage else {}),
        }
