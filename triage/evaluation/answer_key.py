"""Procedure answer keys (`examples/answer-keys/`, schema `SCHEMA.json`): reading, validating, joining to a dataset.

A key line says how the written procedure, read literally, types an issue (step 4) and whether it meets a step 5
criterion. A key is read strictly like a dataset (the first bad line stops everything with one message naming the
file and line), and must cover exactly the dataset's ids: a missing or extra id would change every figure silently.

May import: the standard library, `triage.evaluation.dataset`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from triage.evaluation.dataset import DatasetError, read_lines

KEY_TYPES = ("feature", "enhancement", "bug", "question", "other")
REQUEST_TYPES = ("feature", "enhancement")
KEY_SURE = ("high", "medium", "low")


class AnswerKeyError(DatasetError):
    """An answer key that cannot be used with a dataset; the message is one line."""


@dataclass(frozen=True)
class KeyEntry:
    """One line of a procedure answer key."""

    id: str
    type: str
    performance: bool
    high_priority: bool
    criterion: str | None
    sure: str = "medium"
    not_distributed: bool | None = None  # step 1's reading, when the key gives one (dev2's does)

    @property
    def is_request(self) -> bool:
        return self.type in REQUEST_TYPES


def key_entry_from_json(obj: Any, criteria: Iterable[str] | None = None) -> KeyEntry:
    """Validate one parsed key line; ValueError with a short message naming the field. `criteria`: the step 5
    criteria the queue has (its rubric's `high_priority.criteria` names): a key's criterion must be one of them
    (None: any name)."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        raise ValueError("'id' must be a non-empty string")
    if obj.get("type") not in KEY_TYPES:
        raise ValueError(f"'type' must be one of {', '.join(KEY_TYPES)}, not {obj.get('type')!r}")
    for name in ("performance", "high_priority"):
        if not isinstance(obj.get(name), bool):
            raise ValueError(f"'{name}' must be true or false")
    criterion = obj.get("criterion")
    known = tuple(criteria) if criteria is not None else None
    if obj["high_priority"] and (not isinstance(criterion, str) or not criterion
                                 or (known is not None and criterion not in known)):
        named = f"one of {', '.join(known)}" if known is not None else "a criterion's name"
        raise ValueError(f"'criterion' must be {named} (the queue's step 5 criteria) when high_priority is true")
    if not obj["high_priority"] and criterion is not None:
        raise ValueError("'criterion' must be null when high_priority is false")
    if obj["performance"] and obj["type"] != "enhancement":
        raise ValueError("'performance' may be true only for type enhancement")
    sure = obj.get("sure", "medium")
    if sure not in KEY_SURE:
        raise ValueError(f"'sure' must be one of {', '.join(KEY_SURE)}")
    not_distributed = obj.get("not_distributed")
    if not_distributed is not None and not isinstance(not_distributed, bool):
        raise ValueError("'not_distributed' must be true or false when given")
    return KeyEntry(obj["id"], obj["type"], obj["performance"], obj["high_priority"], criterion, sure,
                    not_distributed)


def index_key(entries: Iterable[KeyEntry]) -> dict[str, KeyEntry]:
    """Entries by id; AnswerKeyError on a repeated id."""
    out: dict[str, KeyEntry] = {}
    for entry in entries:
        if entry.id in out:
            raise AnswerKeyError(f"id {entry.id} appears twice")
        out[entry.id] = entry
    return out


def read_key(path: str | Path, criteria: Iterable[str] | None = None) -> dict[str, KeyEntry]:
    """An answer key file, by id; DatasetError (one line naming the file and line) on the first bad line.
    `criteria`: the queue's step 5 criteria (see `key_entry_from_json`)."""
    entries = []
    for number, obj in read_lines(path):
        try:
            entries.append(key_entry_from_json(obj, criteria))
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: {exc}") from None
    if not entries:
        raise DatasetError(f"{path}: no key lines")
    try:
        return index_key(entries)
    except AnswerKeyError as exc:
        raise AnswerKeyError(f"{path}: {exc}") from None


def join_key(items: Sequence[Any], key: Mapping[str, KeyEntry]) -> list[tuple[Any, KeyEntry]]:
    """Each dataset row (or case: anything with an `id`) with its key line. The key must cover exactly the dataset's ids: otherwise one
    AnswerKeyError naming how many differ and the first of each."""
    ids = [item.id for item in items]
    missing = [i for i in ids if i not in key]
    present = set(ids)
    extra = [i for i in key if i not in present]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"{len(missing)} dataset id(s) have no key line (first: {missing[0]})")
        if extra:
            parts.append(f"{len(extra)} key id(s) are not in the dataset (first: {extra[0]})")
        raise AnswerKeyError("answer key and dataset differ: " + "; ".join(parts))
    return [(item, key[item.id]) for item in items]
