"""Pieces every subcommand shares: the config options, the GitHub options, and the one error handler.

Commands raise `CliError` (or the library's own one-line errors: configuration, input, GitHub) and
`run_command` turns each into one line on stderr and an exit status, in the spirit of pre-commit's typed
commands behind one handler. Nothing here imports requests: commands that talk to GitHub build the client
through `github_client`, which imports it when called.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from triage.github.names import resolve_api_url, resolve_max_backoff, resolve_token, validate_repo


def fail(message: str, status: int = 2) -> int:
    """One line on stderr (and an `::error::` annotation when running in GitHub Actions)."""
    message = " ".join(str(message).encode("utf-8", "replace").decode("utf-8").split())
    if os.environ.get("GITHUB_ACTIONS") == "true":
        print(f"::error::{message}", file=sys.stderr)
    print(f"ptd-triage: error: {message}", file=sys.stderr)
    return status


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the flag (and the command's --help), exit 2, instead of the
    whole usage block: the line is what a person, or a CI log, needs to see. Subcommand parsers inherit it."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(fail(f"{(self.prog.removeprefix('ptd-triage').strip() + ': ').lstrip(': ')}{message} "
                       f"(see `{self.prog} --help`)"))

    def exit(self, status: int = 0, message: str | None = None):  # type: ignore[override]
        if message:
            sys.stderr.write(message)
        sys.exit(status)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


class _ConfigAction(argparse.Action):
    """--config DIR: a queue folder (rubric.yaml, labels.json, templates/) sets the defaults of --rubric/--labels/
    --templates (an explicit one still wins); a repository config file (`ptd-triage.yml`, layered over the bundled
    queue it names) is read by `load_config`."""

    def __call__(self, parser, namespace, value, option_string=None):
        setattr(namespace, self.dest, value)
        if os.path.isdir(value):
            for name, part in (("rubric", "rubric.yaml"), ("labels", "labels.json"), ("templates", "templates")):
                if getattr(namespace, name, None) is None:
                    setattr(namespace, name, os.path.join(value, part))
                    namespace._from_config = getattr(namespace, "_from_config", set()) | {name}


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """--config, and --rubric/--labels/--templates, shared by every command that plans."""
    parser.add_argument("--config", metavar="DIR", action=_ConfigAction,
                        help="a queue folder (rubric.yaml, labels.json, templates/), e.g. queues/pt2, or a repository "
                             "config file (.github/ptd-triage.yml); default: the bundled distributed queue")
    parser.add_argument("--rubric", metavar="YAML", help="rubric file (default: the bundled queues/distributed/rubric.yaml)")
    parser.add_argument("--labels", metavar="JSON", help="label allowlist (default: the bundled queues/distributed/labels.json)")
    parser.add_argument("--templates", metavar="DIR", help="comment templates directory (default: the bundled queues/distributed/templates/)")


def add_github_options(parser: argparse.ArgumentParser, *, what: str, max_issues: int, max_help: str) -> None:
    """--repo, --api-url and --max-issues, for the commands that read a repository's queue."""
    parser.add_argument("--repo", required=True, metavar="OWNER/REPO", help=f"repository to {what}")
    parser.add_argument("--api-url", help="GitHub API URL (default: $GITHUB_API_URL or api.github.com)")
    parser.add_argument("--max-issues", type=positive_int, default=max_issues, metavar="N", help=max_help)


def api_url(args: argparse.Namespace) -> str:
    try:
        return resolve_api_url(args.api_url, os.environ)
    except ValueError as exc:
        raise CliError(f"--api-url: {exc}") from None


class CliError(Exception):
    """Bad input on the command line: one line, exit status 2 (or `status`), nothing written."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def _finite(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if not math.isfinite(value):  # float() reads "inf" and "nan": neither is a time or a price
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def positive_seconds(text: str) -> float:
    value = _finite(text, "a number of seconds")
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def seconds(text: str) -> float:
    """0 or more seconds."""
    value = _finite(text, "a number of seconds")
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 seconds or more")
    return value


def dollars(text: str) -> float:
    """A price: US dollars per million tokens, 0 or more."""
    value = _finite(text, "a price in US dollars")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a price cannot be negative")
    return value


def load_config(args: argparse.Namespace):
    """The bundle the options name: --config (a queue folder or a repository config file), then any of
    --rubric/--labels/--templates on top."""
    from triage.config.bundle import compile_sources

    return compile_sources(config_sources(args))


def config_sources(args: argparse.Namespace):
    """The options' configuration before compiling (what `validate` checks)."""
    from triage.config.bundle import queue_folder, read_sources
    from triage.config.repo import load_repo_config_file, sources_for

    config = getattr(args, "config", None)
    explicit = {name: getattr(args, name, None) for name in ("rubric", "labels", "templates")}
    if config and not os.path.isdir(config):
        return sources_for(load_repo_config_file(config), **explicit)
    if config:
        queue_folder(config)
    from triage.config.bundle import default_paths

    paths = default_paths()
    return read_sources(*(Path(explicit[name] or paths[name]).resolve() for name in ("rubric", "labels", "templates")))


def github_client(args: argparse.Namespace, *, write: bool, what: str = "issues"):
    """A client for --repo/--api-url with the token from GITHUB_TOKEN; errors name the flag or variable at fault
    (`what`: what the token must reach, said when it is missing). Without `write` (a dry run, shadow, replay) the
    client is read-only: it refuses every write, with nothing sent."""
    try:
        validate_repo(args.repo)
    except ValueError:
        raise CliError(f"--repo must be \"owner/name\", got {args.repo!r}") from None
    token = resolve_token(None, os.environ)
    if not token:
        need = "read (and write)" if write else "read"
        raise CliError(f"GITHUB_TOKEN is not set: this command needs a token that can {need} the repository's {what}")
    from triage.github.client import GitHubClient

    return GitHubClient(token, api_url(args), sleep=capped_sleep(os.environ), read_only=not write)


def check_after_nothing_found(client, repo: str, queue_label: str, *, given: bool) -> None:
    """A sweep or shadow run whose search found nothing: is the queue label one of the repository's (one request)?
    A misspelt label is a CliError naming the repository's labels (exit 2: nothing was found, nothing written); a
    label that differs only in case, a warning on stderr. `given`: --queue-label named it."""
    import sys

    from triage.service.queue_check import CONFIGURED, check_queue_label

    problem = check_queue_label(client, repo, queue_label, named_by="--queue-label" if given else CONFIGURED)
    if problem is not None and problem.missing:
        raise CliError(problem.message)
    if problem is not None:
        print(f"warning: {problem.message}", file=sys.stderr)


def capped_sleep(environ):
    """time.sleep, capped at PTD_TRIAGE_MAX_BACKOFF seconds per wait when that is set (tests; impatient runs)."""
    import time

    try:
        cap = resolve_max_backoff(environ)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    return time.sleep if cap is None else (lambda seconds: time.sleep(min(seconds, cap)))


def run_command(func, args: argparse.Namespace) -> int:
    """The one error handler: every expected failure is one line on stderr and an exit status."""
    from triage.config.bundle import ConfigError
    from triage.core.snapshot import InputError

    try:
        return int(func(args) or 0)
    except CliError as exc:
        return fail(str(exc), exc.status)
    except (ConfigError, InputError) as exc:
        return fail(str(exc))
    except Exception as exc:  # GitHub and budget errors: typed in triage.http.errors
        from triage.http.errors import HTTPError

        if isinstance(exc, HTTPError):
            return fail(str(exc), 1)
        raise




class _Listed:
    """argparse `choices` read from where they are declared, when first asked (a value given, or --help): a run
    that names no provider imports no provider module."""

    def __init__(self, load):
        self._load = load

    def __contains__(self, value) -> bool:
        return value in self._load()

    def __iter__(self):
        return iter(self._load())


def _provider_names() -> tuple[str, ...]:
    from triage.llm.providers import names

    return names()


def _output_modes() -> tuple[str, ...]:
    from triage.llm.common import OUTPUT_MODES

    return OUTPUT_MODES


def _planner_names() -> list[str]:
    from triage.planners import names

    return names()


PROVIDER_CHOICES = _Listed(_provider_names)
OUTPUT_MODE_CHOICES = _Listed(_output_modes)
PLANNER_CHOICES = _Listed(_planner_names)  # the registry's (triage.planners.register): a fork's planner too


def add_planner_options(parser: argparse.ArgumentParser) -> None:
    """--planner and the --llm-* options (plan, eval, sweep). The key comes from the provider's own variable
    (OPENAI_API_KEY, ANTHROPIC_API_KEY; AWS's own variables for Bedrock), never from the command line, where `ps`
    would show it."""
    group = parser.add_argument_group("planner")
    group.add_argument("--planner", choices=PLANNER_CHOICES, default="rubric",
                       help="rubric (default, free, offline), llm (a model proposes every judgement) or hybrid "
                            "(the rubric routes and classifies; the model is asked on flags, requests, failure cues "
                            "and where the rubric is unsure, and decides the type and possible high priority)")
    group.add_argument("--llm-provider", choices=PROVIDER_CHOICES, default=None,
                       help="the model's API, one of: %(choices)s (default: the first); the first is any "
                            "OpenAI-compatible endpoint (see --llm-base-url)")
    group.add_argument("--llm-model", metavar="NAME", help="the model name (or Bedrock model id)")
    group.add_argument("--llm-base-url", metavar="URL", help="e.g. http://localhost:11434/v1 for Ollama")
    group.add_argument("--llm-max-calls", type=positive_int, default=50, metavar="N",
                       help="most model calls in this run (default 50); the rubric plans the rest")
    group.add_argument("--llm-timeout", type=positive_seconds, default=60.0, metavar="SECONDS",
                       help="total seconds one model call may take, the whole answer read (default 60)")
    group.add_argument("--llm-output-mode", choices=OUTPUT_MODE_CHOICES, default="auto",
                       help="one of: %(choices)s. auto (default): json_schema for every provider; tool: a forced "
                            "tool, only for an older model without structured outputs on a provider that offers it")
    group.add_argument("--llm-price", nargs=2, type=dollars, metavar=("IN", "OUT"),
                       help="US dollars per million input and output tokens, for cost estimates")
    group.add_argument("--llm-price-cached-input", type=dollars, metavar="DOLLARS",
                       help="US dollars per million input tokens read from the provider's prompt cache (default: "
                            "the provider's published share of IN: 0.1 for openai, anthropic and bedrock)")
    group.add_argument("--llm-prompt-cache", choices=("on", "off"), default="on",
                       help="mark the system prompt as the provider's prompt-cache point (default on; off for a "
                            "Bedrock model without prompt caching)")


def check_model_prompt(planner, bundle) -> None:
    """A model planner over a queue without a usable prompt is an error before any issue (CliError, one line)."""
    from triage.planners import check_prompt

    if not planner.needs_prompt:
        return
    from triage.planners.model.prompt import PromptError

    try:
        check_prompt(planner, bundle)
    except PromptError as exc:
        raise CliError(f"--planner {planner.name}: {exc}") from None


def planner_from_args(args: argparse.Namespace, *, record: str | None = None, replay: str | None = None):
    """The planner the options name; CliError (one line) when a model planner cannot be configured. A model
    planner's client comes from the options through the one function that makes clients
    (`triage.llm.options.model_client`), as the Action's does."""
    from triage.planners import UnknownPlanner, get_planner, needs_model

    name = getattr(args, "planner", "rubric") or "rubric"
    if not needs_model(name):
        if record or replay:
            raise CliError("--record and --replay need --planner llm or hybrid")
        return get_planner(name)
    from triage.llm.errors import LLMError
    from triage.llm.options import ModelOptions, model_client
    from triage.llm.pricing import Prices

    price, cached = getattr(args, "llm_price", None), getattr(args, "llm_price_cached_input", None)
    if cached is not None and not price:
        raise CliError("--llm-price-cached-input needs --llm-price IN OUT")
    try:
        options = ModelOptions(provider=args.llm_provider or "", model=args.llm_model or "",
                               base_url=args.llm_base_url, max_calls=args.llm_max_calls, timeout=args.llm_timeout,
                               output_mode=getattr(args, "llm_output_mode", None) or "",
                               prompt_cache=getattr(args, "llm_prompt_cache", "on") != "off",
                               prices=Prices(*price, cached_input_per_million=cached) if price else None,
                               record=record, replay=replay)
        return get_planner(name, client=model_client(options, os.environ))
    except (UnknownPlanner, LLMError) as exc:
        raise CliError(f"--planner {name}: {exc}") from None
    except ValueError as exc:
        raise CliError(f"--llm-price: {exc}") from None
    except OSError as exc:  # --record DIR cannot be made (a file of that name, no permission)
        raise CliError(f"--record {record}: cannot make the directory ({exc.strerror or exc})") from None
