"""The `ptd-triage` command line: a thin dispatcher over one module per subcommand.

Each module in `COMMAND_MODULES` exposes `register(subparsers)`, which adds its parser and sets
`func(args) -> int` as the parser default. Imports are lazy-free but cheap: the heavy work lives in
the functions, so `ptd-triage --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from triage import __version__
from triage.cli.common import OneLineParser

# One line per subcommand; a fork adds its own here.
COMMAND_MODULES = [
    "triage.cli.commands.plan",
    "triage.cli.commands.eval",
    "triage.cli.commands.replay",
    "triage.cli.commands.shadow",
    "triage.cli.commands.sweep",
    "triage.cli.commands.validate",
    "triage.cli.commands.labels",
]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `command` only (its module alone is imported: `ptd-triage plan`
    need not import what `eval` and `replay` measure with)."""
    parser = OneLineParser(
        prog="ptd-triage",
        description="Second-level triage of an `oncall: distributed` issue queue.",
    )
    parser.add_argument("--version", action="version", version=f"ptd-triage {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        if command is None or name.rsplit(".", 1)[1] == command:
            importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    named = argv[0] if argv and f"triage.cli.commands.{argv[0]}" in COMMAND_MODULES else None
    parser = build_parser(named)  # anything else (--help, a typo) gets every subcommand, to list them
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `ptd-triage plan ... | head` must not print a traceback
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
