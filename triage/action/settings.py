"""The Action's inputs and the runner's environment, read once into `Settings`.

Inputs arrive as INPUT_<NAME> variables (the composite action.yml passes them explicitly); everything else the
run needs (repository, API URL, event, run attempt) comes from the runner's GITHUB_* variables. Bad values
raise `ActionError`: one line, nothing written.

May import: the standard library, `triage.config.names`, `triage.config.bundled`, `triage.github.names`,
`triage.service.limits`, `triage.service.cutoff`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Mapping

from triage.config.bundled import default_queue_label
from triage.config.names import label_name_problem
from triage.github.names import resolve_api_url, resolve_max_backoff, resolve_token, validate_repo
from triage.service.cutoff import parse_mode, parse_not_before
from triage.service.limits import MAX_SWEEP

DEFAULT_BOT_LOGIN = "github-actions[bot]"  # the account GITHUB_TOKEN writes as


class ActionError(Exception):
    """Bad input or configuration: reported as one line, exit status 1, nothing written."""


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


def parse_seconds(name: str, value: str, *, default: float | None) -> float | None:
    if value == "":
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < math.inf:  # float() reads "inf" and "nan": neither is a time budget (nor are they for the CLI)
        raise ActionError(f"{name} must be a positive number of seconds, got {value!r}")
    return seconds


@dataclass(frozen=True)
class Settings:
    """Everything a run needs besides the event; built from the Action's inputs or the CLI's arguments."""

    repo: str
    token: str
    api_url: str
    queue_label: str = ""  # the queue-label input; empty (its default): the configuration's queue_label
    rubric: str = ""
    labels: str = ""
    templates: str = ""
    # Issue 9: the repository's config file read through the contents API (default .github/ptd-triage.yml;
    # "none": do not read one), and a workflow_dispatch task other than triage (`labels-sync`).
    config: str = ""
    task: str = ""
    dry_run: bool = False
    max_issues: int = 50
    issue_number: int | None = None
    force: bool = False  # workflow_dispatch: triage issue-number even if it is not in the queue / already marked
    bot_login: str = DEFAULT_BOT_LOGIN
    max_backoff: float | None = None  # cap on each retry sleep (PTD_TRIAGE_MAX_BACKOFF), for tests and impatient runs
    issue_seconds: float = 120.0  # wall-time budget per issue, retries included
    sweep_seconds: float | None = None  # wall-time budget for a whole sweep
    not_before: str | None = None  # a sweep's cut-off (issue 21): older queue issues are not triaged ...
    not_before_mode: str = "skip"  # ... or (labels-only) labelled without a comment
    planner: str = "rubric"
    # Issue 8: the model planners and the plan/apply split (triage.action.planmode).
    mode: str = "triage"  # triage (one job), plan (read-only, writes a plans file), apply (writes saved plans)
    plans_file: str = ""
    # The llm-* inputs as given: the provider and the output mode are checked, against the provider registry, by
    # the one function that makes a model client (triage.llm.options), when a model planner is built.
    llm_provider: str = ""  # "" is the registry's default
    llm_model: str = ""
    llm_base_url: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_max_calls: int = 50
    llm_timeout: float = 60.0  # total seconds of one model call
    llm_output_mode: str = ""  # "" is auto (json_schema) | json_schema | tool
    llm_prices: tuple[float, float] | None = None  # US dollars per million input, output tokens
    llm_price_cached_input: float | None = None  # per million cached input tokens (None: the provider's ratio)
    llm_prompt_cache: bool = True  # the system prompt marked as the provider's cache point
    # Issue 32: mode shadow (triage.action.shadowmode): the window, where the JSON report goes, the cache folder.
    shadow_since: str = ""
    shadow_until: str = ""
    shadow_file: str = ""
    shadow_cache: str = ""

    @property
    def known_queue_label(self) -> str:
        """The queue label as far as it is known before any configuration is read: the input's when it names one,
        else, for a run with no `config` or `labels` input, the bundled default queue's; empty when only the
        configuration knows it (then it is read first). The routers' cheap checks answer from it."""
        if self.queue_label:
            return self.queue_label
        return default_queue_label() if self.config in ("", "none") and not self.labels else ""


def check_repo(repo: str, *, source: str = "GITHUB_REPOSITORY") -> str:
    try:
        validate_repo(repo)
    except ValueError:
        raise ActionError(f"{source} must be \"owner/name\", got {repo!r}") from None
    return repo


def max_backoff_from(environ: Mapping[str, str]) -> float | None:
    try:
        return resolve_max_backoff(environ)
    except ValueError as exc:
        raise ActionError(str(exc)) from None


def settings_from_environ(environ: Mapping[str, str]) -> Settings:
    token = resolve_token(get_input(environ, "github-token"), environ)
    if not token:
        raise ActionError("no GitHub token: set the github-token input (default ${{ github.token }}) or GITHUB_TOKEN")
    try:
        api_url = resolve_api_url(None, environ)
    except ValueError as exc:
        raise ActionError(f"GITHUB_API_URL: {exc}") from None
    queue = get_input(environ, "queue-label")
    problem = label_name_problem(queue) if queue else None  # the same rule as a configuration file's
    if problem:
        raise ActionError(f"input queue-label {queue!r} {problem}")
    return Settings(
        repo=check_repo(environ.get("GITHUB_REPOSITORY", "").strip()),
        token=token,
        api_url=api_url,
        queue_label=queue,
        rubric=get_input(environ, "rubric"),
        labels=get_input(environ, "labels"),
        templates=get_input(environ, "templates"),
        config=get_input(environ, "config"),
        task=get_input(environ, "command"),
        dry_run=parse_bool("dry-run", get_input(environ, "dry-run")),
        max_issues=parse_count("max-issues", get_input(environ, "max-issues"), default=50, maximum=MAX_SWEEP),
        issue_number=parse_count("issue-number", get_input(environ, "issue-number"), default=None),
        force=parse_bool("force", get_input(environ, "force")),
        bot_login=get_input(environ, "bot-login") or DEFAULT_BOT_LOGIN,
        max_backoff=max_backoff_from(environ),
        issue_seconds=parse_seconds("input issue-timeout", get_input(environ, "issue-timeout"), default=120.0),
        sweep_seconds=parse_seconds("input sweep-timeout", get_input(environ, "sweep-timeout"), default=None),
        planner=get_input(environ, "planner") or "rubric",
        **cutoff_settings(environ),
        **llm_settings(environ),
        **{f"shadow_{name}": get_input(environ, f"shadow-{name}") for name in ("since", "until", "file", "cache")},
    )


MODES = ("triage", "plan", "apply", "shadow")


def cutoff_settings(environ: Mapping[str, str]) -> dict:
    """not-before and not-before-mode (triage.service.cutoff), each refused in one line naming the input."""
    found = {}
    for name, key, parse in (("not-before", "not_before", parse_not_before),
                             ("not-before-mode", "not_before_mode", parse_mode)):
        text = get_input(environ, name)
        if text or key == "not_before_mode":
            try:
                found[key] = parse(text)
            except ValueError as exc:
                raise ActionError(f"input {name} {exc}") from None
    return found


def llm_settings(environ: Mapping[str, str]) -> dict:
    """The issue-8 inputs: mode, plans-file and the llm-* inputs. The apply mode must run without model
    credentials (it is the job that can write): a key given to it is refused, not ignored."""
    mode = get_input(environ, "mode") or "triage"
    if mode not in MODES:
        raise ActionError(f"input mode must be one of {', '.join(MODES)}, got {mode!r}")
    key = get_input(environ, "llm-api-key")
    if mode == "apply" and key:
        raise ActionError("input llm-api-key must be empty in mode apply: the job that writes gets no model "
                          "credentials (give the key to the plan job only)")
    return dict(mode=mode, plans_file=get_input(environ, "plans-file"), llm_provider=get_input(environ, "llm-provider"),
                llm_model=get_input(environ, "llm-model"), llm_base_url=get_input(environ, "llm-base-url"),
                llm_api_key=key,
                llm_max_calls=parse_count("llm-max-calls", get_input(environ, "llm-max-calls"), default=50) or 50,
                llm_timeout=parse_seconds("input llm-timeout", get_input(environ, "llm-timeout"), default=60.0),
                llm_output_mode=get_input(environ, "llm-output-mode"),
                llm_prices=_prices(get_input(environ, "llm-price-input"), get_input(environ, "llm-price-output")),
                llm_price_cached_input=_cached_price(get_input(environ, "llm-price-cached-input"),
                                                     get_input(environ, "llm-price-input")),
                llm_prompt_cache=parse_bool("llm-prompt-cache", get_input(environ, "llm-prompt-cache"), default=True))


def _cached_price(given: str, given_in: str) -> float | None:
    """The price of a cached input token, with the other prices only (alone it would price nothing)."""
    if not given:
        return None
    if not given_in:
        raise ActionError("input llm-price-cached-input needs llm-price-input and llm-price-output (US dollars per "
                          "million tokens)")
    return _price("llm-price-cached-input", given)


def _price(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 <= value < 1e6):  # also refuses nan and inf
        raise ActionError(f"input {name} must be a non-negative number of US dollars per million tokens, "
                          f"got {text!r}")
    return value


def _prices(given_in: str, given_out: str) -> tuple[float, float] | None:
    """Both prices or neither: a cost estimate from half the prices would be a guess."""
    if not given_in and not given_out:
        return None
    if not given_in or not given_out:
        raise ActionError("inputs llm-price-input and llm-price-output go together (US dollars per million tokens)")
    return _price("llm-price-input", given_in), _price("llm-price-output", given_out)


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
