"""The plan: what the bot would add to one issue, and why. A stable contract other tools read."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

OUTCOMES = (
    "already_triaged",  # step 0: a human classified it (module + sub-oncall)
    "not_distributed",  # step 1: flagged as mislabelled, for a human to re-route
    "routed",  # step 2: sent to infra or checkpointing, whose team triages further
    "classified",  # step 3: parallelisms, module(s) found with high/medium confidence
    "needs_review",  # step 3: parallelisms, module unclear: a human decides
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

    def with_(self, **changes) -> "Plan":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["add_labels"] = list(self.add_labels)
        data["modules"] = list(self.modules)
        data["reasons"] = list(self.reasons)
        data["elapsed_ms"] = round(self.elapsed_ms, 3)
        return data
