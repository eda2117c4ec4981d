"""What one run of the Action works with, built explicitly before a handler runs: the settings, the event's
payload, the GitHub client (read-only in a dry run: it refuses any write), the configuration bundle (the
repository's config file is read here, once), the run's executor (the one thing that writes, or, in a dry run,
records: triage.service.executor), and, for a route that plans, the planner the inputs name and the triage service
over them (`with_planner`, built only once the event is known to be ours and its sender allowed). Nothing here is a
lazy property: a handler gets a `Context` that is complete, and whatever reaches the network did so in
`build_context`, in plain sight.

Also the handlers' common result (`Result`) and the planner/model pieces the plan/apply split reuses.

May import: the standard library, `triage.action.settings`, `triage.action.report`, `triage.core.snapshot`,
and inside functions (cold start: most events are not for us) `triage.config`, `triage.github.client`,
`triage.http.errors`, `triage.llm`, `triage.planners`, `triage.service`.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from triage.action.report import Reporter
from triage.action.settings import ActionError, Settings
from triage.core.snapshot import InputError, IssueSnapshot, snapshot_from_json

if TYPE_CHECKING:  # types only: the cold path imports none of these
    from triage.config.bundle import Bundle
    from triage.github.client import GitHubClient
    from triage.planners.base import Planner
    from triage.service.executor import Executor
    from triage.service.results import IssueResult, SweepResult
    from triage.service.triager import Triager


class ResultKind(StrEnum):
    IGNORED = "ignored"  # not for us, or answered without triaging (a refused command)
    ISSUE = "issue"  # one issue triaged (or left, or failed)
    SWEEP = "sweep"  # a sweep's issues
    TASK = "task"  # a maintenance run (labels sync)


@dataclass
class Result:
    kind: ResultKind
    issue: IssueResult | None = None
    sweep: SweepResult | None = None
    why: str = ""
    notes: list[str] = field(default_factory=list)
    task: list[str] | None = None  # a maintenance run's report for the step summary (markdown lines)
    dry_run: bool = False  # a maintenance run's: it only reported
    warning: str = ""  # an ignored event's misconfiguration, said as a warning (a queue label that nearly matches)

    @property
    def results(self) -> list[IssueResult]:
        if self.kind == ResultKind.ISSUE:
            return [self.issue] if self.issue is not None else []
        return list(self.sweep.results) if self.sweep is not None else []

    @property
    def failed(self) -> list[IssueResult]:
        return [r for r in self.results if r.error]


def ignored(why: str) -> Result:
    return Result(ResultKind.IGNORED, why=why)


@dataclass(frozen=True)
class Event:
    """What a router's cheap check sees: the settings and the payload, nothing read from GitHub."""

    name: str
    action: str | None
    settings: Settings
    payload: Mapping[str, Any]
    # The payload's issue, parsed once for the whole run: the route's check, its configured check and the handler
    # all ask for it (a one-item list, so the frozen event and the context built from it share it).
    parsed: list = field(default_factory=list, repr=False, compare=False)

    def issue(self) -> IssueSnapshot:
        return parsed_issue(self.payload, self.parsed)


@dataclass
class Context:
    """One run, complete: what the handlers share."""

    settings: Settings
    reporter: Reporter
    payload: Mapping[str, Any]
    client: GitHubClient  # (or a test's stand-in)
    bundle: Bundle
    executor: Executor  # the one thing that writes (triage.service.executor); in a dry run it records only
    planner: Planner | None = None  # None for a route that plans nothing (labels-sync), or not yet built
    triager: Triager | None = None  # the triage service, over the planner
    queue_source: str = ""  # which queue this run uses (said loudly on every run that triaged)
    parsed: list = field(default_factory=list, repr=False)  # the payload's issue once parsed (see Event.parsed)
    notes: list[str] = field(default_factory=list)  # what a route's checks learnt, for the run's summary

    @property
    def service(self) -> Triager:
        """The triage service of a route that plans (`with_planner` built it)."""
        if self.triager is None:
            raise RuntimeError("the route's handler needs the triage service, which was not built")
        return self.triager

    def issue(self) -> IssueSnapshot:
        """The event's issue as the payload has it (parsed once per run)."""
        return parsed_issue(self.payload, self.parsed)

    @property
    def queue_label(self) -> str:
        return queue_label_of(self.settings, self.bundle)

    @property
    def command(self) -> str:
        return self.bundle.command  # issue 9: the command word is configuration (rubric `command:`)


def queue_label_of(settings: Settings, bundle) -> str:
    return settings.queue_label or bundle.labels.queue_label


def issue_from_payload(payload: Mapping[str, Any]) -> IssueSnapshot:
    try:
        return snapshot_from_json(dict(payload))
    except InputError as exc:
        raise ActionError(f"malformed event payload: {exc}") from None


def parsed_issue(payload: Mapping[str, Any], parsed: list) -> IssueSnapshot:
    if not parsed:
        parsed.append(issue_from_payload(payload))
    return parsed[0]


def build_context(settings: Settings, reporter: Reporter, payload: Mapping[str, Any], *,
                  client: Any = None, parsed: list | None = None) -> Context:
    """The client, the bundle (one contents request when the `config` input names a file) and the executor;
    ActionError (one line) when the configuration is bad. No planner yet: see `with_planner`."""
    from triage.service.executor import executor_for

    client = client if client is not None else github_client(settings)
    bundle, source = load_bundle(settings, client)
    executor = executor_for(client, settings.repo, dry_run=settings.dry_run, own_login=settings.bot_login or None)
    return Context(settings, reporter, payload, client, bundle, executor, queue_source=source,
                   parsed=parsed if parsed is not None else [])


def with_planner(context: Context, planner: Planner, *, precheck: Callable | None = None) -> Context:
    """The context of a route that plans: the planner and the triage service over it (with the apply mode's own
    `precheck` on each issue, triage.action.planmode)."""
    check_model_prompt(planner, context.bundle)
    triager = triager_for(context.settings, context.client, context.bundle, planner, context.executor,
                          precheck=precheck)
    return replace(context, planner=planner, triager=triager)


def check_model_prompt(planner: Any, bundle) -> None:
    """A model planner over a queue whose prompt is missing or broken fails the run before any issue, in one line
    (else every issue would fall back to the rubric, or be asked with another queue's prompt)."""
    if not planner.needs_prompt:
        return
    from triage.planners import check_prompt
    from triage.planners.model.prompt import PromptError

    try:
        check_prompt(planner, bundle)
    except PromptError as exc:
        raise ActionError(f"input planner {planner.name}: {exc}") from None


def github_client(settings: Settings) -> GitHubClient:
    """The client for the run: read-only (every write refused, nothing sent) in a dry run and in the plan and
    shadow modes, behind their executors, which write nothing in the first place."""
    from triage.github.client import GitHubClient  # requests: only when we are going to talk to GitHub

    cap = settings.max_backoff
    sleep = time.sleep if cap is None else (lambda seconds: time.sleep(min(seconds, cap)))
    return GitHubClient(settings.token, settings.api_url, sleep=sleep, read_only=read_only(settings))


def read_only(settings: Settings) -> bool:
    """Whether the run may write at all: not in a dry run, nor in plan or shadow mode."""
    return settings.dry_run or settings.mode in ("plan", "shadow")


def load_bundle(settings: Settings, client):
    """(bundle, which queue it is). Opt-in (the `config` input names a file, e.g. .github/ptd-triage.yml, or a
    queue folder ending in "/"): a repository that does not use one pays no API call for it on every event. Read
    from the default branch, layered and validated as a whole: the base <- the repository's configuration <- the
    Action's rubric/labels/templates inputs."""
    from triage.config.bundle import ConfigError, compile_sources
    from triage.config.remote import read_queue
    from triage.config.repo import describe_source, load_repo_bundle, precheck_inputs, sources_for

    s = settings
    explicit = dict(rubric=s.rubric or None, labels=s.labels or None, templates=s.templates or None)
    try:
        precheck_inputs(**explicit)
        path = "" if s.config in ("", "none") else s.config
        if not path:
            return load_repo_bundle(None, **explicit), describe_source(None, **explicit)
        sources, source = read_queue(ContentsReader(client), s.repo, path)
        if any(explicit.values()):
            sources = sources_for(None, base=sources, **explicit)
            source += " (with the rubric/labels/templates inputs over it)"
        return compile_sources(sources), source
    except (ConfigError, ValueError) as exc:
        raise ActionError(str(exc)) from None


class ContentsReader:
    """The configuration `Reader` (triage.config.remote) over the contents API, default branch only; what cannot
    be read (no permission, a damaged answer, not text) is a ConfigError naming it."""

    def __init__(self, client) -> None:
        self.client = client

    def file(self, repo: str, path: str) -> str | None:
        from triage.config.bundle import ConfigError
        from triage.http.errors import HTTPError

        try:
            return self.client.get_contents(repo, path)
        except (HTTPError, ValueError) as exc:
            if "is a directory" in str(exc):  # not a failure of GitHub's (it answered 200): a path to end with "/"
                raise ConfigError(f"{repo}:{path} is a folder, not a file: end the path with \"/\" ({path}/) "
                                  "to read it as a queue folder") from None
            raise ConfigError(f"{repo}:{path}: cannot be read: {exc}") from None

    def listing(self, repo: str, path: str) -> list[tuple[str, str]] | None:
        from triage.config.bundle import ConfigError
        from triage.http.errors import HTTPError

        try:
            return self.client.list_directory(repo, path)
        except (HTTPError, ValueError) as exc:
            raise ConfigError(f"{repo}:{path}/: cannot be read: {exc}") from None


def triager_for(settings: Settings, client: Any, bundle: Bundle, planner: Planner, executor: Executor, *,
                precheck: Callable | None = None) -> Triager:
    from triage.service.triager import Triager

    return Triager(client, bundle, repo=settings.repo, queue_label=queue_label_of(settings, bundle),
                   planner=planner, executor=executor, own_logins=(settings.bot_login,),
                   issue_seconds=settings.issue_seconds, not_before=settings.not_before,
                   not_before_mode=settings.not_before_mode, precheck=precheck)


def planner_for_settings(settings: Settings, environ: Mapping[str, str]):
    """The planner the inputs name; a model planner over the client the llm-* inputs describe, made by the one
    function that makes clients (`triage.llm.options.model_client`), as the CLI's. ActionError (one line) when it
    cannot be built."""
    from triage.planners import UnknownPlanner, get_planner, needs_model

    try:
        if not needs_model(settings.planner):
            return get_planner(settings.planner)  # raises UnknownPlanner, or a fork's own planner
    except UnknownPlanner as exc:
        raise ActionError(f"input planner: {exc}") from None
    from triage.llm.errors import LLMError

    try:
        return get_planner(settings.planner, client=model_client(settings, environ))
    except LLMError as exc:
        raise ActionError(f"input planner {settings.planner}: {exc}") from None


def model_client(settings: Settings, environ: Mapping[str, str]):
    """The model client the llm-* inputs describe (LLMError when they do not make one)."""
    from triage.llm.options import ModelOptions
    from triage.llm.options import model_client as client_for_options
    from triage.llm.pricing import Prices

    options = ModelOptions(
        provider=settings.llm_provider, model=settings.llm_model, base_url=settings.llm_base_url or None,
        api_key=settings.llm_api_key, max_calls=settings.llm_max_calls, timeout=settings.llm_timeout,
        output_mode=settings.llm_output_mode, prompt_cache=settings.llm_prompt_cache,
        prices=Prices(*settings.llm_prices, cached_input_per_million=settings.llm_price_cached_input)
        if settings.llm_prices else None)
    return client_for_options(options, environ)


def model_note(planner) -> str | None:
    """One line for the summary when a model planner ran: calls, tokens, and the estimated cost when both
    llm-price-* inputs are given (else says how to get one)."""
    t = planner.usage_totals() if planner is not None else None
    if t is None or not t["issues_asked"]:
        return None
    from triage.llm.pricing import format_usd

    cost = (f"estimated cost {format_usd(t['cost_usd'])}" if t["cost_usd"] is not None
            else "no cost estimate (set llm-price-input and llm-price-output)")
    return (f"model: asked on {t['issues_asked']} issue(s), {t['calls']} call(s), {t['input_tokens']} input "
            "tokens "
            f"({t.get('cached_input_tokens', 0)} cached, {t.get('cache_write_tokens', 0)} written to the cache) + "
            f"{t['output_tokens']} output tokens, {cost}; fell back to the rubric on {t['fallbacks']}")
