"""Shadow mode: how the bot would have triaged a repository's queue over a window, against what its people did.

For every issue that entered the queue (got the queue label) between `since` and `until`, open or closed now:
read it and its timeline (`triage.evaluation.shadow_fetch`, through the cache), rebuild it as it stood when it
entered the queue and take people's labels as they stood at the end of the window (`triage.evaluation.history`,
the rebuild `replay` uses), plan it as the bot would have (`triage.evaluation.cases.plan_rows`), and compare per
step (`triage.evaluation.shadow_steps`). Nothing is written to GitHub.

What the rebuild keeps: the labels the issue had when the queue label was added, and the comments written before
people's first triage label (before the end of the window when nobody has triaged it yet), bots' comments after
the queue label left out. What it cannot: the title and body are today's (the REST API keeps no history of an
issue's body), so an issue edited after it entered the queue is planned on its edited text.

Budget: the client's reserve and pacing as the sweep has them (`SWEEP_API_RESERVE`); when the budget is spent the
run stops cleanly, reports what it read, and says how many issues it left. With a cache, the next run reads only
those.

Bad data costs the issue it belongs to, never the run: a search result that is not an issue, a cache file that is
not shadow's (read again), a timeline GitHub refuses (404, 410, 422...) or answers in the wrong shape, an issue that
cannot be rebuilt: each is one line (`ShadowRun.notes`, `ShadowRun.skipped`) and the run goes on. A failure that
would repeat for every issue (credentials, a rate limit not waited out), a search page that fails, or
`FAILURES_IN_A_ROW` issues in a row whose timeline failed after the client's retries (GitHub failing, not one
issue), stops the run cleanly: it reports what it read and says
why (`ShadowRun.failed`; exit status 1). An issue a person opted out (the opt-out label at queue time or added by
the end of the window) is left out of every figure and counted as such.

May import: the standard library, `triage.evaluation.*`, `triage.github.client`, `triage.service.limits`,
`triage.service.cutoff`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from triage.evaluation.cases import Case, plan_rows
from triage.evaluation.dataset import DatasetRow, parse_row
from triage.evaluation.history import NOT_TRIAGED, History, rebuild_row
from triage.evaluation.shadow_fetch import IssueCache, Search, SearchEnded, Unreadable, fetch_issue, window_query
from triage.evaluation.shadow_steps import shadow_document
from triage.evaluation.shadow_words import evidence_words
from triage.github.client import BudgetExhausted, GitHubError, Transient, is_fatal_for_run
from triage.service.cutoff import parse_not_before
from triage.service.limits import SWEEP_API_RESERVE

DEFAULT_DAYS = 90
FAILURES_IN_A_ROW = 5  # issues in a row whose timeline failed: GitHub is failing, not one issue
STAMP = "%Y-%m-%dT%H:%M:%SZ"


@dataclass
class Window:
    repo: str
    since: str  # ISO 8601, UTC, "YYYY-MM-DDTHH:MM:SSZ"
    until: str
    limit: int | None = None  # read at most this many issues the search finds


def window_bounds(since: str | None, until: str | None, now: datetime | None = None, *,
                  names: tuple[str, str] = ("--since", "--until")) -> tuple[str, str]:
    """(since, until) as UTC timestamps: `until` defaults to now (a date alone means the end of that day), `since`
    to DEFAULT_DAYS days before `until`. ValueError (one line, naming the option or input, `names`) for a bad
    date or an empty window."""
    now = now or datetime.now(timezone.utc)
    try:
        end = parse_not_before(until) if until else now.strftime(STAMP)
        if until and len(until.strip()) == 10:  # a date: the whole day is in the window
            end = (_parse(end) + timedelta(days=1, seconds=-1)).strftime(STAMP)
    except ValueError as exc:
        raise ValueError(f"{names[1]} {exc}") from None
    try:
        start = parse_not_before(since) if since else (_parse(end) - timedelta(days=DEFAULT_DAYS)).strftime(STAMP)
    except ValueError as exc:
        raise ValueError(f"{names[0]} {exc}") from None
    if start > end:
        raise ValueError(f"{names[0]} ({start}) is after {names[1]} ({end}): the window is empty")
    return start, end


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, STAMP).replace(tzinfo=timezone.utc)


@dataclass
class ShadowRun:
    """What one run read and rebuilt: the rows of the issues that entered the queue in the window (each with
    whether people have triaged it yet) and the counts behind them."""

    window: Window
    query: str = ""
    found: int = 0  # GitHub's count for the search
    examined: int = 0  # issues read (or taken from the cache)
    outside: int = 0  # read, but their queue label was added before or after the window (or never)
    rows: list[DatasetRow] = field(default_factory=list)
    triaged: dict[str, bool] = field(default_factory=dict)  # row id -> triaged by people by the end of the window
    reproduction: dict[str, bool] = field(default_factory=dict)  # row id -> people asked for a reproduction
    urls: dict[str, str] = field(default_factory=dict)
    cached: int = 0
    stopped: str | None = None
    left: int = 0
    edited_comments: int = 0  # kept comments edited after they were written (planned as edited)
    timeline_requests: int = 0
    opted_out: list[str] = field(default_factory=list)  # ids of issues a person opted out: in no figure
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"id", "why"}: issues that could not be read
    notes: list[str] = field(default_factory=list)  # one line per malformed search result or cache file
    failed: str | None = None  # GitHub failed and the run stopped early (exit status 1): why

    @property
    def not_yet_triaged(self) -> int:
        return sum(not value for value in self.triaged.values())

    def skip(self, item: dict, why: str) -> None:
        self.skipped.append({"id": f"{self.window.repo}#{item['number']}", "why": why})

    def stop(self, why: str, *, failed: bool = False) -> None:
        self.left = max(self.found - self.examined - len(self.skipped), 0)
        self.stopped = why
        self.failed = why if failed else self.failed


def read_window(client, window: Window, bundle, *, cache: IssueCache, own_logins=(),
                progress: Callable[[int, int], None] | None = None) -> ShadowRun:
    """Search the window and rebuild every issue that entered the queue in it (see the module doc)."""
    run = ShadowRun(window, query=window_query(window.repo, bundle.labels.queue_label, window.since, window.until))
    search = Search(client, run.query)
    try:
        with client.reserve(SWEEP_API_RESERVE):
            _read(client, run, search, bundle, cache, own_logins, progress)
    except BudgetExhausted as exc:
        run.stop(f"the API budget ran out after {run.examined} issues ({exc})")
    except SearchEnded as exc:
        run.stop(f"the search cannot be paged further: {exc}")
    except GitHubError as exc:
        if search.total is None:
            raise  # nothing was read: one line, as any command that cannot reach GitHub
        run.stop(f"GitHub failed after {run.examined} issues: {exc}", failed=True)
    except (ValueError, RecursionError) as exc:  # a search page that is not JSON at all
        run.stop(f"the search answered with something that is not JSON ({type(exc).__name__})", failed=True)
    run.notes = search.malformed + cache.unreadable
    return run


def _read(client, run: ShadowRun, search: Search, bundle, cache: IssueCache, own_logins, progress) -> None:
    window, failures = run.window, 0
    for item in search:
        run.found = search.total or 0
        if window.limit is not None and run.examined >= window.limit:
            run.stop(f"--limit ({window.limit}) reached")
            return
        before = client.request_count
        try:
            fetched = fetch_issue(client, window.repo, item, cache)
        except Unreadable as exc:
            run.skip(item, str(exc))
            continue
        except GitHubError as exc:
            if is_fatal_for_run(exc):
                raise
            run.skip(item, f"its timeline could not be read: {exc}")
            # GitHub's refusal of one issue (404, 410, 422) is that issue's; failures after retries are GitHub's
            failures = failures + 1 if isinstance(exc, Transient) else 0
            if failures >= FAILURES_IN_A_ROW:
                run.stop(f"GitHub failed on {failures} timelines in a row (the last: {exc})", failed=True)
                return
            continue
        finally:
            run.timeline_requests += client.request_count - before
        failures = 0
        run.examined += 1
        run.cached += fetched.cached
        try:
            _take(run, fetched.issue, fetched.timeline, bundle, own_logins)
        except ValueError as exc:  # an issue the planner cannot read (InputError): it costs this issue only
            run.skip(item, f"cannot be rebuilt: {exc}")
        if progress is not None:
            progress(run.examined, min(run.found, window.limit or run.found))


def _take(run: ShadowRun, issue: dict, timeline: list[dict], bundle, own_logins) -> None:
    window, labels = run.window, bundle.labels
    history = History(timeline, labels, until=window.until, own_logins=own_logins)
    if history.index is None or not window.since <= history.queued_at <= window.until:
        run.outside += 1
        return
    comments = [item for item in timeline if item.get("event") == "commented"]
    triaged = history.skip_reason() != NOT_TRIAGED
    cutoff = history.first_triage_at() if triaged else _after(window.until)
    row = rebuild_row(window.repo, issue, timeline, comments, bundle, until=window.until, own_logins=own_logins,
                      comments_until=cutoff)
    opted = labels.opted_out([item["name"] for item in row["issue"]["labels"]]) or any(
        event["event"] == "labeled" and labels.opted_out([event["label"]["name"]]) for event in history.in_window)
    if opted:  # people asked the bot to stay away: neither its plan nor people's labels say how it would do
        run.opted_out.append(row["id"])
        return
    parsed = parse_row(row, len(run.rows) + 1)
    run.edited_comments += sum(c.get("updated_at") not in (None, c.get("created_at")) for c in row["comments"])
    run.rows.append(parsed)
    run.triaged[parsed.id] = triaged
    run.reproduction[parsed.id] = bool(row["gold"].get("needs_reproduction"))
    run.urls[parsed.id] = str(issue.get("html_url") or "")


def _after(stamp: str) -> str:
    """A string just after `stamp` in ISO order (a comment written at the window's last second is kept)."""
    return stamp + "~"


def shadow(client, bundle, window: Window, *, cache: IssueCache, planner=None, own_logins=(),
           progress: Callable[[int, int], None] | None = None) -> tuple[dict[str, Any], ShadowRun]:
    """Read the window, plan every issue that entered the queue in it, and compare: (the report document, the
    run). Nothing is written to GitHub."""
    run = read_window(client, window, bundle, cache=cache, own_logins=own_logins, progress=progress)
    words: dict[str, dict] = {}
    cases: list[Case] = plan_rows(run.rows, bundle, planner=planner,
                                  on_plan=lambda row, plan: words.__setitem__(row.id, evidence_words(plan)))
    kinds = getattr(client, "requests_by_kind", {})
    requests = {"requests": client.request_count, "search": kinds.get("search", 0),
                "timeline": run.timeline_requests, "write": kinds.get("write", 0)}
    name = getattr(planner, "name", None) or "rubric"
    return shadow_document(run, cases, bundle, requests=requests, planner=name, words=words), run


def saved_rows(run: ShadowRun) -> list[dict[str, Any]]:
    """The rows people have triaged, in the eval dataset format (`--save`): eval and replay can re-run them."""
    return [row.raw for row in run.rows if run.triaged[row.id]]
