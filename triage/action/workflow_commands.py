"""GitHub Actions workflow commands, written in the formats GitHub documents, with no dependency.

Two formats (https://docs.github.com/actions/reference/workflow-commands-for-github-actions):

- A command on stdout, one line: `::NAME KEY=VALUE,KEY=VALUE::MESSAGE`. The runner splits on `::`, `,` and the
  first `=`, and reads the line up to its end, so the message escapes `%`, CR and LF (`%25`, `%0D`, `%0A`) and
  property values additionally `:` and `,` (`%3A`, `%2C`). Escaping `%` first is what makes it reversible.
- An entry in an environment file (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_STATE): `NAME<<DELIMITER`, the value's
  lines, then `DELIMITER` alone on a line. The delimiter is random for every entry and must not occur in the value
  (a value that contained it could end the entry early and set other outputs: issue text reaches our outputs).

These replace `actions_toolkit.command.issue_command` and `actions_toolkit.file_command
.prepare_key_value_message` with the same output: actions-toolkit pulls PyGithub, cryptography and PyNaCl into
every install for these two small functions (docs/performance.md).

Imports: the standard library only. The Action's cold path imports this module for every event, ignored ones
included, so it must stay this light.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from typing import Any, Mapping, TextIO

# The runner's own delimiter prefix (actions/toolkit uses `ghadelimiter_<uuid>`); any unguessable token works.
DELIMITER_PREFIX = "ghadelimiter_"
_DELIMITER_TRIES = 3


def to_command_value(value: Any) -> str:
    """What the runner receives for a value: strings as they are, None as "", anything else as JSON
    (as actions/toolkit's toCommandValue does, so `True` becomes `true`, not `True`)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def escape_data(value: Any) -> str:
    """A command's message: `%`, CR and LF escaped, so it cannot end the line or start another command."""
    return to_command_value(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: Any) -> str:
    """A command property's value: as a message, plus `:` and `,`, which delimit properties."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_command(name: str, properties: Mapping[str, Any] | None = None, message: Any = "") -> str:
    """`::name key=value,...::message`, one line. Properties whose value is None are left out (as the toolkit
    does for unset annotation fields)."""
    if not name or any(c in name for c in ": \r\n"):
        raise ValueError(f"workflow command name must be a non-empty word, got {name!r}")
    for key in (properties or {}):
        if not key or any(c in key for c in "=,: \r\n"):
            raise ValueError(f"workflow command property name must be a word, got {key!r}")
    props = [f"{key}={escape_property(value)}" for key, value in (properties or {}).items() if value is not None]
    return f"::{name}{' ' + ','.join(props) if props else ''}::{escape_data(message)}"


def issue_command(name: str, properties: Mapping[str, Any] | None, message: Any, *,
                  stream: TextIO | None = None) -> None:
    """Write one workflow command line to stdout (or `stream`)."""
    (stream or sys.stdout).write(format_command(name, properties, message) + os.linesep)


def prepare_key_value_message(key: str, value: Any, *, delimiter: str | None = None) -> str:
    """One environment-file entry in the heredoc form (without the trailing line break).

    With no `delimiter`, a fresh random one is drawn, and drawn again if it happens to occur in the value; an
    explicit `delimiter` (tests) that occurs in the key or the value is refused, never written."""
    if not key or any(c in key for c in "\r\n") or "<<" in key or "=" in key:
        raise ValueError(f"output name must be one line without '<<' or '=', got {key!r}")
    text = to_command_value(value)
    candidates = [delimiter] if delimiter is not None else [
        DELIMITER_PREFIX + secrets.token_hex(16) for _ in range(_DELIMITER_TRIES)]
    for candidate in candidates:
        if candidate and candidate not in text and candidate not in key and not any(c in candidate for c in "\r\n"):
            return f"{key}<<{candidate}{os.linesep}{text}{os.linesep}{candidate}"
    raise ValueError(f"cannot write output {key!r}: its value contains the heredoc delimiter")
