"""The triage service: "triage one issue" and "sweep the queue", given a GitHub client, a configuration bundle
and a planner. The Action and the CLI are two thin callers of it; it knows nothing of either (no environment,
no inputs, no printing) and returns typed results.

What it reads, and why (a promise to users, kept even where an event's payload seems to carry the data):
- the issue itself, always, from GitHub: a payload can predate our own earlier writes (a second event queued
  behind the first, "Re-run jobs"), and trusting its labels or comment count is how a second comment happens;
- the comments, only when GitHub says there are any (one call per 100);
- the label events, only when they can change the decision: step 0 (module and sub-oncall both present: were
  they added by people?) and a high-priority flag (did a person already dismiss an earlier flag?);
- before posting a template, every run claims the comment (a 👀 reaction on the issue, one request: GitHub
  answers 201 to one run only; a 👀 the account already has and nobody is using is taken over), a run that found
  a young 👀 reads the comments until that run's comment is there, and every run that posted reads the comments
  once more and deletes a twin of its own comment (triage.service.claim): a sweep cannot share the issue's
  concurrency group, and a workflow may lack one.
Calls per issue (issue 11's budget): a fresh issue without comments costs 1 read + at most 3 writes + 1 read (5:
the claim, the comment, the read after it, the labels; 2 when no comment is planned); with
comments, one more read per 100; a second run, or a stale payload after the first run wrote, costs 1-2 reads and
no write; an issue waiting for a person (the review label without the marker) costs the 1 read and is left.

What a non-forced run leaves alone, and why: an issue waiting for a person (a high-priority hold keeps its hold
across sweeps, late events and re-runs until a person removes the review label, adds the marker or re-triages);
in a sweep, an issue updated in the last `recent_seconds` (its own event run is about to take it or is taking it).

Its results are typed in triage.service.results (and importable from here); the GitHub client is passed in, typed
as what the service needs of it (triage.service.ports).

May import: the standard library, `triage.config`, `triage.core`, `triage.planners`, `triage.http.errors`,
`triage.service.*`.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Iterable, Iterator, Mapping

from triage.config.bundle import Bundle
from triage.config.templates import TemplatesError
from triage.config.words import queue_words
from triage.core.plan import Plan
from triage.core.outcome import classification
from triage.core.snapshot import InputError, IssueSnapshot, snapshot_from_json
from triage.core.vocab import Outcome
from triage.core.writes import UnsafeWrite, planned_writes
from triage.http.errors import BudgetExhausted, HTTPError, is_fatal_for_run
from triage.planners import plan_issue
from triage.planners.base import Planner
from triage.service.apply import apply_writes
from triage.service.claim import CLAIM_REQUESTS, CLAIM_WAIT_SECONDS, CLAIM_WRITES, may_post, remove_duplicates, settle
from triage.service.cutoff import NO_COMMENT, SKIPPED, created_before
from triage.service.limits import SWEEP_API_RESERVE
from triage.service.ports import GitHubPort
from triage.service.readings import RECENT, label_history, updated_seconds_ago
from triage.service.results import IssueResult, SweepResult
from triage.service.sweep import QueueSearch, run_sweep

SEARCH_PAGE = 100  # results per search page (GitHub's maximum)


_KEPT_ROLES = ("sub-oncall", "module", "type")


def kept_labels(labels, had, plan: Plan) -> tuple[str, ...]:
    """The labels of a team, a module or a type the issue carries that the plan does not name: a re-triage never
    removes one, so each stays as it is unless a person removes it."""
    named = {*plan.add_labels, *plan.modules, *([plan.sub_oncall] if plan.sub_oncall else [])}
    return tuple(name for name in had if labels.role(name) in _KEPT_ROLES and name not in named)


def opted_out_reason(skip: str) -> str:
    """Why an issue with the opt-out label is left (the summary, the log, a refused command say it)."""
    return f"carries '{skip}': a person asked the bot to leave it alone (remove the label to triage it)"


class Triager:
    def __init__(self, client: GitHubPort, bundle: Bundle, *, repo: str, queue_label: str | None = None,
                 planner: Planner | None = None, dry_run: bool = False, own_logins: Iterable[str] = (),
                 issue_seconds: float | None = 120.0, recent_seconds: float = 600.0,
                 clock: Callable[[], float] = time.time, claim_wait: float = CLAIM_WAIT_SECONDS,
                 not_before: str | None = None, not_before_mode: str = "skip",
                 precheck: Callable[[int, Mapping[str, Any]], str | None] | None = None):
        self.client = client
        self.bundle = bundle
        self.repo = repo
        self.queue_label = queue_label or bundle.labels.queue_label
        self.planner = planner
        self.dry_run = dry_run
        self.own_logins = frozenset(own_logins) or None
        self.issue_seconds = issue_seconds
        self.recent_seconds = recent_seconds
        self.clock = clock
        self.claim_wait = claim_wait
        self.not_before = not_before  # a sweep's cut-off (triage.service.cutoff); event runs ignore it
        self.not_before_mode = not_before_mode
        # What the reports call the outcomes: the configuration's words (not an input that renames the label).
        self.words = queue_words(bundle.rubric.words, bundle.labels.queue_label)
        # The run's own condition on the issue as just read, after the queue/closed/hold checks: a reason to leave
        # it, or None (the apply mode's "changed since the plan was made", triage.action.planmode).
        self.precheck = precheck

    # -- one issue --------------------------------------------------------------------------------------------

    def triage(self, number: int, *, force: bool = False, require_queue: bool = True,
               issue: Mapping[str, Any] | None = None, leave_recent: bool = False,
               cutoff: str | None = None, skip_before: str | None = None) -> IssueResult:
        """Read the issue from GitHub, plan it, and apply the plan (unless dry run). `issue`, when given, is the
        issue as just read (e.g. by the sweep's re-read) and is used instead of reading it again. A GitHub failure
        ends up in `error`, with whatever was written before it, so a sweep goes on and reports the truth.
        `cutoff`: an issue created before it gets labels but no comment (the sweep's labels-only not-before);
        `skip_before`: an issue created before it is left (the sweep's not-before in mode skip)."""
        result = IssueResult(number=number, dry_run=self.dry_run, forced=force, words=self.words,
                             marker=self.bundle.labels.marker, criteria=self.bundle.rubric.criteria_descriptions)
        before = self.client.request_count
        started = time.monotonic()
        try:
            with self.client.deadline(self.issue_seconds or None):
                self._triage(result, number, force=force, require_queue=require_queue, issue=issue,
                             leave_recent=leave_recent, cutoff=cutoff, skip_before=skip_before)
        except (InputError, UnsafeWrite, TemplatesError) as exc:
            result.error = str(exc)
        except HTTPError as exc:
            result.error = str(exc)
            result.fatal = is_fatal_for_run(exc)
            result.out_of_budget = isinstance(exc, BudgetExhausted)
            if result.out_of_budget and self.issue_seconds and time.monotonic() - started >= self.issue_seconds:
                # The issue's own time ran out (a stalled planner: a model that drips its answer), not the API
                # budget: a failure to report, with the issue named, never a clean "budget spent" stop.
                result.out_of_budget = result.fatal = False  # the next issue has its own time
                result.error = (f"the issue took longer than its {self.issue_seconds:g} s (issue-timeout); the "
                                f"planner stalled? {exc}")
        finally:
            result.requests = self.client.request_count - before
        return result

    def _triage(self, result: IssueResult, number: int, *, force: bool, require_queue: bool,
                issue: Mapping[str, Any] | None, leave_recent: bool = False, cutoff: str | None = None,
                skip_before: str | None = None) -> None:
        issue = dict(issue) if issue is not None else self.client.get_issue(self.repo, number)
        bare = snapshot_from_json(issue)  # validates the shape before spending more calls on it
        result.title, result.url = bare.title, str(issue.get("html_url") or "")
        result.labels_before = tuple(bare.labels)
        stamp = issue.get("updated_at")
        result.updated_at = stamp if isinstance(stamp, str) else ""
        if bare.is_pull_request:
            raise InputError(f"#{number} is a pull request, not an issue")
        result.opted_out = self.bundle.labels.opted_out(bare.labels)
        result.left = self._leave(bare, issue, force=force, require_queue=require_queue, leave_recent=leave_recent)
        if result.left:
            return
        if skip_before and created_before(issue, skip_before):
            result.left, result.before_cutoff = SKIPPED.format(cutoff=skip_before), True
            return
        count = issue.get("comments")
        comments = self.client.list_comments(self.repo, number) if not isinstance(count, int) or count > 0 else []
        if comments and not self.dry_run:  # two of ours from one template (runs at once, one killed): one stays
            gone = remove_duplicates(self.client, self.repo, number, comments, self.own_logins,
                                     self.bundle.templates.names)
            comments = [c for c in comments if c.get("id") not in gone]
        snapshot = bare.with_comments(comments)  # the issue parsed once; its comments added
        if self.bundle.labels.marker in snapshot.labels and not force:
            result.plan = self._plan(snapshot, force=False)  # nothing to do; says why
            return
        plan = self._decide(snapshot, force=force)
        if cutoff and created_before(issue, cutoff):
            result.before_cutoff = True
            if plan.comment is not None:  # an old issue: labelled, never commented on
                plan = plan.with_(comment=None, reasons=plan.reasons + (NO_COMMENT.format(cutoff=cutoff),))
        writes = planned_writes(plan, self.bundle.labels.names)  # an unsafe plan is refused before the claim
        if writes and not self.dry_run:
            # All of the issue's writes fit in what is left (the claim and its re-read of comments included), or
            # none is started: never a comment without its labels because a budget ran out in between.
            claim = CLAIM_REQUESTS if plan.comment is not None else 0
            self.client.room_for(len(writes) + claim, len(writes) + (CLAIM_WRITES if claim else 0))
        if plan.comment is not None and not self.dry_run:
            # Two runs at once (a sweep beside an event run, or a workflow without the per-issue group): only the
            # run that wins the claim posts; a loser waits for the winner's comment (triage.service.claim).
            claimed = may_post(self.client, self.repo, snapshot, plan.comment.template, self.own_logins,
                               clock=self.clock, wait=self.claim_wait)
            if not claimed.post:  # not planned again (a planner can be slow or paid): the comment is dropped
                plan = plan.with_(comment=None, reasons=plan.reasons + (claimed.why,))
                writes = planned_writes(plan, self.bundle.labels.names)
        result.plan = plan
        if force:  # the procedure only adds: what a person asked to change by re-triage stays until they remove it
            result.kept = kept_labels(self.bundle.labels, snapshot.labels, plan)
        if self.dry_run or not writes:
            return
        apply_writes(self.client, self.repo, writes, result.applied,
                     after_comment=lambda write, posted: self._settle(result, write.template, posted))

    def _settle(self, result: IssueResult, template: str, posted: dict) -> bool:
        """Just after posting: a twin posted by another run at the same moment is deleted, the earlier one kept
        (triage.service.claim.settle). False when ours was the one deleted (the result then says so)."""
        why = settle(self.client, self.repo, result.plan.issue, template, posted, self.own_logins)
        if why and result.plan is not None:
            result.plan = result.plan.with_(comment=None, reasons=result.plan.reasons + (why,))
        return why is None

    def _leave(self, bare: IssueSnapshot, issue: dict, *, force: bool, require_queue: bool,
               leave_recent: bool) -> str | None:
        """Why the issue as just read is not this run's to triage, or None."""
        labels = self.bundle.labels
        if labels.opted_out(bare.labels):  # first, and even when forced: only a person lifts an opt-out
            return opted_out_reason(labels.skip)
        if require_queue and not bare.has_label(self.queue_label):
            return f"not in the queue (no '{self.queue_label}' label)"
        if bare.state != "open" and require_queue:
            return "closed"
        if not force and labels.review in bare.labels and labels.marker not in bare.labels:
            # A high-priority hold (the bot's review label without the marker) or a person's own flag: a person
            # looks next. Only a person lifts it (removing the label, adding the marker, or a forced re-triage);
            # a late event, a re-run or a sweep must not, whatever the issue's text says now.
            return f"waiting for a person ('{labels.review}' without '{labels.marker}')"
        if self.precheck is not None:
            why = self.precheck(bare.number, issue)
            if why:
                return why
        if leave_recent:
            # Checked on the issue as just read, not on the search's copy (which can predate the event that
            # started another run on this issue).
            age = updated_seconds_ago(issue, self.clock())
            if age is not None and age < self.recent_seconds:
                return RECENT
        return None

    def _decide(self, snapshot: IssueSnapshot, *, force: bool) -> Plan:
        """The plan, reading the label history only where it can change it: step 0 (were the module and the
        sub-oncall labels added by people?) and a high-priority flag (did a person dismiss an earlier one?)."""
        if self._step0_may_stop(snapshot):
            snapshot = self._with_history(snapshot)
        plan = self._plan(snapshot, force=force)
        if plan.outcome == Outcome.HIGH_PRIORITY and not snapshot.history_read:
            snapshot = self._with_history(snapshot)  # was an earlier flag dismissed by a person?
            if snapshot.review_dismissed:  # rare: plan again, so step 5 does not raise the flag a second time
                plan = self._plan(snapshot, force=force)
        return plan

    def _plan(self, snapshot: IssueSnapshot, *, force: bool) -> Plan:
        return plan_issue(snapshot, self.bundle, planner=self.planner, force=force, own_logins=self.own_logins)

    def _step0_may_stop(self, snapshot: IssueSnapshot) -> bool:
        return classification(snapshot.labels, self.bundle.labels, self.bundle.rubric).complete

    def _with_history(self, snapshot: IssueSnapshot) -> IssueSnapshot:
        events = self.client.list_events(self.repo, snapshot.number)
        by_bots, dismissed = label_history(events, self.bundle.labels.review)
        return replace(snapshot, labels_added_by_bots=by_bots & set(snapshot.labels), review_dismissed=dismissed,
                       history_read=True)

    # -- the queue --------------------------------------------------------------------------------------------

    def sweep_query(self) -> str:
        labels = self.bundle.labels
        # Waiting for a person (the review label without the marker: a high-priority hold, or a person's own
        # flag) is not ours to take again: excluded, so it neither repeats work nor uses the budget; so is an
        # issue a person opted out (the opt-out label).
        return (f'repo:{self.repo} is:issue is:open label:"{self.queue_label}" '
                f'-label:"{labels.marker}" -label:"{labels.review}" -label:"{labels.skip}"')

    def queue(self, query: str, *, after: str | None = None) -> Iterator[tuple[dict, int, int]]:
        """The queue, oldest first, one search page at a time and only as far as the caller reads, paging by key:
        each page asks for issues created at or after the last one seen. Numbered pages would shift under the
        sweep, because every issue it labels drops out of the results (GitHub's index may apply that at once
        or later). `after`: start at issues created at or after it (the not-before cut-off). Yields (issue,
        GitHub's total for that page's query, the issue's index on the page)."""
        seen: set[int] = set()
        while True:
            page, total = self.client.search_page(query + (f" created:>={after}" if after else ""),
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

    def sweep(self, max_issues: int, *, seconds: float | None = None, reserve: int = SWEEP_API_RESERVE,
              on_result: Callable[[IssueResult], None] | None = None, source: Any = None) -> SweepResult:
        """Triage open queue issues without the marker and not waiting for a person, oldest first, up to
        `max_issues`, reading the search a page at a time by key (see `queue`), so labelling issues never makes
        it miss one, and it reads no page it will not use. Each issue is re-read before planning (search results
        lag). Issues updated in the last `recent_seconds` are left to their own event run. Stops cleanly when the
        API budget, the time budget or the issue budget runs out, and counts what it left for the next sweep.
        `source`: other issue numbers than the search's (triage.service.sweep.ListedIssues), with the same rules.

        `reserve`: requests of the hourly API budget this sweep leaves to the event runs that follow it. When it
        is reached the client refuses with nothing sent, and the sweep stops cleanly; the next sweep takes what
        is left. It holds for this sweep only: the client is handed back as it came."""
        return run_sweep(self, source or QueueSearch(self), max_issues, seconds=seconds, reserve=reserve,
                         on_result=on_result)
