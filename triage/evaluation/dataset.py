"""The eval dataset: one JSON object a line, an issue as it entered the queue plus its `gold` answer.

Format (see README "Measuring accuracy"): `{"id", "chunk", "issue", "comments", "gold"}` where `issue` is a
GitHub REST issue object with the labels it had when the queue label was added, `comments` REST comment objects,
and `gold` = {route, modules, high_priority, type, not_distributed, ..., labels}. `gold` is derived from the labels
people gave the issue afterwards; `derive_gold` is that derivation, used by `replay` to build rows from a live repo.

Reading is strict: a bad line stops everything with one message naming file and line, because a silently skipped
line would change every figure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from triage.config.labels import LabelSet
from triage.core.snapshot import IssueSnapshot, InputError, snapshot_from_json

# The distributed queue's routes, for callers that have no configuration at hand; everything that has one uses
# `routes_of(bundle)` (the rubric's precedence), so a queue with any number of routes reads and scores the same.
ROUTES = ("parallelisms", "infra", "checkpointing")
EITHER = "either"  # gold for an issue whose module labels point at two routes: either is right
GOLD_ROUTES = (*ROUTES, EITHER)
GOLD_TYPES = ("feature", "enhancement")

# The seed's routing names one module that is not in the allowlist (the bot never applies it, but people do):
# an issue labelled with it belongs to checkpointing.
EXTRA_MODULE_ROUTES = {"module: distributed_checkpoint": "checkpointing"}

HIGH_PRIORITY_LABEL = "high priority"


class DatasetError(ValueError):
    """A dataset file that cannot be used; the message is one line naming the file (and line)."""


@dataclass(frozen=True)
class Gold:
    route: str | None
    modules: tuple[str, ...]
    high_priority: bool
    type: str | None
    not_distributed: bool
    labels: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "modules": list(self.modules),
            "high_priority": self.high_priority,
            "type": self.type,
            "not_distributed": self.not_distributed,
            "labels": list(self.labels),
        }


@dataclass(frozen=True)
class DatasetRow:
    id: str
    line: int
    snapshot: IssueSnapshot
    gold: Gold
    raw: dict[str, Any]


def _one_of(obj: dict, key: str, allowed: tuple[str, ...]) -> str | None:
    value = obj.get(key)
    if value is not None and value not in allowed:
        raise ValueError(f"gold.{key} must be one of {', '.join(allowed)} or null, not {value!r}")
    return value


def _names(obj: dict, key: str) -> tuple[str, ...]:
    value = obj.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"gold.{key} must be a list of label names")
    return tuple(value)


def gold_from_json(obj: Any) -> Gold:
    """Validate and parse a `gold` object; raises ValueError with a short message."""
    if not isinstance(obj, dict):
        raise ValueError("'gold' must be a JSON object")
    for key in ("high_priority", "not_distributed"):
        if not isinstance(obj.get(key, False), bool):
            raise ValueError(f"gold.{key} must be true or false")
    route = obj.get("route")
    if route is not None and (not isinstance(route, str) or not route):
        raise ValueError(f"gold.route must be a route name or null, not {route!r}")
    return Gold(
        route=route,  # checked against the configuration's routes by `check_routes`
        modules=_names(obj, "modules"),
        high_priority=obj.get("high_priority", False),
        type=_one_of(obj, "type", GOLD_TYPES),
        not_distributed=obj.get("not_distributed", False),
        labels=_names(obj, "labels"),
    )


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


def read_dataset(path: str | Path) -> list[DatasetRow]:
    """Read every row of a dataset file; DatasetError on the first bad line. Blank lines are allowed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    rows: list[DatasetRow] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        try:
            rows.append(parse_row(obj, number))
        except (InputError, ValueError) as exc:
            raise DatasetError(f"{path}:{number}: {exc}") from None
    if not rows:
        raise DatasetError(f"{path}: no rows")
    return rows


def check_routes(rows: Iterable[DatasetRow], routes: Iterable[str], path: str | Path = "dataset") -> None:
    """Every gold route must be one of the configuration's routes (or `either`): a dataset for another queue
    would otherwise score silently as all wrong."""
    known = set(routes) | {EITHER}
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


def module_routes(labels: LabelSet) -> dict[str, str]:
    """Module label -> route, from labels.json (`role: module` entries with a `route`), plus the seed's extras."""
    routes = dict(EXTRA_MODULE_ROUTES)
    for spec in labels.specs:
        if spec.role == "module" and spec.route:
            routes[spec.name] = spec.route
    return routes


def sub_oncall_routes(labels: LabelSet) -> dict[str, str]:
    """Sub-oncall label -> route: its `route` in labels.json, else the label's last word (`... infra` -> infra)."""
    return {spec.name: spec.route or spec.name.rsplit(" ", 1)[-1] for spec in labels.specs if spec.role == "sub-oncall"}


def derive_gold(labels_today: Iterable[str], labels: LabelSet) -> Gold:
    """The dataset README's derivation of `gold` from the labels people gave an issue."""
    names = list(dict.fromkeys(labels_today))
    subs = sub_oncall_routes(labels)
    mods = module_routes(labels)
    chosen = [subs[name] for name in names if name in subs]
    if len(chosen) == 1:
        route: str | None = chosen[0]
    else:
        pointed = {mods[name] for name in names if name in mods}
        if len(pointed) == 1:
            route = pointed.pop()
        elif pointed and pointed <= {"parallelisms", "infra"}:
            route = "either"
        else:
            # No module label, or checkpointing plus another team (the seed gives no precedence): not scored.
            route = None
    allowed_modules = set(labels.with_role("module"))
    return Gold(
        route=route,
        modules=tuple(name for name in names if name in allowed_modules),
        high_priority=HIGH_PRIORITY_LABEL in names,
        type=next((t for t in GOLD_TYPES if t in names), None),
        # People mark a mis-queued issue by moving it elsewhere; replay cannot tell that apart, so never claims it.
        not_distributed=False,
        labels=tuple(names),
    )
