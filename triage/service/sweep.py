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

The loop drives the triage service through a typed interface (`Sweepable`: its `rules`, `now`, `within_reserve`
and `run(IssueRequest)`), and a source through `Source`; it reaches into neither. `IssueRequest` is what every
caller asks of the service for one issue: an event run, a dispatch, a sweep's issue, plan mode and apply mode.

May import: the standard library, `triage.core.vocab`, `triage.http.errors`, `triage.service.limits`,
`triage.service.readings`, `triage.service.request`, `triage.service.results`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from triage.core.vocab import Outcome
from triage.http.errors import BudgetExhausted, HTTPError
from triage.service.limits import SWEEP_API_RESERVE
from triage.service.readings import RECENT, updated_seconds_ago
from triage.service.request import IssueRequest
from triage.service.results import IssueResult, SweepResult

STALE = "already processed"
SEARCH_PAGE = 100  # results per search page (GitHub's maximum)


@dataclass(frozen=True)
class SweepRules:
    """What a sweep keeps to, whatever its source: the not-before cut-off and its mode, the issues it leaves to
    their own event run (updated in the last `recent_seconds`), and what its report says (a dry run, the
    marker)."""

    not_before: str | None = None
    not_before_mode: str = "skip"
    recent_seconds: float = 600.0
    dry_run: bool = False
    marker: str = ""


class Sweepable(Protocol):
    """What the sweep asks of the triage service (triage.service.triager.Triager is one), by name."""

    rules: SweepRules

    def now(self) -> float: ...

    def within_reserve(self, requests: int) -> AbstractContextManager[Any]: ...

    def run(self, request: IssueRequest) -> IssueResult: ...


class Searcher(Protocol):
    def search_page(self, query: str, *, sort: str = "created", order: str = "asc") -> tuple[list[dict], int]: ...


@dataclass(frozen=True)
class Candidate:
    """One issue a source offers: its number, the source's count of issues and this one's position (this issue and
    those after it are what a stop leaves), and the source's own copy of the issue when it has one (the
    search's)."""

    number: int
    found: int
    position: int
    copy: Mapping[str, Any] | None = None


class Source(Protocol):
    """Where a sweep's issues come from: what the report calls them, why an issue it offers may already be done,
    how many a cut-off leaves out, and the issues, in order."""

    query: str
    stale: str

    def before_cutoff(self, cutoff: str) -> int: ...

    def candidates(self, skip_before: str | None) -> Iterator[Candidate]: ...


class QueueSearch:
    """The queue as GitHub's search finds it: open, in the queue, not processed, not waiting for a person
    (`query`, triage.service.triager.Triager.sweep_query), created at or after the skip cut-off, oldest first."""

    stale = f"{STALE} (the search index lags)"  # its copy can predate our own writes

    def __init__(self, search: Searcher, query: str) -> None:
        self.search = search
        self.query = query

    def before_cutoff(self, cutoff: str) -> int:
        """One search request: GitHub's count of the queue issues the cut-off leaves alone."""
        return self.search.search_page(f"{self.query} created:<{cutoff}")[1]

    def candidates(self, skip_before: str | None) -> Iterator[Candidate]:
        for item, total, index in self.pages(after=skip_before):
            yield Candidate(item["number"], total, total - index, item)

    def pages(self, *, after: str | None = None) -> Iterator[tuple[dict, int, int]]:
        """The queue, oldest first, one search page at a time and only as far as the caller reads, paging by key:
        each page asks for issues created at or after the last one seen. Numbered pages would shift under the
        sweep, because every issue it labels drops out of the results (GitHub's index may apply that at once
        or later). `after`: start at issues created at or after it (the not-before cut-off). Yields (issue,
        GitHub's total for that page's query, the issue's index on the page)."""
        seen: set[int] = set()
        while True:
            page, total = self.search.search_page(self.query + (f" created:>={after}" if after else ""),
                                                  sort="created", order="asc")
            fresh = [item for item in page if isinstance(item.get("number"), int) and item["number"] not in seen]
            for index, item in enumerate(page):
                if item in fresh:
                    seen.add(item["number"])
                    yield item, total, index
            last = page[-1].get("created_at") if page else None
            if len(page) < SEARCH_PAGE or not fresh or not isinstance(last, str) or last == after:
                return
            after = last


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


def run_sweep(target: Sweepable, source: Source, max_issues: int, *, seconds: float | None = None,
              reserve: int = SWEEP_API_RESERVE,
              on_result: Callable[[IssueResult], None] | None = None) -> SweepResult:
    """Triage the source's issues, up to `max_issues` triaged or failed, within `seconds` and above `reserve`
    requests of the hourly API budget (held for this sweep only: the client is handed back as it came). Stops
    cleanly when a budget runs out, and counts what it left for the next sweep."""
    rules = target.rules
    result = SweepResult(query=source.query, not_before=rules.not_before, not_before_mode=rules.not_before_mode,
                         dry_run=rules.dry_run, marker=rules.marker)
    walk = _Walk(max_issues=max_issues, seconds=seconds, started=target.now(), on_result=on_result)
    try:
        with target.within_reserve(reserve):
            _walk(target, source, result, walk)
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


def _walk(target: Sweepable, source: Source, result: SweepResult, walk: _Walk) -> None:
    """The loop over the source; sets `walk.stop` when something ends it early."""
    rules = target.rules
    skip_before, labels_only = _cutoffs(rules.not_before, rules.not_before_mode)
    if skip_before:
        result.before_cutoff = source.before_cutoff(skip_before)
    for candidate in source.candidates(skip_before):
        walk.found = candidate.found if walk.found is None else walk.found
        walk.left = candidate.position
        walk.stop = walk.spent(target.now())
        if walk.stop:
            return
        age = updated_seconds_ago(candidate.copy, target.now()) if candidate.copy is not None else None
        if age is not None and age < rules.recent_seconds:  # recent even in the source's copy: not read
            result.skip(RECENT)
            continue
        issue = target.run(IssueRequest(candidate.number, leave_recent=True, labels_only_before=labels_only,
                                        skip_before=skip_before))
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
