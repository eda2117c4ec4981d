"""The eval dataset: one JSON object a line, an issue as it entered the queue plus its `gold` answer.

Format (see README "Measuring accuracy"): `{"id", "chunk", "issue", "comments", "gold"}` where `issue` is a
GitHub REST issue object with the labels it had when the queue label was added, `comments` REST comment objects,
and `gold` the answer derived from the labels people gave the issue afterwards (`triage.evaluation.gold`).

Reading is strict: a bad line stops everything with one message naming file and line, because a silently skipped
line would change every figure.

May import: the standard library, `triage.core.snapshot`, `triage.evaluation.gold`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from triage.core.snapshot import IssueSnapshot, InputError, snapshot_from_json
from triage.evaluation.gold import Gold, gold_from_json


class DatasetError(InputError):
    """A dataset (or answer key) file that cannot be used: bad input, one line naming the file (and line)."""


@dataclass(frozen=True)
class DatasetRow:
    id: str
    line: int
    snapshot: IssueSnapshot
    gold: Gold
    raw: dict[str, Any]


def parse_row(obj: Any, line: int = 0) -> DatasetRow:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if "issue" not in obj:
        raise ValueError("missing 'issue'")
    if "gold" not in obj:
        raise ValueError("missing 'gold'")
    snapshot = snapshot_from_json(obj)
    gold = gold_from_json(obj["gold"])
    row_id = obj.get("id")
    if row_id is not None and not isinstance(row_id, str):
        raise ValueError("'id' must be a string")
    return DatasetRow(id=row_id or f"#{snapshot.number}", line=line, snapshot=snapshot, gold=gold, raw=obj)


def read_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) for each non-blank line of a JSONL file, in order, so that the first bad line is
    the one reported; DatasetError naming the file (and line) when it cannot be read or a line is not JSON."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        yield number, obj


def read_dataset(path: str | Path) -> list[DatasetRow]:
    """Read every row of a dataset file; DatasetError on the first bad line. Blank lines are allowed."""
    rows: list[DatasetRow] = []
    for number, obj in read_lines(path):
        try:
            rows.append(parse_row(obj, number))
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: {exc}") from None
    if not rows:
        raise DatasetError(f"{path}: no rows")
    return rows


def check_routes(rows: Iterable[DatasetRow], known: Iterable[str], path: str | Path = "dataset") -> None:
    """Every gold route must be one the configuration knows (`gold.gold_routes`): a dataset for another queue
    would otherwise score silently as all wrong."""
    known = set(known)
    for row in rows:
        if row.gold.route is not None and row.gold.route not in known:
            raise DatasetError(f"{path}:{row.line}: gold.route {row.gold.route!r} is not a route of this configuration "
                               f"({', '.join(sorted(known))}); is it a dataset for another queue? (--config)")


def write_dataset(path: str | Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write rows (already in the eval format) as JSONL; returns how many. Written whole or not at all."""
    path = Path(path)
    lines = [json.dumps(row, ensure_ascii=False, sort_keys=False) for row in rows]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(path)
    return len(lines)
