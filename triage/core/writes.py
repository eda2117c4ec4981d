"""Apply a plan to GitHub: a pure "plan -> ordered writes" step, then a small executor.

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
    outside = [label for label in plan.add_labels if label not in allowed_labels]
    if outside:
        raise UnsafeWrite(f"issue #{plan.issue}: refusing to add labels outside the allowlist: {outside}")
    writes: list[Write] = []
    if plan.comment is not None:
        writes.append(PostComment(plan.issue, plan.comment.template, plan.comment.body))
    if plan.add_labels:
        writes.append(AddLabels(plan.issue, tuple(plan.add_labels)))
    return writes


@dataclass
class Applied:
    """What actually reached GitHub (filled in as writes succeed, so a partial failure is reported truly)."""

    labels: tuple[str, ...] = ()
    comment_template: str | None = None
    comment_id: int | None = None


def apply_writes(client: IssueWriter, repo: str, writes: list[Write], applied: Applied | None = None) -> Applied:
    """Send the writes in order; stop at the first failure (the caller reports it, a re-run completes it)."""
    applied = applied if applied is not None else Applied()
    for write in writes:
        if isinstance(write, PostComment):
            # The marker lets the client look before retrying a POST whose fate is unknown (timeout, 5xx).
            posted = client.create_comment(repo, write.issue, write.body, dedupe_marker=write.marker)
            applied.comment_template = write.template
            applied.comment_id = posted.get("id") if isinstance(posted, dict) else None
        else:
            client.add_labels(repo, write.issue, list(write.labels))
            applied.labels = write.labels
    return applied
