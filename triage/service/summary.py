"""One line per issue result, for logs (the Action's and the CLI's): pure formatting of a typed result.

May import: the standard library only (it reads `IssueResult`'s and `SweepResult`'s attributes).
"""

from __future__ import annotations

from dataclasses import dataclass


def line_for(result) -> str:
    number = f"#{result.number}" if result.number else "search"
    if result.error:
        words = getattr(result, "words", None)  # the queue's words for the outcome, when the result has them
        outcome = result.plan.outcome if result.plan is not None else ""
        planned = f" (planned {words.outcome(outcome) if words else outcome})" if result.plan is not None else ""
        return f"{number}: failed{planned}: {result.error}"
    if result.left:
        return f"{number}: left: {result.left}"
    verb = "would add" if result.dry_run else "added"
    labels = ", ".join(result.labels_written) or "no labels"
    comment = f"; comment {result.comment_posted}" if result.comment_posted else ""
    return f"{number}: {result.outcome}; {verb} {labels}{comment}"


def cutoff_line(sweep) -> str:
    """The not-before cut-off and what it did, in one line (the log, the summary, the CLI)."""
    if sweep.not_before_mode == "skip":
        return (f"not-before {sweep.not_before}: {sweep.before_cutoff} queue issue(s) created before it were "
                f"not triaged")
    return (f"not-before {sweep.not_before} (labels-only): {sweep.before_cutoff} issue(s) created before it got "
            f"labels and no comment")


@dataclass(frozen=True)
class Counts:
    found: int
    triaged: int
    flagged: int
    commented: int
    failed: int
    skipped: int
    left: int

    @property
    def accounted(self) -> int:
        return self.triaged + self.failed + self.skipped + self.left


def sweep_counts(sweep) -> Counts:
    results = [r for r in sweep.results if r.number]  # a failed search is no queue issue
    return Counts(
        found=sweep.found,
        triaged=sum(1 for r in results if r.triaged),
        flagged=sum(1 for r in results if r.needs_person),
        commented=sum(1 for r in results if r.comment_posted and not r.error),
        failed=sum(1 for r in results if r.error),
        skipped=sum(sweep.skipped.values()),
        left=sweep.left,
    )


def count_gap(sweep) -> str | None:
    """A sentence when the sweep's counts do not add up (found != triaged + failed + skipped + left), else None.
    It happens when GitHub's search count changes under the sweep (issues opened meanwhile, or its index lagging
    the labels this sweep wrote); a person should know the numbers are not the whole story."""
    c = sweep_counts(sweep)
    if c.found == c.accounted:
        return None
    return (f"the counts do not add up: found {c.found}, but triaged {c.triaged} + failed {c.failed} + skipped "
            f"{c.skipped} + left {c.left} = {c.accounted}; GitHub's search count changed during the sweep (issues "
            f"opened meanwhile, or its index lagging the labels written) or some were not reached; the next "
            f"sweep takes what is left")
