"""Bounded reading of hostile documents: every YAML (and JSON) the product loads goes through here.

A repository's `.github/ptd-triage.yml`, a queue's files and the plan job's plans file are written by people who
may be hostile. Plain `yaml.safe_load` expands nothing in memory itself, but everything after it walks the data
(the line map, the schema check, deep copies, json.dumps), and a 1 KB "billion laughs" file of nested aliases
stands for 10^9 nodes there; deep nesting makes the recursive walkers (PyYAML's constructor, jsonschema,
json.loads) die in a bare RecursionError. So before anything is built, the parser's event stream is read once,
iteratively, and the document is refused, with its file and line, when it is larger than MAX_BYTES, nests
deeper than MAX_DEPTH, uses more than MAX_ALIASES aliases, or stands for more than MAX_NODES nodes with every
alias expanded. Only then is the node tree composed (the events again, now known to be small).

May import: the standard library and yaml.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

MAX_BYTES = 1_000_000  # the bundled rubric is 35 KB; a configuration a thousand times larger is not one
MAX_DEPTH = 40  # the rubric nests 6 deep
MAX_ALIASES = 100  # the bundled files use none
MAX_NODES = 200_000  # nodes with aliases expanded: what the walkers after parsing will visit

# libyaml's loader when it is there: the rubric is read on every run, and the pure-Python one is several times slower.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class DocumentError(ValueError):
    """A document that cannot be read safely; one line naming the file (and line)."""


def read_bounded(path, max_bytes: int = MAX_BYTES) -> str:
    """A file's UTF-8 text, refused by its size BEFORE it is read: a file larger than `max_bytes` (by what the
    file system says, and by what reading gives: a pipe or a /proc file has no size) is never read beyond
    `max_bytes + 1` bytes, so refusing a 200 MB file costs what refusing a 2 MB one does. Raises DocumentError
    (one line naming the file), OSError or UnicodeDecodeError."""
    import os

    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(max_bytes + 1) if size <= max_bytes else b""
        if size > max_bytes or len(data) > max_bytes:
            raise DocumentError(f"{path}: larger than {max_bytes:,} bytes; refused unread")
    return data.decode("utf-8")


def _where(file: str, mark) -> str:
    return f"{file}:{mark.line + 1}" if mark is not None else file


def _yaml_problem(exc: yaml.YAMLError, file: str) -> DocumentError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or "malformed YAML"
    if "maximum nesting depth" in str(problem):  # libyaml (PyYAML >= 6.0.4) stops deep nesting itself: same rule
        return DocumentError(f"{_where(file, mark)}: nests deeper than {MAX_DEPTH} levels")
    return DocumentError(f"{_where(file, mark)}: not valid YAML/JSON: {problem}")


def check_yaml_bounds(text: str, file: str) -> None:
    """Raise DocumentError (file:line) if `text` is too large, too deep, or stands for too many nodes."""
    if len(text) > MAX_BYTES:
        raise DocumentError(f"{file}: larger than {MAX_BYTES:,} characters; refused unread")
    loader = _Loader(text)
    sizes: dict[str, int] = {}  # anchor -> nodes it stands for (its aliases expanded)
    stack: list[list] = [[0, None]]  # open collections: [nodes so far, anchor]
    aliases = 0
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                break
            if isinstance(event, _OPEN):
                stack.append([1, event.anchor])
                if len(stack) - 1 > MAX_DEPTH:
                    raise DocumentError(f"{_where(file, event.start_mark)}: nests deeper than {MAX_DEPTH} levels")
                continue
            if isinstance(event, yaml.ScalarEvent):
                count, anchor = 1, event.anchor
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise DocumentError(f"{_where(file, event.start_mark)}: more than {MAX_ALIASES} aliases")
                count, anchor = sizes.get(event.anchor, 1), None
            elif isinstance(event, _CLOSE):
                count, anchor = stack.pop()
            else:  # stream/document start and end
                continue
            if anchor is not None:
                sizes[anchor] = count
            stack[-1][0] += count
            if sum(entry[0] for entry in stack) > MAX_NODES:  # every node read so far, aliases expanded
                raise DocumentError(f"{_where(file, event.start_mark)}: stands for more than {MAX_NODES:,} nodes "
                                    "once its aliases are expanded (an alias bomb?)")
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, file) from None
    finally:
        loader.dispose()


def compose_yaml(text: str, file: str) -> tuple[Any, yaml.Node | None]:
    """(data, root node) of one YAML document, within the bounds; DocumentError names the file and line."""
    check_yaml_bounds(text, file)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _refuse_duplicate_keys(node, file)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise _yaml_problem(exc, file) from None
    except RecursionError:  # not expected within MAX_DEPTH; still one line, never a traceback
        raise DocumentError(f"{file}: nests too deeply to read") from None
    finally:
        loader.dispose()
    return data, node


def _refuse_duplicate_keys(root: yaml.Node, file: str) -> None:
    """A key given twice in one mapping is a mistake YAML forgives silently (the last one wins): in a rubric, a part
    or slot defined twice replaces the first everywhere it is used. DocumentError names the second one's line."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen and key.value != "<<":
                        raise DocumentError(f"{_where(file, key.start_mark)}: '{key.value}' is given twice in one "
                                            "mapping (the second would silently replace the first)")
                    seen.add(key.value)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def json_depth(text: str) -> tuple[int, int]:
    """(deepest nesting, character offset where it is deepest) of JSON text, counted iteratively over the
    brackets outside strings, without parsing."""
    depth = deepest = at = 0
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest, at = depth, i
        elif ch in "]}":
            depth -= 1
    return deepest, at


def load_json(text: str, file: str, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """json.loads within a size and a depth limit checked first; DocumentError (file:line) otherwise."""
    if len(text) > max_bytes:
        raise DocumentError(f"{file}: larger than {max_bytes:,} characters; refused unread")
    deepest, at = json_depth(text)
    if deepest > max_depth:
        line = text.count("\n", 0, at) + 1
        raise DocumentError(f"{file}:{line}: nests deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", None) or str(exc)
        raise DocumentError(f"{file}{f':{line}' if line else ''}: not valid JSON: {msg}") from None
    except RecursionError:
        raise DocumentError(f"{file}: nests too deeply to read") from None
