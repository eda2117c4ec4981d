"""Parts a maintainer can read (issue 39): how long a part may expand, and how often it must be used.

A part (`triage.config.parts`) expands to at most `PART_MAX_CHARS` characters, every part it uses composed in, and
is used at least `PART_MIN_USES` times. A part used once is a name for one piece of one pattern: inline it, use it
again, or list it in `part_rules.alone` when it must stand alone to be read (a vocabulary named so that its
signal's line stays under 200 characters). A queue may set its own `part_rules: {max_chars, min_uses}`; only the
bundled distributed queue does, until its parts are rewritten by meaning. The shared reading's parts
(`triage.config.reading`) are the package's and are not counted as the queue's. `triage.config.validate` runs
this and places each problem at its file and line.

May import: the standard library, `triage.config.parts`, `triage.text.patterns`.
"""

from __future__ import annotations

from collections.abc import Callable

from triage.config.parts import PartsError, expanded_part, references
from triage.text.patterns import PatternError, check_pattern

# Parts a maintainer can read (issue 39): a part expands to at most this many characters (all the parts it uses
# composed in), and is used at least this often (a part used once is a name for one pattern's piece: inline it,
# reuse it, or list it in `part_rules.alone` when it must stand alone to be read). A queue may set its own
# `part_rules:` (the distributed queue does, until its parts are rewritten); every other queue gets these.
PART_MAX_CHARS = 1000
PART_MIN_USES = 2


def part_uses(data: dict) -> dict[str, int]:
    """How many references to each part the document's patterns make (signals, slots, modifiers, parts)."""
    counts: dict[str, int] = {}
    stack: list = [(k, v) for k, v in data.items() if k not in ("examples", "description")]
    while stack:
        key, node = stack.pop()
        if isinstance(node, str):
            for name in references(node):
                counts[name] = counts.get(name, 0) + 1
        elif isinstance(node, dict):
            stack.extend((k, v) for k, v in node.items() if k not in ("examples", "description", "why"))
        elif isinstance(node, list):
            stack.extend((key, v) for v in node)
    return counts


def part_rule_problems(data: dict, own: set[str], line_of: Callable[[str], int], *,
                       count_uses: bool = True) -> list[tuple[tuple, str]]:
    """Each of the queue's own parts (not the shared reading's) within `part_rules`' size and (`count_uses`) use:
    (key path, message) for each that is not, in the order of their lines (`line_of`)."""
    rules = data.get("part_rules") or {}
    max_chars = int(rules.get("max_chars", PART_MAX_CHARS))
    min_uses = int(rules.get("min_uses", PART_MIN_USES))
    alone = set(rules.get("alone") or ())
    parts = data.get("parts") or {}
    uses = part_uses(data)
    problems: list[tuple[tuple, str]] = []
    for name in sorted(own, key=line_of):
        try:
            size = len(expanded_part(parts, name))
        except PartsError:
            continue  # its own problem (`expand`)
        count = uses.get(name, 0)
        if size <= max_chars and (count >= min_uses or name in alone or not count_uses):
            continue
        try:
            check_pattern(parts[name])
        except PatternError:
            continue  # its own problem (`_part_problems`): one problem a part
        if size > max_chars:
            problems.append((("parts", name), f"part '{name}' expands to {size:,} characters (more than "
                                              f"{max_chars:,}: split it into parts named by meaning)"))
        if count_uses and count < min_uses and name not in alone:
            used = "is not used" if not count else f"is used {count} time{'s' if count > 1 else ''}"
            problems.append((("parts", name), f"part '{name}' {used} (at least {min_uses}: inline it, use it "
                                              "again, or list it in part_rules.alone)"))
    return problems
