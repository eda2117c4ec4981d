"""Reading issue files for the CLI: one JSON object per file, or one per line for `.jsonl`; `-` is standard input
(one object, or one per line).

Errors name the file (and line) in one line; the caller prints them and exits 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from triage.core.snapshot import IssueSnapshot, InputError, snapshot_from_json


def read_records(path: str) -> Iterator[tuple[str, dict]]:
    """Yield (where, object) for each record in the file; `where` is 'file' or 'file:line'."""
    p = Path(path)
    if path == "-":
        yield from _stdin()
        return
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    if p.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            yield f"{path}:{number}", _parse(line, f"{path}:{number}")
    else:
        yield path, _parse(text, path)


def _stdin() -> Iterator[tuple[str, dict]]:
    """Standard input: one JSON object (an issue, a snapshot, an event payload), or JSON lines (`gh api` with
    `--jq '.[]' -c` writes one issue per line)."""
    import sys

    try:
        text = sys.stdin.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"-: cannot read standard input ({getattr(exc, 'strerror', None) or exc})") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise InputError("-: standard input is empty (expected an issue as JSON, or one per line)")
    try:
        yield "-", _parse(text, "-")
    except InputError:
        if len(lines) == 1:
            raise
        for number, line in lines:  # not one object: JSON lines
            yield f"-:{number}", _parse(line, f"-:{number}")


MAX_INPUT_DEPTH = 64  # an issue as the REST API returns it nests 4 deep


def _parse(text: str, where: str) -> dict:
    from triage.config.safe_yaml import json_depth

    deepest, _ = json_depth(text)  # json.loads recurses: a deep file would end in a bare RecursionError
    if deepest > MAX_INPUT_DEPTH:
        raise InputError(f"{where}: JSON nests {deepest} levels deep (at most {MAX_INPUT_DEPTH})")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    return obj


def read_snapshots(paths: list[str]) -> list[tuple[str, dict, IssueSnapshot]]:
    """All records of all files, parsed up front so that bad input fails before any output."""
    out = []
    for path in paths:
        for where, obj in read_records(path):
            try:
                out.append((where, obj, snapshot_from_json(obj)))
            except InputError as exc:
                raise InputError(f"{where}: {exc}") from None
    return out
