"""Configuration documents with their line numbers: YAML (and JSON, which YAML reads) plus where each node was.

`validate` reports every problem on one line with the file and line it comes from, also after a repository's
`.github/ptd-triage.yml` was layered over a bundled queue; so a document is read into `Located`: the plain data
and a map from each key path to (file, line). `merge` layers one document over another and keeps both maps.

May import: the standard library, yaml, `triage.config.safe_yaml`.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from triage.config.safe_yaml import DocumentError, compose_yaml, load_json, read_bounded

Path_ = tuple  # a key path into a document: ("routing", "routes", "infra", "label")


class SourceError(ValueError):
    """A document that cannot be read at all; one line naming the file (and line)."""


@dataclass
class Located:
    data: Any
    file: str
    marks: dict[Path_, tuple[str, int]] = field(default_factory=dict)  # key path -> (file, 1-based line)
    # Keys a later layer deleted (`_remove`) -> where it did: a problem that names one can say who removed it.
    removed: dict[Path_, tuple[str, int]] = field(default_factory=dict)

    def where(self, path: Path_) -> tuple[str, int | None]:
        """The file and line of the deepest node on `path` that has a mark (a missing key: its parent)."""
        path = tuple(path)
        while True:
            if path in self.marks:
                return self.marks[path]
            if not path:
                return self.file, None
            path = path[:-1]


def _marks(root: yaml.Node, file: str, out: dict) -> None:
    """Each key path's line, walked with an explicit stack (no recursion, whatever the depth). A key's path maps
    to the key's line, not the value's. Aliased nodes are walked at each place they appear (bounded by safe_yaml)."""
    out[()] = (file, root.start_mark.line + 1)
    stack: list[tuple[yaml.Node, Path_]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                here = path + (key.value,)
                out[here] = (file, key.start_mark.line + 1)
                stack.append((value, here))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                out[path + (i,)] = (file, item.start_mark.line + 1)
                stack.append((item, path + (i,)))


def parse_document(text: str, file: str) -> Located:
    """The document with its line map, read within `safe_yaml`'s bounds (size, depth, aliases). A `.json` file is
    parsed as JSON (so `"\\ud83d\\udc1b"`, an emoji as Python's json.dump escapes it, is one character, as JSON
    says), and its lines are read from the same text as YAML, a superset of JSON."""
    if file.endswith(".json"):
        return _parse_json(text, file)
    try:
        data, node = compose_yaml(text, file)
    except DocumentError as exc:
        raise SourceError(str(exc)) from None
    marks: dict = {}
    if node is not None:
        _marks(node, file, marks)
    return Located(data, file, marks)


# A JSON escaped surrogate pair (`\ud83d\udc1b`), not itself escaped: YAML refuses surrogates, so the line map is
# read from the text with each pair written as YAML's one-character escape (`\U0001f41b`) instead.
_PAIR = re.compile(r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})")


def _parse_json(text: str, file: str) -> Located:
    try:
        data = load_json(text, file)
    except DocumentError as exc:
        raise SourceError(str(exc)) from None

    def one(match: re.Match) -> str:
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        return f"{match.group(1)}\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08x}"

    marks: dict = {}
    try:  # the lines only; the data is JSON's
        _, node = compose_yaml(_PAIR.sub(one, text), file)
    except DocumentError:  # valid JSON that YAML cannot read (a lone surrogate): lines for the top level only
        node = None
    if node is not None:
        _marks(node, file, marks)
    else:
        marks[()] = (file, 1)
    return Located(data, file, marks)


def read_text(path: Path) -> str:
    """A configuration file's text, or a SourceError of one line (a file over safe_yaml's size bound is refused by
    its size, unread)."""
    try:
        return read_bounded(path)
    except DocumentError as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not UTF-8 text") from None


def load_document(path: str | Path) -> Located:
    path = Path(path)
    return parse_document(read_text(path), str(path))


def merge(base: Located, override: Any, marks: dict[Path_, tuple[str, int]], at: Path_ = ()) -> Located:
    """`override` (found at `at` in a document whose marks are `marks`) layered over `base`: mappings merge key
    by key, anything else replaces, `add_signals: [...]` beside (or instead of) `signals` appends to them (a fork
    adds words to a topic without copying its list), and `_remove: [key, ...]` deletes keys (a route, a topic)."""
    data = copy.deepcopy(base.data)
    out_marks = dict(base.marks)
    removed = dict(base.removed)

    def walk(target: dict, value: dict, path: Path_, src: Path_) -> None:
        for key, item in value.items():
            here, there = path + (key,), src + (key,)
            if key == "_remove" and isinstance(item, list):  # `_remove: [name, ...]` deletes keys (a route, a topic)
                for i, name in enumerate(item):
                    if isinstance(name, str) and name in target:
                        del target[name]
                        _drop_marks(out_marks, path + (name,))
                        if there + (i,) in marks:
                            removed[path + (name,)] = marks[there + (i,)]
                continue
            if key == "add_signals" and isinstance(item, list):
                old = target.setdefault("signals", [])
                if isinstance(old, list):
                    for i, sig in enumerate(item):
                        _copy_marks(marks, there + (i,), out_marks, path + ("signals", len(old)))
                        old.append(copy.deepcopy(sig))
                    continue
            if isinstance(item, dict) and isinstance(target.get(key), dict):
                out_marks[here] = marks.get(there, out_marks.get(here))
                walk(target[key], item, here, there)
            else:
                _drop_marks(out_marks, here)
                target[key] = copy.deepcopy(item)
                _copy_marks(marks, there, out_marks, here)

    if isinstance(override, dict) and isinstance(data, dict):
        walk(data, override, (), at)
    elif override is not None:
        data = copy.deepcopy(override)
        out_marks = {}
        _copy_marks(marks, at, out_marks, ())
    return Located(data, base.file, out_marks, removed)


def _drop_marks(marks: dict, prefix: Path_) -> None:
    for key in [k for k in marks if k[: len(prefix)] == prefix]:
        del marks[key]


def _copy_marks(src: dict, src_prefix: Path_, dst: dict, dst_prefix: Path_) -> None:
    n = len(src_prefix)
    for key, mark in src.items():
        if key[:n] == src_prefix:
            dst[dst_prefix + key[n:]] = mark
