"""The shared reading, and names written as lists: what a queue's rubric is prepared with before anything reads it.

A queue names its domain (its routes, components, criteria, labels, templates). How English says that something
did not happen, might happen, is the reporter's own fault, is asked for, or worked in the last version is not any
queue's: it is written once, in the package, as a versioned *shared reading* (`triage/reading/shared/v1.yaml`),
and a queue says which one it reads:

    reading: v1                    # parts, modifiers and every group of shared signals

    reading:                       # or, in full
      shared: v1
      groups: [request, feature, enhancement, counter]    # the groups of shared signals this queue takes
      criteria: {crash: crash, hang: outage}              # shared criterion group -> this queue's criterion
      without: [ask-wish]                                 # shared signals this queue does not take

What the shared reading gives (`prepare` merges it under the queue's own document, so the queue always wins):
- `parts:` and `modifiers:`: a part or modifier the queue defines itself replaces the shared one of that name
  (that is how a queue extends the reading: the shared `project` part names "this project" generically, a queue
  names its own); a shared part written as `{match:, examples:}` is read as its pattern (its examples are run by
  tests/test_shared_reading.py);
- `slots.types`: step 4's slot vocabulary, under the queue's own `types.slots` (for the frames a queue writes);
- `text.environment_heading` when the queue gives none;
- signal groups: each group's signals are appended to one section's list (`GROUPS`), a criterion group's to the
  criterion the queue maps it to; a queue signal with the same id as a shared one replaces it, in the queue's
  place.

Names as lists. Any signal may say `names: [...]` instead of (or beside) `match:`: API names, import paths, error
strings, phrases. Each name is matched literally (`regex_of_names`): whitespace between words is any whitespace,
a trailing `*` is "and any word characters after it" (`resiz*`), and a name that starts or ends with a letter,
digit or `_` is bounded there by `\\b` (so `UI` is not inside `GUI`). With `match:` too, either one matches.
`all_names: [[...], [...]]` is `all:` in lists: one name of each list somewhere in the same place; a part written
as a list (`project: [the storage system, the gateway]`) is its names' pattern.

Without `reading:` a rubric is read as written (the layout before issue 39). The result depends on the document
and the shared file alone; `triage.config.compiled` counts the shared files in the code's version.

May import: the standard library, `triage.config` (source, compiled, parts).
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from triage.config.parts import signal_lists

SHARED_DIR = Path(__file__).resolve().parent.parent / "reading" / "shared"
SHARED_NAME = re.compile(r"v[0-9]{1,3}")
# A group of shared signals -> the section path whose `signals` list it joins.
GROUPS: dict[str, tuple[str, ...]] = {
    "request": ("types", "request"),
    "feature": ("types", "feature"),
    "enhancement": ("types", "enhancement"),
    "performance": ("types", "performance"),
    "counter": ("high_priority", "counter_evidence"),
    "reproduction": ("reproduction",),
}
_WORDISH = re.compile(r"[A-Za-z0-9_]")
_SPECIAL = set("\\.^$|?*+()[]{}")

Path_ = tuple


class ReadingError(ValueError):
    """A `reading:` that names no shared reading, or a group it does not have: (key path, one-line message)."""

    def __init__(self, at: Path_, message: str):
        super().__init__(message)
        self.at = at


def regex_of_names(names: list[str]) -> str:
    """One RE2 alternation matching each name literally, bounded as a word where it starts or ends like one."""
    out = []
    for name in names:
        name = name.strip()
        tail = ""
        if name.endswith("*") and len(name) > 1:
            name, tail = name[:-1], r"\w*"
        body = "".join("\\" + c if c in _SPECIAL else c for c in name)
        body = re.sub(r"\s+", r"\\s+", body)
        start = r"\b" if _WORDISH.match(name[0]) else ""
        end = r"\b" if not tail and _WORDISH.match(name[-1]) else ""
        out.append(f"{start}{body}{tail}{end}")
    return "|".join(out)


def _names_list(names: Any) -> bool:
    return isinstance(names, list) and bool(names) and all(isinstance(n, str) and n.strip() for n in names)


def shared_file(name: str) -> Path:
    return SHARED_DIR / f"{name}.yaml"


def shared_names() -> list[str]:
    return sorted(p.stem for p in SHARED_DIR.glob("v*.yaml"))


@lru_cache(maxsize=4)
def shared_reading(name: str):
    """The shared reading `name` as a Located document (its parse kept as a queue's is: triage.config.compiled)."""
    from triage.config.compiled import load_document

    return load_document(shared_file(name))


def settings(data: dict) -> dict | None:
    """The rubric's `reading:` as a mapping (`reading: v1` is `{shared: v1}`); None without one."""
    raw = data.get("reading") if isinstance(data, dict) else None
    if raw is None:
        return None
    return {"shared": raw} if isinstance(raw, str) else raw if isinstance(raw, dict) else {"shared": raw}


def prepare(data: Any, marks: dict | None = None) -> Any:
    """`data` with its shared reading merged under it and every `names:` list made a pattern; `marks` (a Located's
    line map) gains the shared entries' lines, in place. Raises ReadingError. The input is not changed."""
    if not isinstance(data, dict):
        return data
    wanted = settings(data)
    if isinstance(data.get("parts"), dict) and any(_names_list(v) for v in data["parts"].values()):
        data = {**data, "parts": {k: regex_of_names(v) if _names_list(v) else v for k, v in data["parts"].items()}}
    if wanted is not None:
        data = _merge(data, wanted, marks)
    return _names_to_patterns(data)


def _merge(data: dict, wanted: dict, marks: dict | None) -> dict:
    name = wanted.get("shared")
    if not isinstance(name, str) or not SHARED_NAME.fullmatch(name) or not shared_file(name).is_file():
        raise ReadingError(("reading",), f"reading names shared reading {name!r}, which the package does not have "
                                         f"(it has: {', '.join(shared_names()) or 'none'})")
    shared = shared_reading(name)
    source = shared.data
    data = copy.copy(data)
    index = _marks_index(name) if marks is not None else {}

    def mark(dst: Path_, src: Path_) -> None:
        """The shared file's lines of `src` and everything under it, at `dst` in the queue's line map."""
        if marks is None:
            return
        for key, where in index.get(src[:2], ()):
            if key[: len(src)] == src:
                marks.setdefault(dst + key[len(src):], where)

    for section in ("parts", "modifiers"):
        given = data.get(section)
        own: dict = given if isinstance(given, dict) else {}
        merged: dict = {}
        for key, value in (source.get(section) or {}).items():
            if key not in own:
                merged[key] = value["match"] if section == "parts" and isinstance(value, dict) else value
                mark((section, key), (section, key))
        merged.update(own)
        if merged:
            data[section] = merged
    for section, slots in (source.get("slots") or {}).items():  # `types.slots`: under the queue's own
        node = data.get(section)
        if not isinstance(node, dict):
            continue
        given_slots = node.get("slots")
        own_slots: dict = given_slots if isinstance(given_slots, dict) else {}
        merged_slots = {k: v for k, v in slots.items() if k not in own_slots}
        for key in merged_slots:
            mark((section, "slots", key), ("slots", section, key))
        data[section] = {**node, "slots": {**merged_slots, **own_slots}}
    text = data.get("text", {})
    if isinstance(text, dict) and "environment_heading" not in text:  # a queue may leave `text:` out
        data["text"] = {**text, "environment_heading": source["text"]["environment_heading"]}
        mark(("text", "environment_heading"), ("text", "environment_heading"))
    groups = source.get("signals") or {}
    taken = wanted.get("groups", [g for g in GROUPS if g in groups])
    if not isinstance(taken, list):
        raise ReadingError(("reading", "groups"), "reading.groups must be a list of group names")
    without = set(wanted.get("without") or ())
    for i, group in enumerate(taken):
        if group not in GROUPS or group not in groups:
            raise ReadingError(("reading", "groups", i), f"reading.groups names group {group!r}, which shared "
                                                          f"reading {name} does not have ({', '.join(groups)})")
        _append(data, GROUPS[group], groups[group], ("signals", group), without, mark)
    criteria = wanted.get("criteria") or {}
    shared_criteria = source.get("criteria") or {}
    for group, criterion in criteria.items() if isinstance(criteria, dict) else ():
        if group not in shared_criteria:
            raise ReadingError(("reading", "criteria", group),
                               f"reading.criteria names group {group!r}, which shared reading {name} does not "
                               f"have ({', '.join(shared_criteria)})")
        defined = (data.get("high_priority") or {}).get("criteria") or {}
        if criterion not in defined:
            raise ReadingError(("reading", "criteria", group),
                               f"reading.criteria maps {group!r} to criterion {criterion!r}, which "
                               "high_priority.criteria does not define")
        _append(data, ("high_priority", "criteria", criterion), shared_criteria[group], ("criteria", group),
                without, mark)
    return data


@lru_cache(maxsize=4)
def _marks_index(name: str) -> dict[Path_, list]:
    """The shared file's line map by the first two keys of each path (a validate marks hundreds of entries)."""
    out: dict[Path_, list] = {}
    for key, where in shared_reading(name).marks.items():
        out.setdefault(key[:2], []).append((key, where))
    return out


def _append(data: dict, path: Path_, signals: list, src: Path_, without: set, mark) -> None:
    """Append the shared `signals` to the list at `path` + ("signals",), copying the containers on the way."""
    node = data
    for key in path:
        child = node.get(key)
        if not isinstance(child, dict):
            return  # the queue has no such section: the schema says what is missing
        child = copy.copy(child)
        node[key] = child
        node = child
    own = list(node.get("signals") or [])
    ids = {s.get("id") for s in own if isinstance(s, dict)}
    for j, signal in enumerate(signals):
        if signal.get("id") in ids or signal.get("id") in without:
            continue
        mark(path + ("signals", len(own)), src + (j,))
        own.append(signal)
    node["signals"] = own


def _names_to_patterns(data: dict) -> dict:
    """Every signal's `names:` list as (part of) its `match:`."""
    lists = [(path, signals) for path, signals in signal_lists(data)
             if any(isinstance(s, dict) and ("names" in s or "all_names" in s) for s in signals)]
    if not lists:
        return data
    data = copy.deepcopy(data)
    for path, _ in lists:
        node: Any = data
        for key in path:
            node = node[key]
        for i, raw in enumerate(node):
            if not isinstance(raw, dict):
                continue
            raw = dict(raw)
            names = raw.get("names")
            if isinstance(names, list) and _names_list(names):
                pattern = regex_of_names(names)
                del raw["names"]
                raw["match"] = f"{raw['match']}|{pattern}" if isinstance(raw.get("match"), str) else pattern
            groups = raw.get("all_names")
            if isinstance(groups, list) and groups and all(_names_list(g) for g in groups):
                del raw["all_names"]
                raw["all"] = [*(raw.get("all") or []), *(regex_of_names(g) for g in groups)]
            node[i] = raw  # a malformed list is left as written: the schema says what is wrong with it
    return data
