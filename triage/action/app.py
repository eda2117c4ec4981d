"""The Action: read the runner's environment, route the event to a handler, triage, report.

Shaped like a Probot app: handlers register for "event.action" keys on a `Router`
(`@router.on("issues.labeled")`) and receive an `App`, which holds the settings, a lazily built GitHub client
and configuration bundle, and the one triage procedure every trigger shares.

Cold start matters: most events the workflow receives are not for us (another label, a comment without the
command), so this module imports only the standard library and light project modules at the top; the HTTP
client (requests), the planner and its configuration (jinja2, yaml, jsonschema) load on first use.

Exit status: 0 when the run did what it should (including "not for us"), 1 on bad input (one `::error::` line,
nothing written), on an event type the Action is not built for, or when any issue failed to triage.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from triage.action.report import (
    IssueReport,
    Reporter,
    error_outputs,
    ignored_outputs,
    issue_outputs,
    summary_markdown,
    sweep_outputs,
)
from triage.github.names import DEFAULT_API_URL, is_bot_account, validate_repo
from triage.core.snapshot import InputError, IssueSnapshot, snapshot_from_json

RETRIAGE_COMMAND = "/ptd-retriage"
# Repository roles allowed to run /ptd-retriage. `role_name` is checked first; the legacy `permission` field
# reports maintain as "write" and triage as "read", so it is only a fallback (e.g. for custom roles).
ALLOWED_ROLES = frozenset({"triage", "write", "maintain", "admin"})
ALLOWED_LEGACY_PERMISSIONS = frozenset({"write", "admin"})
MAX_SWEEP = 1000  # the search API returns at most 1000 results
OWN_COMMENT_MARK = "<!-- ptd-triage:"  # every comment we post carries it (triage.config.templates.comment_marker)

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}>")


class ActionError(Exception):
    """Bad input or configuration: reported as one line, exit status 1, nothing written."""


# ---- inputs and the runner's environment -------------------------------------------------------------------------


def get_input(environ: Mapping[str, str], name: str) -> str:
    """An Action input, trimmed. The runner names it INPUT_<NAME> with spaces as underscores and hyphens kept
    (Docker actions get INPUT_GITHUB-TOKEN); our composite action.yml passes INPUT_GITHUB_TOKEN. Accept both."""
    upper = name.replace(" ", "_").upper()
    for key in (f"INPUT_{upper}", f"INPUT_{upper.replace('-', '_')}"):
        if environ.get(key, "").strip():
            return environ[key].strip()
    return ""


def parse_bool(name: str, value: str, default: bool = False) -> bool:
    """YAML 1.2 core booleans, as actions/toolkit's getBooleanInput accepts them."""
    if value == "":
        return default
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    raise ActionError(f"input {name} must be true or false, got {value!r}")


def parse_count(name: str, value: str, *, default: int | None, maximum: int | None = None) -> int | None:
    if value == "":
        return default
    if not value.isdigit() or int(value) < 1:
        raise ActionError(f"input {name} must be a positive whole number, got {value!r}")
    number = int(value)
    if maximum is not None and number > maximum:
        raise ActionError(f"input {name} must be at most {maximum}, got {number}")
    return number


@dataclass(frozen=True)
class Settings:
    """Everything a run needs besides the event; built from the Action's inputs or the CLI's arguments."""

    repo: str
    token: str
    api_url: str = DEFAULT_API_URL
    queue_label: str = ""  # empty: the labels file's queue_label
    rubric: str = ""
    labels: str = ""
    templates: str = ""
    dry_run: bool = False
    max_issues: int = 50
    issue_number: int | None = None
    run_attempt: int = 1  # >1 on "Re-run jobs": the event payload then predates our own earlier writes
    max_backoff: float | None = None  # cap on each retry sleep (PTD_TRIAGE_MAX_BACKOFF), for tests and impatient runs


def check_repo(repo: str) -> str:
    try:
        validate_repo(repo)
    except ValueError:
        raise ActionError(f"GITHUB_REPOSITORY must be \"owner/name\", got {repo!r}") from None
    return repo


def max_backoff_from(environ: Mapping[str, str]) -> float | None:
    """PTD_TRIAGE_MAX_BACKOFF caps every retry sleep (seconds): tests use it; so can a run that must not wait."""
    value = environ.get("PTD_TRIAGE_MAX_BACKOFF", "").strip()
    if not value:
        return None
    try:
        cap = float(value)
    except ValueError:
        cap = -1.0
    if cap < 0:
        raise ActionError(f"PTD_TRIAGE_MAX_BACKOFF must be a number of seconds, got {value!r}")
    return cap


def settings_from_environ(environ: Mapping[str, str]) -> Settings:
    token = get_input(environ, "github-token") or environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise ActionError("no GitHub token: set the github-token input (default ${{ github.token }}) or GITHUB_TOKEN")
    api_url = (environ.get("GITHUB_API_URL") or DEFAULT_API_URL).strip().rstrip("/")
    if not api_url.startswith(("http://", "https://")):
        raise ActionError(f"GITHUB_API_URL must be an http(s) URL, got {api_url!r}")
    queue = get_input(environ, "queue-label")
    if '"' in queue:
        raise ActionError("input queue-label must not contain a double quote")
    attempt = environ.get("GITHUB_RUN_ATTEMPT", "1").strip()
    return Settings(
        repo=check_repo(environ.get("GITHUB_REPOSITORY", "").strip()),
        token=token,
        api_url=api_url,
        queue_label=queue,
        rubric=get_input(environ, "rubric"),
        labels=get_input(environ, "labels"),
        templates=get_input(environ, "templates"),
        dry_run=parse_bool("dry-run", get_input(environ, "dry-run")),
        max_issues=parse_count("max-issues", get_input(environ, "max-issues"), default=50, maximum=MAX_SWEEP),
        issue_number=parse_count("issue-number", get_input(environ, "issue-number"), default=None),
        run_attempt=int(attempt) if attempt.isdigit() else 1,
        max_backoff=max_backoff_from(environ),
    )


def read_payload(environ: Mapping[str, str]) -> dict:
    path = environ.get("GITHUB_EVENT_PATH", "").strip()
    if not path:
        raise ActionError("GITHUB_EVENT_PATH is not set: run inside GitHub Actions or set it to an event payload file")
    try:
        with open(path, encoding="utf-8") as handle:
            payload = json.load(handle)
    except OSError as exc:
        raise ActionError(f"cannot read event payload {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ActionError(f"event payload {path} is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ActionError(f"event payload {path} must be a JSON object")
    return payload


# ---- the /ptd-retriage command -----------------------------------------------------------------------------------


def has_retriage_command(body: str | None) -> bool:
    """True when a line is exactly the command, outside fenced code, `>` quotes and HTML comments.
    Indented four spaces or more is an indented code block in markdown, so it does not count either."""
    if not body:
        return False
    fence: str | None = None
    for raw in _HTML_COMMENT.sub("", body.replace("\r\n", "\n")).split("\n"):
        opened = _FENCE.match(raw)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if _QUOTE.match(raw):
            continue
        line = raw.rstrip()
        if len(line) - len(line.lstrip(" ")) <= 3 and line.strip() == RETRIAGE_COMMAND:
            return True
    return False


def is_bot(user: Mapping[str, Any]) -> bool:
    return is_bot_account(str(user.get("login") or ""), user.get("type"))


def role_allows_retriage(permission: Mapping[str, Any]) -> tuple[bool, str]:
    role = str(permission.get("role_name") or "")
    legacy = str(permission.get("permission") or "")
    if role in ALLOWED_ROLES:
        return True, role
    if legacy in ALLOWED_LEGACY_PERMISSIONS:  # a custom role built on write/maintain/admin
        return True, f"{role or legacy} (permission {legacy})"
    return False, role or legacy or "none"


# ---- the app -----------------------------------------------------------------------------------------------------


@dataclass
class Result:
    kind: str  # "ignored" | "issue" | "sweep"
    reports: list[IssueReport] = field(default_factory=list)
    why: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[IssueReport]:
        return [r for r in self.reports if r.error]


def ignored(why: str) -> Result:
    return Result("ignored", why=why)


def _error_plan(number: int | None) -> dict:
    return {"issue": number, "outcome": "error", "add_labels": [], "comment": None, "sub_oncall": None,
            "modules": [], "confidence": None, "reasons": [], "elapsed_ms": 0.0}


class App:
    def __init__(self, settings: Settings, reporter: Reporter, *, payload: Mapping[str, Any] | None = None,
                 client: Any = None):
        self.settings = settings
        self.reporter = reporter
        self.payload: Mapping[str, Any] = payload or {}
        self._client = client
        self._bundle = None

    @property
    def client(self):
        if self._client is None:
            from triage.github.client import GitHubClient  # requests: only when we are going to talk to GitHub

            cap = self.settings.max_backoff
            sleep = time.sleep if cap is None else (lambda seconds: time.sleep(min(seconds, cap)))
            self._client = GitHubClient(self.settings.token, self.settings.api_url, sleep=sleep)
        return self._client

    @property
    def bundle(self):
        if self._bundle is None:
            from triage.config.bundle import ConfigError, load_bundle

            s = self.settings
            try:
                self._bundle = load_bundle(s.rubric or None, s.labels or None, s.templates or None)
            except ConfigError as exc:
                raise ActionError(str(exc)) from None
        return self._bundle

    @property
    def queue_label(self) -> str:
        return self.settings.queue_label or self.bundle.labels.queue_label

    # -- the procedure every trigger shares --

    def triage(self, issue: Mapping[str, Any], *, force: bool = False, refetch: bool = False,
               read_comments: bool = False, queue_only: bool = False) -> IssueReport:
        """Plan one issue and apply the plan (unless dry run). GitHub failures end up in `report.error`, with
        whatever was written before them, so a sweep can go on and the summary tells the truth. `queue_only`
        skips an issue that is no longer open with the queue label (the sweep's search can be minutes old)."""
        from triage.core.writes import Applied, UnsafeWrite, apply_writes, planned_writes
        from triage.github.client import GitHubError
        from triage.planners.rubric import plan_issue

        s = self.settings
        number = issue.get("number") if isinstance(issue.get("number"), int) else None
        report = IssueReport(plan=_error_plan(number), dry_run=s.dry_run, forced=force)
        applied = Applied()
        try:
            if refetch:
                issue = self.client.get_issue(s.repo, number)
            bare = snapshot_from_json(dict(issue))  # validate the shape before spending API calls on it
            if queue_only and (bare.state != "open" or not bare.has_label(self.queue_label)):
                report.plan = dict(_error_plan(number), outcome="nothing_to_do",
                                   reasons=["left the queue since the search (closed, or queue label removed)"])
                return report
            count = issue.get("comments")
            # The payload already carries the issue: fetch only the comments, and only when there are any.
            needs_comments = read_comments or (isinstance(count, int) and count > 0)
            comments = self.client.list_comments(s.repo, number) if needs_comments else []
            snapshot = snapshot_from_json(dict(issue), comments)
            if snapshot.is_pull_request:
                raise InputError(f"#{number} is a pull request, not an issue")
            plan = plan_issue(snapshot, self.bundle, force=force)
            report.plan = plan.to_dict()
            writes = planned_writes(plan, self.bundle.labels.names)
            if s.dry_run:
                report.labels_written = list(plan.add_labels)
                report.comment_posted = plan.comment.template if plan.comment else None
            else:
                apply_writes(self.client, s.repo, writes, applied)
        except (GitHubError, InputError, UnsafeWrite) as exc:
            report.error = str(exc)
            # Bad credentials, missing permission or an exhausted rate limit will fail every other issue too.
            report.stop_sweep = isinstance(exc, GitHubError) and exc.status in (401, 403, 429)
        finally:
            if not s.dry_run:
                report.labels_written = list(applied.labels)
                report.comment_posted = applied.comment_template
        return report

    def sweep(self) -> Result:
        """Triage open queue issues without the marker label, up to max-issues; one failure does not stop it."""
        from triage.github.client import GitHubError

        s = self.settings
        marker = self.bundle.labels.marker
        query = f'repo:{s.repo} is:issue is:open label:"{self.queue_label}" -label:"{marker}"'
        result = Result("sweep", notes=[f"query: {query}", f"budget: {s.max_issues} issues"])
        try:
            for item in self.client.search_issues(query, limit=s.max_issues):
                # Search results lag behind writes; re-read the issue so a just-triaged one is not redone.
                report = self.triage(item, refetch=True, queue_only=True)
                self.reporter.info(line_for(report))
                result.reports.append(report)
                if report.stop_sweep:
                    result.notes.append("stopped early: GitHub refused in a way that would fail every issue")
                    break
        except GitHubError as exc:
            failed = IssueReport(plan=_error_plan(None), dry_run=s.dry_run, error=f"search failed: {exc}")
            result.reports.append(failed)
        return result


def line_for(report: IssueReport) -> str:
    plan = report.plan
    head = f"#{plan.get('issue')}: {plan.get('outcome')}"
    if report.error:
        planned = f" (planned {plan['outcome']})" if plan.get("outcome") != "error" else ""
        return f"#{plan.get('issue')}: failed{planned}: {report.error}"
    verb = "would add" if report.dry_run else "added"
    labels = ", ".join(report.labels_written) or "no labels"
    comment = f"; comment {report.comment_posted}" if report.comment_posted else ""
    return f"{head}; {verb} {labels}{comment}"


# ---- the router and the handlers ---------------------------------------------------------------------------------

Handler = Callable[[App], Result]


class Router:
    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def on(self, *keys: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for key in keys:
                self._handlers[key] = handler
            return handler

        return register

    @property
    def events(self) -> list[str]:
        return sorted({key.split(".")[0] for key in self._handlers})

    def dispatch(self, event: str, action: str | None, app: App) -> Result:
        if event not in self.events:
            raise ActionError(
                f"event '{event}' is not handled by ptd-triage; trigger it on: {', '.join(self.events)}")
        key = f"{event}.{action}" if action else event
        handler = self._handlers.get(key) or self._handlers.get(event)
        if handler is None:
            return ignored(f"'{key}' is not an event ptd-triage acts on")
        return handler(app)


router = Router()


def _issue_from_payload(payload: Mapping[str, Any]) -> tuple[dict, IssueSnapshot]:
    try:
        snapshot = snapshot_from_json(dict(payload))
    except InputError as exc:
        raise ActionError(f"malformed event payload: {exc}") from None
    return payload["issue"], snapshot


def _triage_event_issue(app: App, issue: dict, **options) -> Result:
    # "Re-run jobs" replays the original payload, which predates our own earlier writes: re-read the issue then.
    return Result("issue", reports=[app.triage(issue, refetch=app.settings.run_attempt > 1, **options)])


@router.on("issues.labeled")
def on_issue_labeled(app: App) -> Result:
    issue, _ = _issue_from_payload(app.payload)
    label = app.payload.get("label")
    if not isinstance(label, dict) or not isinstance(label.get("name"), str):
        raise ActionError("malformed event payload: issues.labeled without label.name")
    if label["name"] != app.queue_label:
        return ignored(f"label {label['name']!r} is not the queue label {app.queue_label!r}")
    return _triage_event_issue(app, issue)


@router.on("issues.opened", "issues.reopened")
def on_issue_opened(app: App) -> Result:
    issue, snapshot = _issue_from_payload(app.payload)
    if not snapshot.has_label(app.queue_label):
        return ignored(f"issue #{snapshot.number} does not have the queue label {app.queue_label!r}")
    return _triage_event_issue(app, issue)


@router.on("issue_comment.created")
def on_comment_created(app: App) -> Result:
    issue, snapshot = _issue_from_payload(app.payload)
    comment = app.payload.get("comment")
    if not isinstance(comment, dict) or not isinstance(comment.get("user"), dict) \
            or not isinstance(comment.get("id"), int):
        raise ActionError("malformed event payload: issue_comment without comment.id and comment.user")
    body = comment.get("body") if isinstance(comment.get("body"), str) else ""
    login = str(comment["user"].get("login") or "")
    number = snapshot.number
    if snapshot.is_pull_request:
        return ignored(f"comment on pull request #{number}: ptd-triage only triages issues")
    if is_bot(comment["user"]) or OWN_COMMENT_MARK in body:
        return ignored(f"comment by bot {login!r} (bots, including ptd-triage, cannot run commands)")
    if not has_retriage_command(body):
        return ignored(f"comment on #{number} has no line '{RETRIAGE_COMMAND}'")
    if not snapshot.has_label(app.queue_label):
        return ignored(f"{RETRIAGE_COMMAND} on #{number}, which does not have the queue label {app.queue_label!r}")
    allowed, role = role_allows_retriage(permission_of(app, login))
    if not allowed:
        return ignored(f"{RETRIAGE_COMMAND} by {login!r}, whose role is {role!r}; "
                       f"it needs triage, write, maintain or admin. Nothing written.")
    if not app.settings.dry_run:
        app.client.add_reaction(app.settings.repo, comment["id"], "eyes")  # acknowledge before working
    result = _triage_event_issue(app, issue, force=True, read_comments=True)
    result.notes.append(f"{RETRIAGE_COMMAND} by {login} ({role})")
    return result


def permission_of(app: App, login: str) -> Mapping[str, Any]:
    from triage.github.client import GitHubError

    try:
        return app.client.get_permission(app.settings.repo, login)
    except GitHubError as exc:
        if exc.status == 404:  # not a collaborator GitHub knows of: no role at all
            return {"permission": "none", "role_name": "none"}
        raise


@router.on("schedule")
def on_schedule(app: App) -> Result:
    return app.sweep()


@router.on("workflow_dispatch")
def on_workflow_dispatch(app: App) -> Result:
    number = app.settings.issue_number
    if number is None:
        return app.sweep()
    return Result("issue", reports=[app.triage({"number": number}, refetch=True)])


# ---- the entrypoint ----------------------------------------------------------------------------------------------


def report_result(result: Result, reporter: Reporter, title: str) -> int:
    if result.kind == "ignored":
        reporter.info(f"ptd-triage: nothing to do: {result.why}")
        reporter.set_outputs(ignored_outputs())
        reporter.write_summary(summary_markdown(title, [], [f"Ignored: {result.why}"]))
        return 0
    for note in result.notes:
        reporter.info(f"ptd-triage: {note}")
    if result.kind == "issue":
        reporter.info(line_for(result.reports[0]))
        reporter.set_outputs(issue_outputs(result.reports[0]))
    else:
        reporter.set_outputs(sweep_outputs(result.reports))
    reporter.write_summary(summary_markdown(title, result.reports, result.notes))
    failed = result.failed
    for report in failed:
        reporter.error(f"#{report.plan.get('issue')}: {report.error}" if report.plan.get("issue") else report.error)
    if result.kind == "sweep":
        reporter.info(f"ptd-triage: swept {len(result.reports)} issue(s), {len(failed)} failed")
        if failed:
            reporter.error(f"sweep: {len(failed)} of {len(result.reports)} issue(s) failed; re-run to complete them")
    return 1 if failed else 0


def main(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    reporter = Reporter(env)
    try:
        event = env.get("GITHUB_EVENT_NAME", "").strip()
        if not event:
            raise ActionError("GITHUB_EVENT_NAME is not set: run inside GitHub Actions")
        settings = settings_from_environ(env)
        payload = read_payload(env)
        action = payload.get("action")
        if action is not None and not isinstance(action, str):
            raise ActionError("malformed event payload: 'action' must be a string")
        app = App(settings, reporter, payload=payload)
        result = router.dispatch(event, action, app)
        title = f"{event}.{action}" if action else event
        return report_result(result, reporter, title)
    except ActionError as exc:
        return fail(reporter, str(exc))
    except Exception as exc:  # noqa: BLE001 - the last line of defence still says one clear thing
        from triage.github.client import GitHubError

        if isinstance(exc, GitHubError):
            return fail(reporter, str(exc))
        if env.get("RUNNER_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        return fail(reporter, f"internal error: {type(exc).__name__}: {exc}")


def fail(reporter: Reporter, message: str) -> int:
    reporter.error(message)
    try:
        reporter.set_outputs(error_outputs())
    except OSError:
        pass  # the error line above is what matters
    return 1
