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


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="ptd-triage",
        description="Second-level triage of an `oncall: distributed` issue queue.",
    )
    parser.add_argument("--version", action="version", version=f"ptd-triage {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `ptd-triage plan ... | head` must not print a traceback
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
