"""The sweep: triage a run of issues one after the other within the run's budgets, whatever supplies their numbers.

Two sources feed the one loop (issue 27: the loop was written twice, and the second copy kept none of the budgets):
- `QueueSearch`: the queue as GitHub's search finds it (a scheduled or manual sweep), oldest first, a page at a
  time; the not-before cut-off (mode skip) is part of the search, so older issues are not even read;
- `ListedIssues`: numbers given by the caller (an apply run's plans file, triage.action.planmode), in order; each
  issue's age is checked once it is read.

Whatever the source, the loop keeps the same rules: the API reserve left to the event runs that follow (the client
refuses, with nothing sent, rather than spend it), the time budget, the write pacing (the client's: an issue whose
writes would not all fit is refused whole), the cut-off in both modes (skip: not triaged; labels-only: labels,
never a comment), `max_issues`, and the clean stop: when one of our own budgets says no before an issue is written,
the sweep ends there and counts what it left for the next run, rather than failing issue after issue. Every issue
is re-read before it is planned (triage.service.triager).

May import: the standard library, `triage.core.vocab`, `triage.http.errors`, `triage.service.limits`,
`triage.service.readings`, `triage.service.results`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping

from triage.core.vocab import Outcome
from triage.http.errors import BudgetExhausted, HTTPError
from triage.service.limits import SWEEP_API_RESERVE
from triage.service.readings import RECENT, updated_seconds_ago
from triage.service.results import IssueResult, SweepResult

STALE = "already processed"


@dataclass(frozen=True)
class Candidate:
    """One issue a source offers: its number, the source's count of issues and this one's position (this issue and
    those after it are what a stop leaves), and the source's own copy of the issue when it has one (the search's)."""

    number: int
    found: int
    position: int
    copy: Mapping[str, Any] | None = None


class QueueSearch:
    """The queue as GitHub's search finds it: open, in the queue, not processed, not waiting for a person
    (`Triager.sweep_query`), created at or after the skip cut-off, oldest first."""

    stale = f"{STALE} (the search index lags)"  # its copy can predate our own writes

    def __init__(self, triager) -> None:
        self.triager = triager
        self.query = triager.sweep_query()

    def before_cutoff(self, cutoff: str) -> int:
        """One search request: GitHub's count of the queue issues the cut-off leaves alone."""
        return self.triager.client.search_page(f"{self.query} created:<{cutoff}")[1]

    def candidates(self, skip_before: str | None) -> Iterator[Candidate]:
        for item, total, index in self.triager.queue(self.query, after=skip_before):
            yield Candidate(item["number"], total, total - index, item)


class ListedIssues:
    """Issue numbers given by the caller, in their order; `describe` is what the report calls them."""

    stale = STALE

    def __init__(self, numbers: Iterable[int], describe: str) -> None:
        self.numbers = list(dict.fromkeys(numbers))
        self.query = describe

    def before_cutoff(self, cutoff: str) -> int:
        return 0  # nothing is known before an issue is read: each is counted as it is (see `_tally`)

    def candidates(self, skip_before: str | None) -> Iterator[Candidate]:
        for index, number in enumerate(self.numbers):
            yield Candidate(number, len(self.numbers), len(self.numbers) - index)


def run_sweep(triager, source, max_issues: int, *, seconds: float | None = None, reserve: int = SWEEP_API_RESERVE,
              on_result: Callable[[IssueResult], None] | None = None) -> SweepResult:
    """Triage the source's issues, up to `max_issues` triaged or failed, within `seconds` and above `reserve`
    requests of the hourly API budget (held for this sweep only: the client is handed back as it came). Stops
    cleanly when a budget runs out, and counts what it left for the next sweep."""
    result = SweepResult(query=source.query, not_before=triager.not_before, not_before_mode=triager.not_before_mode,
                         dry_run=triager.dry_run, marker=triager.bundle.labels.marker)
    walk = _Walk(max_issues=max_issues, seconds=seconds, started=triager.clock(), on_result=on_result)
    try:
        with triager.client.reserve(reserve):
            _walk(triager, source, result, walk)
    except HTTPError as exc:  # the search's own (each issue's errors are in its result)
        if isinstance(exc, BudgetExhausted):
            walk.stop = f"the API budget ran out: {exc}"
        else:
            result.results.append(IssueResult(number=None, error=f"search failed: {exc}", fatal=True))
            walk.stop = "the search failed"
    result.found = walk.found or 0
    result.stopped = walk.stop
    if walk.stop:  # the issue it stopped at is left too, unless it is reported as failed
        result.left = max(walk.left - (1 if walk.failed_at_stop else 0), 0)
    return result


def _cutoffs(not_before: str | None, mode: str) -> tuple[str | None, str | None]:
    """(the cut-off below which the sweep does not triage, the cut-off below which it does not comment)."""
    if not not_before:
        return None, None
    return (not_before, None) if mode == "skip" else (None, not_before)


def _walk(triager, source, result: SweepResult, walk: _Walk) -> None:
    """The loop over the source; sets `walk.stop` when something ends it early."""
    skip_before, labels_only = _cutoffs(triager.not_before, triager.not_before_mode)
    if skip_before:
        result.before_cutoff = source.before_cutoff(skip_before)
    for candidate in source.candidates(skip_before):
        walk.found = candidate.found if walk.found is None else walk.found
        walk.left = candidate.position
        walk.stop = walk.spent(triager.clock())
        if walk.stop:
            return
        age = updated_seconds_ago(candidate.copy, triager.clock()) if candidate.copy is not None else None
        if age is not None and age < triager.recent_seconds:  # recent even in the source's copy: not read
            result.skip(RECENT)
            continue
        issue = triager.triage(candidate.number, leave_recent=True, cutoff=labels_only, skip_before=skip_before)
        walk.stop = _tally(result, walk, issue, source.stale)
        if walk.stop:
            return


def _tally(result: SweepResult, walk: _Walk, issue: IssueResult, stale: str) -> str | None:
    """Count one issue's result in the sweep; why the sweep stops here, or None to go on."""
    if issue.left and issue.error is None:
        result.before_cutoff += issue.before_cutoff  # skip mode on a listed issue (the search never finds one)
        result.skip(issue.left)
        return None
    if issue.error is None and issue.plan is not None and issue.plan.outcome == Outcome.NOTHING_TO_DO \
            and not issue.labels_written:
        # Processed since the source listed it (the search's index lags our writes; a plans file is older than
        # the issue): not counted.
        result.skip(stale)
        return None
    if issue.out_of_budget and not issue.applied.labels and not issue.applied.comment_template:
        # The run's own budget said stop before this issue was written: a clean stop, not a failure; the
        # issue is left for the next sweep with the others.
        return f"the API budget ran out: {issue.error}"
    walk.done += 1
    result.before_cutoff += issue.before_cutoff  # labels-only mode: labelled, not commented on
    result.results.append(issue)
    if walk.on_result is not None:
        walk.on_result(issue)
    if issue.fatal:
        walk.failed_at_stop = True
        return f"GitHub refused in a way that would fail every issue: {issue.error}"
    return None


@dataclass
class _Walk:
    """Where a sweep is: its budgets (issues, seconds) and what it has counted so far."""

    max_issues: int
    seconds: float | None
    started: float
    on_result: Callable[[IssueResult], None] | None = None
    done: int = 0
    found: int | None = None  # the source's count of issues (GitHub's, from the search's first page)
    left: int = 0  # the issue being looked at and those after it
    stop: str | None = None
    failed_at_stop: bool = False  # the sweep stopped at an issue that failed (reported, so not left)

    def spent(self, now: float) -> str | None:
        if self.done >= self.max_issues:
            return f"max-issues ({self.max_issues}) reached"
        if self.seconds is not None and now - self.started > self.seconds:
            return f"the sweep's time budget ({self.seconds:g} s) ran out"
        return None
