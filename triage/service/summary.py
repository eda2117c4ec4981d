"""One line per issue result, for logs (the Action's and the CLI's): pure formatting of a typed result.

May import: the standard library only (it reads `IssueResult`'s attributes).
"""

from __future__ import annotations


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
