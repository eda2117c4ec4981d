"""`ptd-triage validate [--config DIR]`: check a configuration as a whole, one line per problem, for CI.

Every problem is `FILE:LINE: message` (see `triage.config.validate` for the checks). Exit status: 0 when the
configuration is valid, 1 when it has problems (a file that is not valid YAML or JSON is one, printed the same
way), 2 when a path given on the command line does not exist (nothing to check).
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
    parser.set_defaults(func=lambda args: run_command(run, args))


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from triage.cli.common import CliError
    from triage.config.bundle import ConfigError
    from triage.config.validate import check, prompt_problems

    for flag in ("config", "rubric", "labels", "templates"):
        given = getattr(args, flag, None)
        if given and not Path(given).exists():
            raise CliError(f"--{flag} {given}: no such file or directory")
    try:
        sources = config_sources(args)
    except ConfigError as exc:  # unreadable as a whole (malformed YAML, a schema error): a problem, FILE:LINE first
        problems = [str(exc)]
    else:
        problems = check(sources) + prompt_problems(sources)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} found", file=sys.stderr)
        return 1
    print(f"ok: {sources.rubric.file}, {sources.labels.file}, {sources.templates_dir}")
    return 0
