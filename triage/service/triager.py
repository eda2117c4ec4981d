"""The triage service: "triage one issue" and "sweep the queue", given a GitHub client, a configuration bundle,
a planner and an executor. The Action and the CLI are two thin callers of it; it knows nothing of either (no
environment, no inputs, no printing) and returns typed results.

One issue is three named steps, the same for an event run, a dispatch, a sweep's issue, plan mode and apply mode
(`Triager.run`, with what the caller asks in one `IssueRequest`):
1. read: the issue from GitHub (and its comments, and its label events where they can change the decision), and
   whether it is this run's to triage at all (`left`);
2. decide: the planner's decisions, made once (`Planner.decide`: a model asked at most once), through the
   procedure and the policy into a plan, and the plan into one `Effects` value (`triage.core.effects.plan_effects`:
   the command's reaction, the bot's own twins to delete, the comment with its claim, the labels);
3. execute: the run's executor (`triage.service.executor`) writes them, or, in a dry run, records them.

What it reads, and why (a promise to users, kept even where an event's payload seems to carry the data):
- the issue itself, always, from GitHub: a payload can predate our own earlier writes (a second event queued
  behind the first, "Re-run jobs"), and trusting its labels or comment count is how a second comment happens;
- the comments, only when GitHub says there are any (one call per 100);
- the label events, only when they can change the decision: step 0 (module and sub-oncall both present: were
  they added by people?) and a high-priority flag (did a person already dismiss an earlier flag?);
- before posting a template, every run claims the comment (a 👀 reaction on the issue, one request: GitHub
  answers 201 to one run only; a 👀 the account already has and nobody is using is taken over), a run that found
  a young 👀 reads the comments until that run's comment is there, and every run that posted reads the comments
  once more and deletes a twin of its own comment (triage.service.claim, run by the executor): a sweep cannot
  share the issue's concurrency group, and a workflow may lack one.
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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from triage.config.bundle import Bundle
from triage.config.templates import TemplatesError
from triage.core.effects import Effects, React, UnsafeWrite, plan_effects
from triage.core.outcome import classification
from triage.core.plan import Plan
from triage.core.snapshot import InputError, IssueSnapshot, snapshot_from_json
from triage.core.vocab import Outcome
from triage.http.errors import BudgetExhausted, HTTPError, is_fatal_for_run
from triage.planners import decide, final_plan
from triage.planners.base import Planner
from triage.service.claim import CLAIM_WAIT_SECONDS
from triage.service.cutoff import SKIPPED, created_before
from triage.service.executor import Executor, executor_for
from triage.service.limits import SWEEP_API_RESERVE
from triage.service.ports import GitHubPort
from triage.service.readings import RECENT, label_history, updated_seconds_ago
from triage.service.request import Answer, IssueRequest
from triage.service.results import IssueResult, SweepResult
from triage.service.sweep import QueueSearch, Source, SweepRules, run_sweep

_KEPT_ROLES = ("sub-oncall", "module", "type")


def kept_labels(labels, had, plan: Plan) -> tuple[str, ...]:
    """The labels of a team, a module or a type the issue carries that the plan does not name: a re-triage never
    removes one, so each stays as it is unless a person removes it."""
    named = {*plan.add_labels, *plan.modules, *([plan.sub_oncall] if plan.sub_oncall else [])}
    return tuple(name for name in had if labels.role(name) in _KEPT_ROLES and name not in named)


def opted_out_reason(skip: str) -> str:
    """Why an issue with the opt-out label is left (the summary, the log, a refused command say it)."""
    return f"carries '{skip}': a person asked the bot to leave it alone (remove the label to triage it)"


@dataclass(frozen=True)
class _Read:
    """The issue as this run read it: the REST object, and the snapshot with its comments."""

    issue: dict
    snapshot: IssueSnapshot


class Triager:
    """The service over one repository. `own_logins`: the account the token writes as (`bot-login`): only its
    comments count as the bot's, and only when exactly one is known are its own twins ever deleted. The executor
    (`executor`, or the one `dry_run` picks, triage.service.executor) is the only thing that writes."""

    def __init__(self, client: GitHubPort, bundle: Bundle, *, repo: str, queue_label: str | None = None,
                 planner: Planner | None = None, dry_run: bool = False, own_logins: Iterable[str] = (),
                 issue_seconds: float | None = 120.0, recent_seconds: float = 600.0,
                 clock: Callable[[], float] = time.time, claim_wait: float = CLAIM_WAIT_SECONDS,
                 not_before: str | None = None, not_before_mode: str = "skip",
                 precheck: Callable[[int, Mapping[str, Any]], str | None] | None = None,
                 executor: Executor | None = None):
        self.client = client
        self.bundle = bundle
        self.repo = repo
        self.queue_label = queue_label or bundle.labels.queue_label
        self.planner = planner
        self.own_logins = frozenset(login for login in own_logins if login) or None
        self.own_login = next(iter(self.own_logins)) if self.own_logins and len(self.own_logins) == 1 else None
        self.executor = executor or executor_for(client, repo, dry_run=dry_run, own_login=self.own_login,
                                                 clock=clock, claim_wait=claim_wait)
        self.issue_seconds = issue_seconds
        self.clock = clock
        # What a sweep keeps to: its cut-off (triage.service.cutoff; event runs ignore it) and the issues it leaves
        # to their own event run.
        self.rules = SweepRules(not_before=not_before, not_before_mode=not_before_mode,
                                recent_seconds=recent_seconds, dry_run=self.executor.dry_run,
                                marker=bundle.labels.marker)
        # The run's own condition on the issue as just read, after the queue/closed/hold checks: a reason to leave
        # it, or None (the apply mode's "changed since the plan was made", triage.action.planmode).
        self.precheck = precheck

    # -- one issue --------------------------------------------------------------------------------------------

    def triage(self, number: int, *, force: bool = False, require_queue: bool = True,
               answer: Answer | None = None) -> IssueResult:
        """An event run's issue (`run` with these options): `answer`, the re-triage command's comment."""
        return self.run(IssueRequest(number, force=force, require_queue=require_queue, answer=answer))

    def run(self, request: IssueRequest) -> IssueResult:
        """Read the issue from GitHub, decide its effects, and execute them (a dry run records them). A GitHub
        failure ends up in `error`, with whatever was written before it, so a sweep goes on and reports the
        truth."""
        result = IssueResult(number=request.number, dry_run=self.executor.dry_run, forced=request.force,
                             words=self.bundle.words, marker=self.bundle.labels.marker,
                             criteria=self.bundle.rubric.criteria_descriptions)
        before = self.client.request_count
        started = time.monotonic()
        try:
            with self.client.deadline(self.issue_seconds or None):
                read = self.read(request, result)
                result.effects = self.decide(request, read, result)
                self.executor.execute(result.effects, result.applied)
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

    def read(self, request: IssueRequest, result: IssueResult) -> _Read | None:
        """The issue as GitHub has it now (never the payload's copy), with its comments when GitHub says there are
        any; None when it is not this run's to triage (`result.left` says why)."""
        issue = dict(self.client.get_issue(self.repo, request.number))
        bare = snapshot_from_json(issue)  # validates the shape before spending more calls on it
        result.title, result.url = bare.title, str(issue.get("html_url") or "")
        result.labels_before = tuple(bare.labels)
        stamp = issue.get("updated_at")
        result.updated_at = stamp if isinstance(stamp, str) else ""
        if bare.is_pull_request:
            raise InputError(f"#{request.number} is a pull request, not an issue")
        result.opted_out = self.bundle.labels.opted_out(bare.labels)
        result.left = self._leave(bare, issue, request)
        if result.left:
            return None
        if request.skip_before and created_before(issue, request.skip_before):
            result.left, result.before_cutoff = SKIPPED.format(cutoff=request.skip_before), True
            return None
        count = issue.get("comments")
        comments = self.client.list_comments(self.repo, request.number) \
            if not isinstance(count, int) or count > 0 else []
        return _Read(issue, bare.with_comments(comments))  # the issue parsed once; its comments added

    def decide(self, request: IssueRequest, read: _Read | None, result: IssueResult) -> Effects:
        """The issue's plan (`result.plan`: the policy's, never edited after it) and its effects. An issue left
        gets only the command's answer, if a command asked."""
        acknowledge, answer = None, request.answer
        if answer is not None:  # decided on the issue as just read: an opt-out added since the command is seen
            acknowledge = React(answer.comment_id, answer.refused, opted_out_reason(self.bundle.labels.skip)) \
                if result.opted_out else React(answer.comment_id, answer.running, "the command: read, and run")
        if read is None:
            return plan_effects(request.number, None, bundle=self.bundle, acknowledge=acknowledge)
        cutoff = request.labels_only_before
        processed = self.bundle.labels.marker in read.snapshot.labels and not request.force
        if cutoff and not processed and created_before(read.issue, cutoff):
            result.before_cutoff = True  # an old issue: labelled, never commented on (the policy drops it)
        plan = self._plan(read.snapshot, force=request.force,
                          before_cutoff=cutoff if result.before_cutoff else None)
        effects = plan_effects(request.number, plan, bundle=self.bundle, snapshot=read.snapshot,
                               own_login=self.own_login, acknowledge=acknowledge)  # UnsafeWrite: nothing written
        result.plan = plan
        # The procedure only adds: what a person asked re-triage to change stays for them to remove.
        if request.force:
            result.kept = kept_labels(self.bundle.labels, read.snapshot.labels, plan)
        return effects

    def _leave(self, bare: IssueSnapshot, issue: dict, request: IssueRequest) -> str | None:
        """Why the issue as just read is not this run's to triage, or None."""
        labels = self.bundle.labels
        if labels.opted_out(bare.labels):  # first, and even when forced: only a person lifts an opt-out
            return opted_out_reason(labels.skip)
        if request.require_queue and not bare.has_label(self.queue_label):
            return f"not in the queue (no '{self.queue_label}' label)"
        if bare.state != "open" and request.require_queue:
            return "closed"
        if not request.force and labels.review in bare.labels and labels.marker not in bare.labels:
            # A high-priority hold (the bot's review label without the marker) or a person's own flag: a person
            # looks next. Only a person lifts it (removing the label, adding the marker, or a forced re-triage);
            # a late event, a re-run or a sweep must not, whatever the issue's text says now.
            return f"waiting for a person ('{labels.review}' without '{labels.marker}')"
        if self.precheck is not None:
            why = self.precheck(bare.number, issue)
            if why:
                return why
        if request.leave_recent:
            # Checked on the issue as just read, not on the search's copy (which can predate the event that
            # started another run on this issue).
            age = updated_seconds_ago(issue, self.clock())
            if age is not None and age < self.rules.recent_seconds:
                return RECENT
        return None

    def _plan(self, snapshot: IssueSnapshot, *, force: bool, before_cutoff: str | None) -> Plan:
        """The plan, reading the label history only where it can change it: step 0 (were the module and the
        sub-oncall labels added by people?) and a high-priority flag (did a person dismiss an earlier one?). The
        planner decides once: a flag a person dismissed is proposed again from the same decisions, on the issue
        with its label events, so a model is never asked twice about one issue."""
        if self.bundle.labels.marker in snapshot.labels and not force:
            pass  # processed already: nothing to do, and the plan says why (no label history needed)
        elif classification(snapshot.labels, self.bundle.labels, self.bundle.rubric).complete:
            snapshot = self._with_history(snapshot)  # step 0 may stop: were they added by people?
        started = time.perf_counter()
        decided = decide(self.planner, snapshot, self.bundle, force=force)
        plan = final_plan(decided, snapshot, self.bundle, own_logins=self.own_logins, before_cutoff=before_cutoff,
                          started=started)
        if plan.outcome == Outcome.HIGH_PRIORITY and not snapshot.history_read:
            snapshot = self._with_history(snapshot)  # was an earlier flag dismissed by a person?
            if snapshot.review_dismissed:  # rare: the same decisions, so step 5 does not raise the flag again
                plan = final_plan(decided, snapshot, self.bundle, own_logins=self.own_logins,
                                  before_cutoff=before_cutoff, started=started)
        return plan

    def _with_history(self, snapshot: IssueSnapshot) -> IssueSnapshot:
        events = self.client.list_events(self.repo, snapshot.number)
        by_bots, dismissed = label_history(events, self.bundle.labels.review)
        return replace(snapshot, labels_added_by_bots=by_bots & set(snapshot.labels), review_dismissed=dismissed,
                       history_read=True)

    # -- the queue --------------------------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock()

    def within_reserve(self, requests: int):
        """Within the block, calls refuse rather than spend the last `requests` of the hourly API budget."""
        return self.client.reserve(requests)

    def sweep_query(self) -> str:
        labels = self.bundle.labels
        # Waiting for a person (the review label without the marker: a high-priority hold, or a person's own
        # flag) is not ours to take again: excluded, so it neither repeats work nor uses the budget; so is an
        # issue a person opted out (the opt-out label).
        return (f'repo:{self.repo} is:issue is:open label:"{self.queue_label}" '
                f'-label:"{labels.marker}" -label:"{labels.review}" -label:"{labels.skip}"')

    def sweep(self, max_issues: int, *, seconds: float | None = None, reserve: int = SWEEP_API_RESERVE,
              on_result: Callable[[IssueResult], None] | None = None, source: Source | None = None) -> SweepResult:
        """Triage open queue issues without the marker and not waiting for a person, oldest first, up to
        `max_issues` (triage.service.sweep: the search read a page at a time by key, each issue re-read before
        planning, issues updated in the last `recent_seconds` left to their own event run, a clean stop when the
        API budget, the time budget or the issue budget runs out). `source`: other issue numbers than the
        search's (triage.service.sweep.ListedIssues), with the same rules.

        `reserve`: requests of the hourly API budget this sweep leaves to the event runs that follow it. When it
        is reached the client refuses with nothing sent, and the sweep stops cleanly; the next sweep takes what
        is left. It holds for this sweep only: the client is handed back as it came."""
        return run_sweep(self, source or QueueSearch(self.client, self.sweep_query()), max_issues, seconds=seconds,
                         reserve=reserve, on_result=on_result)
