"""A plan's writes, in the order they must happen: pure ("plan -> ordered writes"); the executor is
`triage.service.apply`.

The order is what makes a run safe to kill and re-run (in the spirit of PyTorch's apply_distributed_plan.py):
1. the comment first, carrying its hidden marker, so a re-run sees it and the guardrails drop it;
2. then all labels in ONE call, the marker label among them, so an issue never ends up marked as processed
   with half its labels.
A run killed between the two re-plans the same labels (nothing marks the issue processed yet) and posts no second
comment. Only additive writes exist: the client has no call that removes labels, edits or closes anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from triage.config.names import is_reserved
from triage.core.plan import Plan
from triage.config.templates import comment_marker


@dataclass(frozen=True)
class PostComment:
    issue: int
    template: str
    body: str

    @property
    def marker(self) -> str:
        return comment_marker(self.template)


@dataclass(frozen=True)
class AddLabels:
    issue: int
    labels: tuple[str, ...]


Write = PostComment | AddLabels


class IssueWriter(Protocol):  # the subset of triage.github.client.GitHubClient used here
    def create_comment(self, repo: str, number: int, body: str, *, dedupe_marker: str | None = None) -> dict: ...
    def add_labels(self, repo: str, number: int, labels: list[str]) -> list[dict]: ...


class UnsafeWrite(ValueError):
    """A plan asked for a label outside the allowlist: refused before anything is sent."""


def planned_writes(plan: Plan, allowed_labels: frozenset[str]) -> list[Write]:
    """The writes a plan needs, in the order they must happen. Pure; an empty list means "write nothing".

    The planner's guardrails already keep labels to the allowlist; this re-check is the last gate before the
    network, so a bug anywhere upstream still cannot write an arbitrary label.
    """
    outside = [label for label in plan.add_labels if label not in allowed_labels or is_reserved(label)]
    if outside:  # a reserved label in any spelling (GitHub compares names without case) is outside, listed or not
        raise UnsafeWrite(f"issue #{plan.issue}: refusing to add labels outside the allowlist: {outside}")
    writes: list[Write] = []
    if plan.comment is not None:
        writes.append(PostComment(plan.issue, plan.comment.template, plan.comment.body))
    if plan.add_labels:
        writes.append(AddLabels(plan.issue, tuple(plan.add_labels)))
    return writes
