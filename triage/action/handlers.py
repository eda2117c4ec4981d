"""The Action's router and its handlers, one per event it acts on (shaped like a Probot app).

Handlers register for "event.action" keys on a `Router` and receive a `Run`: the settings, the payload, and
lazily built pieces (GitHub client, configuration bundle, the triage service). Cold start matters: most events
a workflow receives are not for us, so nothing heavy (requests, the planner, jinja2, yaml) is imported until a
handler needs it.

May import: the standard library, `triage.action.*`, `triage.core.snapshot`, and lazily `triage.config`,
`triage.github.client`, `triage.planners`, `triage.service`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from triage.action.command import has_command, is_bot, role_allows_retriage
from triage.action.report import Reporter
from triage.action.settings import ActionError, Settings
from triage.core.snapshot import InputError, IssueSnapshot, snapshot_from_json

OWN_COMMENT_MARK = "<!-- ptd-triage:"  # every comment we post carries it (triage.config.templates.comment_marker)


@dataclass
class Result:
    kind: str  # "ignored" | "issue" | "sweep"
    issue: Any = None  # triage.service.triager.IssueResult
    sweep: Any = None  # triage.service.triager.SweepResult
    why: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def results(self) -> list:
        if self.kind == "issue":
            return [self.issue]
        return list(self.sweep.results) if self.sweep is not None else []

    @property
    def failed(self) -> list:
        return [r for r in self.results if r.error]


def ignored(why: str) -> Result:
    return Result("ignored", why=why)


class Run:
    """One run of the Action: what the handlers share."""

    def __init__(self, settings: Settings, reporter: Reporter, *, payload: Mapping[str, Any] | None = None,
                 client: Any = None, planner: Any = None, environ: Mapping[str, str] | None = None,
                 precheck: Callable[[int, Mapping[str, Any]], str | None] | None = None):
        self.settings = settings
        self.precheck = precheck  # the apply mode's own condition on each issue (triage.action.planmode)
        self.reporter = reporter
        self.payload: Mapping[str, Any] = payload or {}
        self.environ: Mapping[str, str] = environ or {}
        self._client = client
        self._planner = planner
        self._bundle = None
        self._triager = None
        self.queue_source = ""  # which queue this run uses, once the configuration is loaded (said loudly)

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
            from triage.config.bundle import ConfigError, compile_sources
            from triage.config.remote import read_queue
            from triage.config.repo import describe_source, load_repo_bundle, precheck_inputs, sources_for

            s = self.settings
            explicit = dict(rubric=s.rubric or None, labels=s.labels or None, templates=s.templates or None)
            try:
                precheck_inputs(**explicit)
                # Opt-in (the `config` input names a file, e.g. .github/ptd-triage.yml, or a queue folder ending
                # in "/"): a repository that does not use one pays no API call for it on every event. Read from
                # the default branch, layered and validated as a whole: the base <- the repository's
                # configuration <- the Action's rubric/labels/templates inputs.
                path = "" if s.config in ("", "none") else s.config
                if path:
                    sources, self.queue_source = read_queue(self, s.repo, path)
                    if any(explicit.values()):
                        sources = sources_for(None, base=sources, **explicit)
                        self.queue_source += " (with the rubric/labels/templates inputs over it)"
                    self._bundle = compile_sources(sources)
                else:
                    self._bundle = load_repo_bundle(None, **explicit)
                    self.queue_source = describe_source(None, **explicit)
            except (ConfigError, ValueError) as exc:
                raise ActionError(str(exc)) from None
        return self._bundle

    # The configuration `Reader` (triage.config.remote): the contents API, default branch only.
    def file(self, repo: str, path: str) -> str | None:
        return self._read_file(repo, path)

    def listing(self, repo: str, path: str) -> list[tuple[str, str]] | None:
        from triage.config.bundle import ConfigError
        from triage.http.errors import HTTPError

        try:
            return self.client.list_directory(repo, path)
        except (HTTPError, ValueError) as exc:
            raise ConfigError(f"{repo}:{path}/: cannot be read: {exc}") from None

    def _read_file(self, repo: str, path: str) -> str | None:
        """A configuration file's text from `repo`'s default branch (None: it does not exist). A file that cannot
        be read (no permission, a damaged answer, not text) is a ConfigError naming it."""
        from triage.config.bundle import ConfigError
        from triage.http.errors import HTTPError

        try:
            return self.client.get_contents(repo, path)
        except (HTTPError, ValueError) as exc:
            hint = "; end the `config` path with \"/\" to read a queue folder" if "is a directory" in str(exc) else ""
            raise ConfigError(f"{repo}:{path}: cannot be read: {exc}{hint}") from None

    @property
    def queue_label(self) -> str:
        return self.settings.queue_label or self.bundle.labels.queue_label

    @property
    def command(self) -> str:
        return self.bundle.command  # issue 9: the command word is configuration (rubric `command:`)

    @property
    def planner(self):
        """The planner the inputs name (the rubric by default; a model planner with the llm-* inputs)."""
        if self._planner is None:
            from triage.action.planmode import planner_for_settings

            self._planner = planner_for_settings(self.settings, self.environ)
        return self._planner

    @property
    def built_planner(self):
        """The planner if this run built one (None when no issue needed planning)."""
        return self._planner

    @property
    def triager(self):
        if self._triager is None:
            from triage.service.triager import Triager

            s = self.settings
            self._triager = Triager(self.client, self.bundle, repo=s.repo, queue_label=self.queue_label,
                                    planner=self.planner, dry_run=s.dry_run, own_logins=(s.bot_login,),
                                    issue_seconds=s.issue_seconds, not_before=s.not_before,
                                    not_before_mode=s.not_before_mode, precheck=self.precheck)
        return self._triager


Handler = Callable[[Run], Result]


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

    def dispatch(self, event: str, action: str | None, run: Run) -> Result:
        if event not in self.events:
            raise ActionError(
                f"event '{event}' is not handled by ptd-triage; trigger it on: {', '.join(self.events)}")
        key = f"{event}.{action}" if action else event
        handler = self._handlers.get(key) or self._handlers.get(event)
        if handler is None:
            return ignored(f"'{key}' is not an event ptd-triage acts on")
        return handler(run)


router = Router()


def _issue_from_payload(payload: Mapping[str, Any]) -> IssueSnapshot:
    try:
        return snapshot_from_json(dict(payload))
    except InputError as exc:
        raise ActionError(f"malformed event payload: {exc}") from None


def _triage_issue(run: Run, number: int, **options) -> Result:
    # The service re-reads the issue from GitHub: the payload can predate our own earlier writes.
    return Result("issue", issue=run.triager.triage(number, **options))


@router.on("issues.labeled")
def on_issue_labeled(run: Run) -> Result:
    snapshot = _issue_from_payload(run.payload)
    label = run.payload.get("label")
    if not isinstance(label, dict) or not isinstance(label.get("name"), str):
        raise ActionError("malformed event payload: issues.labeled without label.name")
    if label["name"] != run.queue_label:
        return ignored(f"label {label['name']!r} is not the queue label {run.queue_label!r}")
    return _triage_issue(run, snapshot.number)


@router.on("issues.opened", "issues.reopened")
def on_issue_opened(run: Run) -> Result:
    snapshot = _issue_from_payload(run.payload)
    if not snapshot.has_label(run.queue_label):
        return ignored(f"issue #{snapshot.number} does not have the queue label {run.queue_label!r}")
    return _triage_issue(run, snapshot.number)


@router.on("issue_comment.created")
def on_comment_created(run: Run) -> Result:
    comment = run.payload.get("comment")
    if not isinstance(comment, dict) or not isinstance(comment.get("user"), dict) \
            or not isinstance(comment.get("id"), int):
        raise ActionError("malformed event payload: issue_comment without comment.id and comment.user")
    body = comment.get("body") if isinstance(comment.get("body"), str) else ""
    snapshot = _issue_from_payload(run.payload)
    login = str(comment["user"].get("login") or "")
    number = snapshot.number
    # Checks that need nothing from GitHub first: the command word can come from the repository's config file,
    # and reading it is a request; a pull request or a bot's comment is never for us whatever the word is.
    if snapshot.is_pull_request:
        return ignored(f"comment on pull request #{number}: ptd-triage only triages issues")
    if is_bot(comment["user"]) or OWN_COMMENT_MARK in body:
        return ignored(f"comment by bot {login!r} (bots, including ptd-triage, cannot run commands)")
    if not _may_hold_a_command(body):  # most comments: no line starts with "/", so no config read, no scan
        return ignored("comment has no command line (no line starts with '/')")
    if run.command not in body:
        return ignored(f"comment has no line '{run.command}'")
    if not snapshot.has_label(run.queue_label):
        return ignored(f"{run.command} on #{number}, which does not have the queue label {run.queue_label!r}")
    if not has_command(body, run.command):
        return ignored(f"comment on #{number} has no line '{run.command}'")
    allowed, role = role_allows_retriage(permission_of(run, login))
    if not allowed:
        return ignored(f"{run.command} by {login!r}, whose role is {role!r}; "
                       f"it needs triage, write, maintain or admin. Nothing written.")
    if not run.settings.dry_run:
        run.client.add_reaction(run.settings.repo, comment["id"], "eyes")  # acknowledge before working
    result = _triage_issue(run, number, force=True)
    result.notes.append(f"{run.command} by {login} ({role})")
    return result


def _may_hold_a_command(body: str) -> bool:
    """Cheap and linear: a command is a line of its own that starts with "/" (the configuration's command word
    always does), so a comment with no such line needs neither the configuration nor the markdown scanner."""
    return any(line.lstrip(" \t").startswith("/") for line in body[:65536].splitlines())


def permission_of(run: Run, login: str) -> Mapping[str, Any]:
    from triage.http.errors import NotFound

    try:
        return run.client.get_permission(run.settings.repo, login)
    except NotFound:  # not a collaborator GitHub knows of: no role at all
        return {"permission": "none", "role_name": "none"}


@router.on("schedule")
def on_schedule(run: Run) -> Result:
    return _sweep(run)


@router.on("workflow_dispatch")
def on_workflow_dispatch(run: Run) -> Result:
    if run.settings.task:  # issue 9: `command: labels-sync` (triage.action.labels_sync)
        from triage.action.labels_sync import TASK, handle_labels_sync

        if run.settings.task != TASK:
            raise ActionError(f"input command must be empty or '{TASK}', got {run.settings.task!r}")
        return handle_labels_sync(run)
    number = run.settings.issue_number
    if number is None:
        return _sweep(run)
    force = run.settings.force
    result = _triage_issue(run, number, force=force, require_queue=not force)
    if result.issue.left:
        return ignored(f"#{number}: {result.issue.left}; set the force input to triage it anyway")
    return result


def _sweep(run: Run) -> Result:
    from triage.service.summary import cutoff_line, line_for

    s = run.settings
    sweep = run.triager.sweep(s.max_issues, seconds=s.sweep_seconds,
                              on_result=lambda r: run.reporter.info(line_for(r)))
    notes = [f"query: {sweep.query}", f"budget: {s.max_issues} issues"]
    if sweep.not_before:
        notes.append(cutoff_line(sweep))
    if sweep.stopped:
        notes.append(f"stopped early: {sweep.stopped}")
    return Result("sweep", sweep=sweep, notes=notes)
