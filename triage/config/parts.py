"""Named pattern pieces (`parts:`) and where the rubric keeps its patterns.

A rubric pattern may name a part in braces: `{word_start}`, `{ddp_names}`. A part is itself a pattern, written once
under the rubric's top-level `parts:` and composed wherever it is named (in a signal's `match` or `all`, in a slot,
in a modifier's cues, or in another part), so one long vocabulary is a few readable lines and one edit changes every
pattern that uses it:

    parts:
      word_start: '(?:^|[^A-Za-z0-9])'
      ddp_names: 'DDP|DistributedDataParallel'
    ...
      - {id: ddp-name, match: '{word_start}({ddp_names})', weight: 3}

Rules (`expand` applies them, once, when the rubric is loaded; the result depends on the document alone):
- a reference is `{name}` with `name` in `[a-z][a-z0-9_]*`; a regex quantifier (`{2}`, `{1,60}`) starts with a
  digit, so it is never one; `\\{name}` is the literal text `{name}`;
- a part is inserted as a non-capturing group `(?:...)`, so `{names}?` or `x{names}y` mean what they say however
  the part is written (an alternation stays one alternative), and the capturing groups keep their order;
- each part must compile on its own (it is a whole pattern, not half a bracket), may use other parts, and may not
  use itself through others; a name no `parts:` entry defines is a problem naming the entry;
- an expanded pattern longer than MAX_EXPANDED characters is refused (parts nested inside parts double at
  every level: a hostile configuration could otherwise ask for gigabytes).

May import: the standard library.
"""

from __future__ import annotations

import copy
import re
from typing import Iterator

MAX_EXPANDED = 20_000  # characters of one expanded pattern; the bundled rubrics' longest is under 3,000

REFERENCE = re.compile(r"(\\*)\{([a-z][a-z0-9_]*)\}")

Path_ = tuple


def signal_lists(data: dict) -> Iterator[tuple[Path_, list]]:
    """(key path, signals) for every list of signals in a rubric document: each list under a `signals` key, in
    document order (topics, routes, not_distributed, types, high_priority criteria and counter-evidence,
    reproduction, and any section added later)."""
    yield from _lists_under(data, "signals", ())


def frame_lists(data: dict) -> Iterator[tuple[Path_, list]]:
    """(key path, frames) for every list of frames (each list under a `frames` key)."""
    yield from _lists_under(data, "frames", ())


def slot_sources(data: dict, section: str = "high_priority") -> dict[str, object]:
    """A section's slot vocabulary as written (step 5's by default; step 4's is `types`): name -> a pattern, or
    {match: pattern, examples: ...}."""
    node = data.get(section) if isinstance(data, dict) else None
    slots = node.get("slots") if isinstance(node, dict) else None
    return slots if isinstance(slots, dict) else {}


SLOTS_PATH = ("high_priority", "slots")
MODIFIER_PATTERNS = ("before", "after", "stop", "anywhere", "within")  # a modifier's keys that hold patterns
# The sections with a slot vocabulary of their own: each one's frames name its own slots (step 4's frames read
# `types.slots`, step 5's `high_priority.slots`); a frame anywhere else reads step 5's.
SLOT_SECTIONS = ("high_priority", "types")


def slots_path(section: str) -> Path_:
    return (section, "slots")


def vocabulary_of(path: Path_) -> str:
    """The section whose slots a frame list at `path` names."""
    return path[0] if path and path[0] in SLOT_SECTIONS else "high_priority"


VERSION_SLOT = "version"  # the slot the hybrid planner pairs with `hybrid.high_priority.version_with`


def slot_pattern(raw: object) -> str | None:
    """A slot's pattern, whichever form it is written in (a string, or a mapping with `match`)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("match"), str):
        return raw["match"]
    return None


def slot_said_by(raw: object) -> dict[str, frozenset[str]]:
    """The slots of a vocabulary that are read only in some speakers' words (`said_by`, triage.text.speakers)."""
    if not isinstance(raw, dict):
        return {}
    return {name: frozenset(spec["said_by"]) for name, spec in raw.items()
            if isinstance(spec, dict) and isinstance(spec.get("said_by"), list)}


def _lists_under(node, key: str, path: Path_) -> Iterator[tuple[Path_, list]]:
    """Depth first, in document order (the document's depth is bounded by `safe_yaml`)."""
    if not isinstance(node, dict):
        return
    for name, value in node.items():
        if name == key and isinstance(value, list):
            yield path + (name,), value
        elif isinstance(value, dict):
            yield from _lists_under(value, key, path + (name,))


class PartsError(ValueError):
    """A part reference that cannot be expanded (unknown, circular, too large); one line."""


class _Expander:
    def __init__(self, parts: dict[str, str]):
        self.parts = parts
        self.done: dict[str, str] = {}

    def part(self, name: str, chain: tuple[str, ...]) -> str:
        if name in self.done:
            return self.done[name]
        if name in chain:
            loop = " -> ".join((*chain[chain.index(name):], name))
            raise PartsError(f"uses part '{name}', which uses itself ({loop})")
        source = self.parts.get(name)
        if not isinstance(source, str):
            raise PartsError(f"names part '{name}', which parts: does not define")
        self.done[name] = self.text(source, (*chain, name))
        return self.done[name]

    def text(self, source: str, chain: tuple[str, ...] = ()) -> str:
        def one(found: re.Match) -> str:
            slashes, name = found.group(1), found.group(2)
            if len(slashes) % 2:  # `\{name}`: an escaped brace, literal text
                return found.group(0)
            return slashes + "(?:" + self.part(name, chain) + ")"

        out = REFERENCE.sub(one, source) if "{" in source else source
        if len(out) > MAX_EXPANDED:
            raise PartsError(f"expands to {len(out):,} characters (more than {MAX_EXPANDED:,}: parts nested too deep?)")
        return out


def expanded_part(parts: dict[str, str], name: str) -> str:
    """The part `name` with every part it uses composed in (raises PartsError)."""
    return _Expander(parts).part(name, ())


def references(source: str) -> list[str]:
    """The part names a pattern uses directly, in order (escaped braces are not references)."""
    return [m.group(2) for m in REFERENCE.finditer(source) if not len(m.group(1)) % 2]


def expand(data: dict) -> tuple[dict, list[tuple[Path_, str]]]:
    """The document with every part reference expanded, and the problems found ((key path, message), as
    `triage.config.rubric.route_problems` gives them). A pattern with a problem is left as written; the document
    given is not changed. Without `parts:` and references the result equals the input."""
    if not isinstance(data, dict):
        return data, []
    parts = data.get("parts") if isinstance(data.get("parts"), dict) else {}
    expander = _Expander(parts)
    problems: list[tuple[Path_, str]] = []
    out = copy.copy(data)
    copied: set[Path_] = {()}

    def writable(path: Path_):
        """The container at `path` in `out`, copied on first write (the input document is never changed)."""
        node = out
        for depth, key in enumerate(path):
            here = path[: depth + 1]
            child = node[key]
            if here not in copied:
                child = copy.copy(child)
                node[key] = child
                copied.add(here)
            node = child
        return node

    def expand_at(path: Path_, key, source: str, what: str) -> None:
        try:
            value = expander.text(source)
        except PartsError as exc:
            problems.append((path + (key,), f"{what} {exc}"))
            return
        if value != source:
            writable(path)[key] = value

    for name, source in parts.items():
        if isinstance(source, str):
            try:
                expander.part(name, ())
            except PartsError as exc:
                problems.append((("parts", name), f"part '{name}' {exc}"))
    for path, signals in signal_lists(data):
        for i, raw in enumerate(signals):
            if not isinstance(raw, dict):
                continue
            what = f"signal '{raw.get('id')}'"
            if isinstance(raw.get("match"), str):
                expand_at(path + (i,), "match", raw["match"], what)
            if isinstance(raw.get("all"), list):
                for j, source in enumerate(raw["all"]):
                    if isinstance(source, str):
                        expand_at(path + (i, "all"), j, source, what)
    for section in SLOT_SECTIONS:
        for name, raw in slot_sources(data, section).items():
            if isinstance(raw, str):
                expand_at(slots_path(section), name, raw, f"slot '{name}'")
            elif isinstance(slot_pattern(raw), str):
                expand_at(slots_path(section) + (name,), "match", raw["match"], f"slot '{name}'")
    modifiers = data.get("modifiers") if isinstance(data.get("modifiers"), dict) else {}
    for name, spec in modifiers.items():  # the cues of negation, hypothetical, ... (`triage.text.modifiers`)
        for key in MODIFIER_PATTERNS:
            if isinstance(spec, dict) and isinstance(spec.get(key), str):
                expand_at(("modifiers", name), key, spec[key], f"modifier '{name}'")
    return out, problems
