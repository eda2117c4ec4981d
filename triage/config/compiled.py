"""A queue's compiled form, kept between runs: a queue is checked and compiled once, not on every run (issue 27).

Loading a queue checks it as a whole (`triage.config.validate`: the schemas, every cross-reference, every pattern
under RE2, every template) and compiles it. Most of that time went to reading ~180 patterns with Python's regex
parser for the literals one of which must occur where each matches (`triage.text.patterns`), and to compiling them
with RE2. None of it changes while the queue's sources and the code stay the same, so the first load writes down
what it learned, and a later load of the same sources under the same code reads it back: that the sources passed
every check, and each pattern's required literals (RE2 then compiles a pattern on first use only). The queue is
still built from its own sources on every run; the file holds no rule, label or template, only the answers of the
work it saves. The format knows nothing of a rubric's layout: a list of patterns and a verdict.

A queue's documents (rubric.yaml, labels.json) are kept the same way, parsed (`load_document`): reading a rubric of
a few thousand lines with PyYAML, and checking it within safe_yaml's bounds, took most of a warm load. A parsed
document is keyed by a SHA-256 of its text (and of the code), and holds the data and the line of each key path
exactly as the parser gave them; a document that is not plain JSON data is not kept.

A cache is a speed-up, never an authority (issue 37): the key below is a SHA-256 anyone can compute, so a file
found under it proves nothing. Each file is signed: an HMAC-SHA256 with a secret this installation made (32 random
bytes, `key_file()`: beside the virtual environment's cache folder, never inside any folder a cache is read from,
mode 0600), the last field of the JSON. A file that the secret did not sign (written by hand, by another
installation, restored from another machine's cache, edited in any byte) is ignored like a malformed one, and the
queue is checked and compiled from its sources. Whoever can write a cache folder but cannot read the secret cannot
change a plan through it.

The key is a SHA-256 of everything the answers depend on: the sources' content as the loader read them (every
document's data, every template, the prompt, whatever files they came from and however many), the code that
checks and compiles them (`triage/config/`, `triage/text/`), the Python version (its parser reads the literals)
and the distributions installed beside the dependencies (RE2 decides what compiles; jsonschema and Jinja what is
valid). The file is named by the key and says it again inside. A file that cannot be read, is malformed in any
way, or has another key, format or version is ignored, and the next load writes a good one: it is never trusted.
Sources that are not plain JSON data (a YAML date, a number as a key) are not cached at all.

Where: the directory in `PTD_TRIAGE_CACHE` (`off` for none); else `ptd-triage-cache/` in the virtual environment
(the Action's cached environment carries it: action.yml builds it at install time with `python -m
triage.config.precompile`, so a fresh runner starts warm), then the user's cache directory (`~/.cache/ptd-triage`).
Nothing is written where nothing is writable; a run then compiles the queue as if there were no cache. The secret:
the file in `PTD_TRIAGE_CACHE_KEY`; else `ptd-triage-cache.key` in the virtual environment; else
`~/.config/ptd-triage/cache.key`. Made on the first write; a secret that is not a plain file of this user's, not
private to them, or inside a cache folder is not used (then nothing is cached).

May import: the standard library, `triage.config.source`, `triage.config.signing`, `triage.text.patterns`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from contextlib import contextmanager, suppress
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterator

from triage.config import signing
from triage.config.source import Located
from triage.text import patterns

FORMAT = "ptd-triage compiled queue"
VERSION = 2  # 2: signed (an HMAC with the installation's secret)
ENVIRONMENT = "PTD_TRIAGE_CACHE"
KEY_ENVIRONMENT = signing.KEY_ENVIRONMENT
KEEP = 32  # compiled forms kept in one directory (the newest); a queue edited many times leaves no pile
MAX_BYTES = 4_000_000
_PACKAGE = Path(__file__).resolve().parent.parent  # triage/
_CODE = ("config", "text")  # what checks and compiles a queue
# Fields of the sources that say where a text came from (or, for a queue without a prompt, where it was looked
# for), not what it says.
_WHERE = ("templates_dir", "template_files", "prompt_missing")


@contextmanager
def compiled_form(sources) -> Iterator[bool]:
    """Around compiling `sources` (triage.config.validate.QueueSources): yields True when they are known to pass
    every check (skip the checks), after teaching `triage.text.patterns` what it knew of their patterns. When
    they were not known and the block ends without an exception, what it compiled is written down."""
    key = queue_key(sources)
    known = read(key) if key else None
    if known is not None:
        patterns.learn(known)
    with patterns.recording() as used:
        yield known is not None
    if known is None and key:
        write(key, used)


def queue_key(sources) -> str | None:
    """The SHA-256 of the sources' content and the code's version; None when the sources are not plain JSON
    data (then they are not cached: two different documents must never share a key). Every field of the sources
    counts (a document by its data), whatever fields a loader adds, except those that only say where a text came
    from: the same queue read from another folder is the same queue."""
    content = {f.name: _plain(getattr(sources, f.name)) for f in fields(sources) if f.name not in _WHERE}
    content["prompt"] = sources.prompt[0] if sources.prompt else None  # its text, not where it came from
    try:
        text = json.dumps(content, sort_keys=True, ensure_ascii=False, allow_nan=False)
        if json.loads(text) != content:  # a key that was not a string, a tuple, ...: JSON would not tell it apart
            return None
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(f"{code_version()}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, Located):
        return value.data  # its lines only place the messages of a check that failed
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """What the compiled form depends on besides the sources: this format, the Python version, the code that
    checks and compiles a queue, and the distributions installed where RE2 and PyYAML are."""
    digest = hashlib.sha256(f"{FORMAT} {VERSION}\n{sys.version}\n".encode())
    for folder in _CODE:
        for path in sorted((_PACKAGE / folder).iterdir()):
            if path.suffix in (".py", ".json") and path.is_file():
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for path in sorted((_PACKAGE / "reading" / "shared").glob("*.yaml")):  # the shared readings a queue names
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    import re2
    import yaml

    for where in sorted({Path(module.__file__).resolve().parent.parent for module in (re2, yaml)}):
        try:
            digest.update("\n".join(sorted(n for n in os.listdir(where) if n.endswith(".dist-info"))).encode())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def places() -> list[Path]:
    """Where compiled forms are read from, in order; the first writable one is written to."""
    setting = os.environ.get(ENVIRONMENT, "").strip()
    if setting:
        return [] if setting.lower() in ("off", "0", "false", "no", "none") else [Path(setting)]
    found = []
    if sys.prefix != sys.base_prefix:  # a virtual environment: the compiled form travels with it
        found.append(Path(sys.prefix) / "ptd-triage-cache")
    home = os.environ.get("XDG_CACHE_HOME") or (os.path.join(os.path.expanduser("~"), ".cache")
                                                 if os.path.expanduser("~") != "~" else "")
    if home:
        found.append(Path(home) / "ptd-triage")
    return found


def file_name(key: str) -> str:
    return f"queue-{key[:32]}.json"


def read(key: str) -> list[tuple[str, bool, frozenset[str] | None]] | None:
    """The patterns the compiled form for `key` records, or None when there is none that can be trusted."""
    for place in places():
        try:
            raw = _read_bounded(place / file_name(key))
        except OSError:
            continue
        known = _parse(raw, key)
        if known is not None:
            return known
    return None


def _read_bounded(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(MAX_BYTES + 1)


def _parse(raw: bytes, key: str) -> list[tuple[str, bool, frozenset[str] | None]] | None:
    """The document's patterns when it is exactly what `write` writes for `key`, signed by this installation's
    secret; None for anything else."""
    signed = signing.verified(raw, places()) if len(raw) <= MAX_BYTES else None
    if signed is None:
        return None
    try:  # plain json, as for a kept document: the shape is checked below, to the last entry
        document = json.loads(signed)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or set(document) != {"format", "version", "key", "checked", "patterns"}:
        return None
    if (document["format"], document["version"], document["key"], document["checked"]) != (FORMAT, VERSION, key,
                                                                                           True):
        return None
    entries = document["patterns"]
    if not isinstance(entries, list):
        return None
    known = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[1], bool) and _literals(entry[2])):
            return None
        known.append((entry[0], entry[1], None if entry[2] is None else frozenset(entry[2])))
    return known


def _literals(value: Any) -> bool:
    return value is None or (isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value))


def write(key: str, used: set[tuple[str, bool]]) -> Path | None:
    """Write the compiled form (atomically: a run reading it at the same time sees the old file or the new one);
    the path, or None when no place is writable. Never fails a run."""
    entries = sorted([source, case, _sorted(patterns.compile_pattern(source, case_sensitive=case).triggers)]
                     for source, case in used)
    text = json.dumps({"format": FORMAT, "version": VERSION, "key": key, "checked": True, "patterns": entries},
                      ensure_ascii=False, separators=(",", ":"))
    data = signing.signed(text.encode("utf-8"), places())  # every pattern here compiled under RE2, which reads UTF-8: no surrogate
    return _write_file(file_name(key), data, "queue-") if data is not None else None


def _write_file(name: str, data: bytes, prefix: str) -> Path | None:
    """`data` as `name` in the first writable place, atomically; the path, or None. Never fails a run."""
    for place in places():
        target = place / name
        temporary = None
        try:
            place.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix="." + prefix, suffix=".tmp", dir=place)
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(temporary, 0o644)  # readable by whoever runs the environment (mkstemp makes it private)
            os.replace(temporary, target)
        except OSError:
            if temporary is not None:
                with suppress(OSError):
                    os.unlink(temporary)
            continue
        _prune(place, prefix)
        return target
    return None


def load_document(path: str | Path) -> Located:
    """`triage.config.source.load_document`, through the kept parse of the same text when there is one."""
    from triage.config.source import parse_document, read_text

    path = Path(path)
    text = read_text(path)
    file = str(path)
    json_text = file.endswith(".json")  # read as JSON, not YAML (source.parse_document): part of the key
    key = hashlib.sha256(f"{code_version()}\n{json_text}\n".encode() + text.encode("utf-8", "surrogatepass"))
    key = key.hexdigest()
    for place in places():
        kept = _read_document(place / _document_name(key), key, file)
        if kept is not None:
            return kept
    located = parse_document(text, file)
    _write_document(key, located)
    return located


def _document_name(key: str) -> str:
    return f"document-{key[:32]}.json"


def _read_document(path: Path, key: str, file: str) -> Located | None:
    try:
        # Plain json: a file this module wrote and signed (no YAML bounds to check again, and the depth scan of a
        # large document costs what this saves); anything unsigned or malformed is ignored, as every kept file is.
        signed = signing.verified(path.read_bytes(), places())
        if signed is None:
            return None
        document = json.loads(signed)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or set(document) != {"format", "version", "key", "data", "marks"}:
        return None
    if (document["format"], document["version"], document["key"]) != (FORMAT, VERSION, key):
        return None
    marks = document["marks"]
    if not (isinstance(marks, list) and all(isinstance(m, list) and len(m) == 2 and isinstance(m[0], list)
                                            and isinstance(m[1], int) for m in marks)):
        return None
    return Located(document["data"], file, {tuple(at): (file, line) for at, line in marks})


def _write_document(key: str, located: Located) -> None:
    """Keep the parse of a document whose data is plain JSON (a YAML date or a number as a key is not kept: JSON
    would give it back as something else) and whose marks all name its own file. Never fails a run."""
    marks = [[list(at), line] for at, (where, line) in located.marks.items() if where == located.file]
    if len(marks) != len(located.marks):
        return
    try:
        text = json.dumps({"format": FORMAT, "version": VERSION, "key": key, "data": located.data, "marks": marks},
                          ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if json.loads(text)["data"] != located.data or any(not all(isinstance(p, (str, int)) for p in at)
                                                          for at, _ in marks):
            return
    except (TypeError, ValueError, RecursionError):
        return
    data = signing.signed(text.encode("utf-8", "surrogatepass"), places())
    if data is not None:
        _write_file(_document_name(key), data, "document-")


def _sorted(literals: frozenset[str] | None) -> list[str] | None:
    return None if literals is None else sorted(literals)


def _prune(place: Path, prefix: str = "queue-") -> None:
    try:
        files = sorted(place.glob(prefix + "*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[KEEP:]:
            old.unlink()
    except OSError:
        pass  # another run pruned it first


def where(sources) -> Path | None:
    """The file that holds the compiled form of `sources`, when one can be trusted."""
    key = queue_key(sources)
    for place in places() if key else []:
        path = place / file_name(key)
        try:
            if _parse(_read_bounded(path), key) is not None:
                return path
        except OSError:
            continue
    return None
