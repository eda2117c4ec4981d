"""`ptd-triage validate [--config DIR]`: check a configuration as a whole, one line per problem, for CI.

Every problem is `FILE:LINE: message` (see `triage.config.validate` for the checks); with `--format github`, a
GitHub Actions annotation (`::error file=FILE,line=LINE::message`, the file relative to the working directory) so
that a pull request shows it on the changed line (examples/workflows/ptd-triage-validate.yml). A warning (a prompt
or template that names another queue: `triage.config.other_queues`) is `FILE:LINE: warning: message`, or
`::warning ...::`. Exit status: 0 when the configuration is valid (warnings or not), 1 when it has problems (a file
that is not valid YAML or JSON is one, printed the same way), 2 when a path given on the command line does not
exist (nothing to check) or leads out of the repository's checkout through a link (`triage.config.checkout`:
refused before anything is read; the line names the link, never what it points at).
"""

from __future__ import annotations

import argparse
import sys

from triage.cli.common import add_config_options, config_sources, run_command


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a configuration: schema, labels, templates, patterns, routes",
        description="Check a queue's configuration (or a repository's .github/ptd-triage.yml layered over the "
        "bundled queue it names): the schema, every label a rule names, every template a step posts, every "
        "pattern under RE2, and that routes and precedence agree. One line per problem, with file and line.",
    )
    add_config_options(parser)
    parser.add_argument("--format", choices=("text", "github"), default="text",
                        help="text: FILE:LINE: message (default); github: an ::error:: annotation per problem, for a "
                             "workflow on pull requests")
    parser.set_defaults(func=lambda args: run_command(run, args))


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from triage.cli.common import CliError
    from triage.config.bundle import ConfigError
    from triage.config.other_queues import other_queue_warnings
    from triage.config.validate import check, prompt_problems

    from triage.config.checkout import outside_problem

    for flag in ("config", "rubric", "labels", "templates"):
        given = getattr(args, flag, None)
        if given and not Path(given).exists() and not Path(given).is_symlink():
            raise CliError(f"--{flag} {given}: no such file or directory")
        problem = outside_problem(given) if given else None
        if problem:
            raise CliError(f"--{flag} {problem}")
    warnings = []
    try:
        sources = config_sources(args)
    except ConfigError as exc:  # unreadable as a whole (malformed YAML, a schema error): a problem, FILE:LINE first
        problems = [_parsed(str(exc))]
    else:
        problems = check(sources) + prompt_problems(sources)
        warnings = other_queue_warnings(sources)  # issue 40: words copied from another queue (exit 0 on these)
    for problem in problems + warnings:
        print(annotation(problem) if args.format == "github" else problem)
    if problems:
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} found", file=sys.stderr)
        return 1
    if warnings:
        print(f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}: the configuration is valid",
              file=sys.stderr)
    files = dict.fromkeys((sources.rubric.file, sources.labels.file, sources.templates_dir))  # one file: once
    print(f"ok: {', '.join(files)}")
    return 0


def _parsed(text: str):
    """A ConfigError's one line ("FILE:LINE: message", "FILE: message") as a Problem."""
    import re

    from triage.config.validate import Problem

    found = re.match(r"^(.+?):(\d+): (.*)$", text, re.S)
    if found:
        return Problem(found.group(1), int(found.group(2)), found.group(3))
    file, sep, message = text.partition(": ")
    return Problem(file, None, message) if sep and " " not in file.strip() else Problem("", None, text)


def annotation(problem) -> str:
    """A GitHub Actions error annotation for one problem: on its line of its file when the file is in the working
    directory (the checkout), else a plain error naming the file."""
    import os

    from triage.config.other_queues import WARNING

    file, line, message = problem.file, problem.line, problem.message
    kind = "warning" if message.startswith(WARNING) else "error"
    message = message.removeprefix(WARNING)
    here = os.path.relpath(os.path.abspath(file)) if file and ":" not in file else ""
    if not here or here.startswith(".."):  # a bundled file, or another repository's: not in this checkout
        return f"::{kind} title=ptd-triage validate::{_data(str(problem))}"
    where = f"file={_property(here)}" + (f",line={line}" if line else "")
    return f"::{kind} {where},title=ptd-triage validate::{_data(message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
