#!/usr/bin/env python3
"""Do the queue's examples and tests defend its rules? Delete or alter one alternative of a pattern at a time and
see whether anything a fresh clone runs notices.

    python scripts/mutation_check.py distributed                 # a seeded sample (200): minutes on 2 cores
    python scripts/mutation_check.py distributed --sample 300 --seed 2
    python scripts/mutation_check.py pt2 --all                   # every mutant
    python scripts/mutation_check.py path/to/my-queue --tests tests/test_my_queue.py
    python scripts/mutation_check.py distributed --no-tests      # the examples and `validate` alone (seconds)

What is mutated: every pattern the rubric keeps (each part, each signal's `match` and `all`, each slot of step 4
and step 5, each modifier's cues, `text:`'s two patterns). Its alternatives are those of its outer alternation
(split at the `|` outside any group or bracket); a pattern without one, written as one group with boundaries
around it (`\\b(A|B)\\b`, `{word_start}(A|B){word_end}`), offers the alternatives of the groups directly inside
it. Two mutants of each alternative:
- `delete`: the alternative is gone (`a|b|c` -> `a|c`);
- `alter`: its longest literal word (three letters or more, outside brackets, escapes and `{part}` names) has its
  middle letter replaced (`stale` -> `stqle`): a typo, so the words it was written for no longer match.

A mutant is caught when a check a fresh clone runs fails, cheapest first:
1. `validate`: the rubric loaded from a copy of the queue folder with the mutant written into it, every check
   `ptd-triage validate` makes (the load runs the same ones), the rubric's load-time `examples:` among them;
2. the rule-focused tests (`--tests`; the bundled queues have a default list, DEFAULT_TESTS): pytest, in a copy
   of the checkout with the mutant in the queue's file, without the shared evaluation sets (`PTD_SHARED_DIR`
   points nowhere) and without the compiled-queue cache, so as a fresh clone runs them.
Excluded and counted apart, never sampled: mutants that cannot change what is compiled (an alternative of a part
no rule uses, an alternative that repeats a sibling of the same alternation) and mutants RE2 refuses (validate
would name them at once, which says nothing about the examples).

The report (markdown, stdout, or `--out`): caught / total, a table by section (a part counts for the section
whose rules use it, `shared` when several do), and every survivor as FILE:LINE, the pattern's key and the
alternative, so that a maintainer can add the example that fails without it: a `match:` example the alternative
alone matches, or a `not:` near miss where it narrows. A survivor that no example could catch (a dead
alternative, one a sibling already covers) says something about the rule.

The test step runs tests/test_rule_examples.py's check (the queue's tests/data/rule_examples/QUEUE.yaml, texts
keyed by pattern) in the worker, on the copy, and the other files with pytest. `--suggest FILE` writes those texts:
for every alternative no text defends, one the pattern matches only through it, and lists the alternatives it
finds none for (bench/mutation-undefended.md).

Why scripts/ and not bench/: it is a maintainer's check of a queue's rules, like scripts/rule_support.py, with an
exit status a fork's CI can use (`--min`); bench/ measures what this machine costs a user.

Exit status: 0 when the catch rate is at least `--min` (default 0: report only), 1 when below, 2 on bad input
(no such queue, or tests that fail on the queue as it is). tests/test_mutation_check.py runs the machinery on a
toy queue.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout without an installed package
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("PTD_TRIAGE_CACHE", "off")  # every mutant is checked, none skips as "passed before"

import yaml  # noqa: E402

from triage.config.bundle import ConfigError, bundled_queue, read_sources  # noqa: E402
from triage.config.parts import MODIFIER_PATTERNS, SLOT_SECTIONS, expand, references, signal_lists, slot_sources  # noqa: E402
from triage.config.validate import check, prompt_problems  # noqa: E402
from triage.text.matching import PatternError  # noqa: E402
from triage.text.patterns import check_pattern  # noqa: E402

DEFAULT_SAMPLE = 200
# The tests that read each bundled queue's rules (planning hand-written issues, running its examples), ~13 s.
DEFAULT_TESTS = {
    "distributed": [
        "tests/test_rule_examples.py",  # first: the cheapest, and pytest -x stops at the first failure
        "tests/test_high_priority.py", "tests/test_high_priority_table.py",
        "tests/test_high_priority_modifiers.py",
        "tests/test_types.py", "tests/test_request_by_what_is_asked.py", "tests/test_request_kinds.py",
        "tests/test_request_said_otherwise.py", "tests/test_routing_vocabulary.py",
        "tests/test_not_distributed_table.py", "tests/test_frames.py", "tests/test_steps.py",
        "tests/test_procedure_rules.py", "tests/test_planner.py", "tests/test_rubric_examples.py",
        "tests/test_said_by.py", "tests/test_modifiers.py",
    ],
    "pt2": ["tests/test_rule_examples.py", "tests/test_pt2_queue.py", "tests/test_pt2_vocabulary.py",
            "tests/test_rubric_examples.py"],
}

Path_ = tuple


# --- alternatives ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Group:
    depth: int           # 0: the whole pattern
    start: int           # where its content starts (after "(", "(?:", "(?P<name>")
    end: int             # where its content ends (its ")")
    bars: tuple[int, ...]  # the positions of its own `|`


def _class_end(source: str, i: int) -> int:
    """The index just past the bracket expression starting at source[i] == '['."""
    j = i + 1
    if j < len(source) and source[j] == "^":
        j += 1
    if j < len(source) and source[j] == "]":  # a leading ']' is literal
        j += 1
    while j < len(source) and source[j] != "]":
        if source[j] == "\\":
            j += 2
            continue
        if source.startswith("[:", j):  # [:alpha:]
            close = source.find(":]", j + 2)
            j = close + 2 if close >= 0 else j + 1
            continue
        j += 1
    return j + 1


def groups(source: str) -> list[Group]:
    """Every group of an RE2 pattern (and the pattern itself, depth 0) with the positions of its own `|`."""
    out: list[Group] = []
    stack: list[tuple[int, int, list[int]]] = [(0, 0, [])]  # (depth, content start, bars)
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
        elif c == "[":
            i = _class_end(source, i)
        elif c == "(":
            j = i + 1
            if source.startswith("?", j):
                flags = re.match(r"\?[a-zA-Z-]*\)", source[j:])
                if flags:  # (?i): a flag, no group
                    i = j + flags.end()
                    continue
                named = re.match(r"\?P?<[^>]*>|\?[a-zA-Z-]*:", source[j:])
                j += named.end() if named else 1
            stack.append((len(stack), j, []))
            i = j
        elif c == ")" and len(stack) > 1:
            depth, start, bars = stack.pop()
            out.append(Group(depth, start, i, tuple(bars)))
            i += 1
        else:
            if c == "|":
                stack[-1][2].append(i)
            i += 1
    depth, start, bars = stack[0]
    out.append(Group(0, 0, len(source), tuple(bars)))
    return sorted(out, key=lambda g: (g.depth, g.start))


def alternatives(source: str) -> list[list[tuple[int, int]]]:
    """The pattern's top-level alternatives as (start, end) spans, one list per alternation: the outer alternation,
    or, without one, those of the groups directly inside it."""
    found = groups(source)
    outer = [g for g in found if g.depth == 0 and g.bars]
    chosen = outer or [g for g in found if g.depth == 1 and g.bars]
    spans = []
    for g in chosen:
        cuts = [g.start - 1, *g.bars, g.end]
        spans.append([(cuts[k] + 1, cuts[k + 1]) for k in range(len(cuts) - 1)])
    return spans


def literal_word(text: str) -> tuple[int, int] | None:
    """The span of the longest literal word (3+ letters) of an alternative: outside brackets, escapes, `{...}`
    (part names and counts) and group prefixes. The first of the longest."""
    best: tuple[int, int] | None = None
    i, run = 0, -1
    while i <= len(text):
        c = text[i] if i < len(text) else ""
        if c.isascii() and c.isalpha():
            run = i if run < 0 else run
            i += 1
            continue
        if run >= 0 and i - run >= 3 and (best is None or i - run > best[1] - best[0]):
            best = (run, i)
        run = -1
        if c == "\\":
            i += 2
        elif c == "[":
            i = _class_end(text, i)
        elif c == "{":
            close = text.find("}", i)
            i = close + 1 if close >= 0 else i + 1
        elif c == "(" and text.startswith("(?", i):
            prefix = re.match(r"\(\?P?<[^>]*>|\(\?[a-zA-Z-]*[:)]", text[i:])
            i += prefix.end() if prefix else 1
        else:
            i += 1
    return best


def _typo(word: str) -> str:
    k = len(word) // 2
    letter = "x" if word[k].lower() == "q" else "q"
    return word[:k] + (letter.upper() if word[k].isupper() else letter) + word[k + 1:]


# --- where the patterns are --------------------------------------------------------------------------------------

def pattern_paths(data: dict) -> Iterator[Path_]:
    """The key path of every pattern the rubric keeps, in document order by kind."""
    for name, source in (data.get("parts") or {}).items():
        if isinstance(source, str):
            yield ("parts", name)
    for key in ("environment_heading", "comment_separator"):
        if isinstance((data.get("text") or {}).get(key), str):
            yield ("text", key)
    for path, signals in signal_lists(data):
        for i, raw in enumerate(signals):
            if isinstance(raw, dict) and isinstance(raw.get("match"), str):
                yield path + (i, "match")
            if isinstance(raw, dict) and isinstance(raw.get("all"), list):
                for j, source in enumerate(raw["all"]):
                    if isinstance(source, str):
                        yield path + (i, "all", j)
    for section in SLOT_SECTIONS:
        for name, raw in slot_sources(data, section).items():
            if isinstance(raw, str):
                yield (section, "slots", name)
            elif isinstance(raw, dict) and isinstance(raw.get("match"), str):
                yield (section, "slots", name, "match")
    for name, spec in (data.get("modifiers") or {}).items():
        for key in MODIFIER_PATTERNS:
            if isinstance(spec, dict) and isinstance(spec.get(key), str):
                yield ("modifiers", name, key)


def scalar_nodes(root: yaml.Node) -> dict[Path_, yaml.ScalarNode]:
    """Each scalar's key path -> its node (whose marks give the exact characters it was written with)."""
    out: dict[Path_, yaml.ScalarNode] = {}
    stack: list[tuple[Path_, yaml.Node]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            out[path] = node
        elif isinstance(node, yaml.MappingNode):
            stack.extend((path + (k.value,), v) for k, v in node.value if isinstance(k, yaml.ScalarNode))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((path + (i,), v) for i, v in enumerate(node.value))
    return out


def pattern_key(data: dict, path: Path_) -> str:
    """The name a pattern's examples are kept under (tests/data/rule_examples/QUEUE.yaml): its key path, dotted, a
    signal named by its id rather than its place in the list, a slot by its name (`types.slots.want`)."""
    names: list[str] = []
    node = data
    for key in path:
        if isinstance(node, list) and isinstance(node[key], dict) and isinstance(node[key].get("id"), str):
            names.append(node[key]["id"])
        else:
            names.append(str(key))
        node = node[key]
    if len(path) == 4 and path[0] in SLOT_SECTIONS and path[1] == "slots" and path[3] == "match":
        names.pop()
    return ".".join(names)


def get(data, path: Path_):
    for key in path:
        data = data[key]
    return data


def sections_of_parts(data: dict) -> dict[str, str]:
    """Each part -> the section whose rules use it (through other parts too), `shared` for several, `unused`."""
    parts = {k: v for k, v in (data.get("parts") or {}).items() if isinstance(v, str)}
    users: dict[str, set[str]] = {name: set() for name in parts}
    for path in pattern_paths(data):
        if path[0] == "parts":
            continue
        section = "not_distributed" if path[0] == "not_in_queue" else str(path[0])
        todo, seen = list(references(get(data, path))), set()
        while todo:
            name = todo.pop()
            if name in seen or name not in parts:
                continue
            seen.add(name)
            users[name].add(section)
            todo.extend(references(parts[name]))
    return {name: (next(iter(s)) if len(s) == 1 else "shared" if s else "unused") for name, s in users.items()}


# --- mutants -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Mutant:
    key: str           # the pattern's key path, dotted
    path: Path_
    line: int          # 1-based, in the rubric
    section: str
    kind: str          # delete | alter
    alternative: str   # as written in the pattern
    value: str         # the mutated pattern
    start: int         # the scalar's characters in the file
    end: int
    excluded: str = ""  # why it is not counted: unused | duplicate | refused
    span: tuple[int, int] = (0, 0)  # the alternative's characters in the pattern


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def enumerate_mutants(rubric_text: str, file: str = "rubric.yaml") -> list[Mutant]:
    """Every mutant of the rubric, in document order, the excluded ones marked."""
    root = yaml.compose(rubric_text, Loader=yaml.SafeLoader)
    if root is None:
        return []
    data = yaml.safe_load(rubric_text)
    nodes = scalar_nodes(root)
    part_sections = sections_of_parts(data)
    out: list[Mutant] = []
    for path in pattern_paths(data):
        node = nodes.get(path)
        if node is None:
            continue
        source: str = get(data, path)
        section = part_sections[path[1]] if path[0] == "parts" else str(path[0])
        for spans in alternatives(source):
            texts = [source[a:b] for a, b in spans]
            for k, (a, b) in enumerate(spans):
                alt = texts[k]
                # the alternative and the `|` before it (the first: the one after it)
                cut = (a - 1, b) if k else (a, b + 1)
                deleted = source[:cut[0]] + source[cut[1]:]
                base = Mutant(pattern_key(data, path), path, node.start_mark.line + 1, section, "delete", alt,
                              deleted, node.start_mark.index, node.end_mark.index, span=(a, b))
                out.append(replace(base, excluded=_excluded(base, texts, k, section)))
                word = literal_word(alt)
                if word:
                    altered = alt[:word[0]] + _typo(alt[word[0]:word[1]]) + alt[word[1]:]
                    mutant = replace(base, kind="alter", value=source[:a] + altered + source[b:])
                    out.append(replace(mutant, excluded=_excluded(mutant, texts, k, section)))
    return out


def _excluded(mutant: Mutant, siblings: list[str], k: int, section: str) -> str:
    if section == "unused":
        return "unused"
    if mutant.kind == "delete" and siblings[k] in siblings[:k] + siblings[k + 1:]:
        return "duplicate"
    if not mutant.value.strip() or "{" not in mutant.value and _refused(mutant.value):
        return "refused"
    return ""


def _refused(pattern: str) -> bool:
    try:
        check_pattern(pattern)
    except PatternError:
        return True
    return False


def apply(rubric_text: str, mutant: Mutant) -> str:
    return rubric_text[:mutant.start] + _quoted(mutant.value) + rubric_text[mutant.end:]


# --- checks ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    tree: str          # the checkout to copy (tests run in the copy)
    queue_rel: str     # the queue folder, relative to `tree`
    tests: tuple[str, ...]
    original: str      # the rubric's text


@dataclass(frozen=True)
class Verdict:
    mutant: Mutant
    caught_by: str     # "validate: ...", "tests: ...", "" (survived), or "no change" (excluded after all)


_WORKER: dict = {}


def _copy_tree(tree: Path, into: Path) -> None:
    try:
        listed = subprocess.run(["git", "-C", str(tree), "ls-files", "-co", "--exclude-standard"], check=True,
                                capture_output=True, text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()
                  and not {".git", ".venv", "__pycache__"} & set(p.relative_to(tree).parts)]
    for rel in listed:
        src = tree / rel
        if src.is_file():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, into / rel)


def _worker_start(job: Job) -> None:
    from multiprocessing.util import Finalize

    copy = Path(tempfile.mkdtemp(prefix="mutation-check-"))
    # removed when the process ends, a pool's worker too (it skips atexit, not multiprocessing's finalizers)
    Finalize(None, shutil.rmtree, args=(copy, True), exitpriority=10)
    _copy_tree(Path(job.tree), copy)
    _WORKER.update(job=job, copy=copy, rubric=copy / job.queue_rel / "rubric.yaml")


def _expanded(text: str) -> dict:
    data = yaml.safe_load(text)
    out, _ = expand(data)
    out.pop("parts", None)
    return out


def check_mutant(mutant: Mutant) -> Verdict:
    job: Job = _WORKER["job"]
    rubric: Path = _WORKER["rubric"]
    text = apply(job.original, mutant)
    if _expanded(text) == _WORKER.setdefault("expanded", _expanded(job.original)):
        return Verdict(mutant, "no change")
    rubric.write_text(text, encoding="utf-8")
    try:
        folder = rubric.parent
        sources = read_sources(rubric, folder / "labels.json", folder / "templates")
        problems = [str(p) for p in check(sources) + prompt_problems(sources)]
    except ConfigError as exc:
        problems = [str(exc)]
    if problems:
        return Verdict(mutant, "validate: " + problems[0].replace(str(_WORKER["copy"]) + "/", ""))
    failed = _tests_fail(job) if job.tests else ""
    rubric.write_text(job.original, encoding="utf-8")
    return Verdict(mutant, "tests: " + failed if failed else "")


def _tests_fail(job: Job) -> str:
    """The first test that fails in the worker's copy of the checkout ("" when they all pass), run as a fresh clone
    runs them: no shared evaluation sets, no compiled-queue cache."""
    tests = list(job.tests)
    if RULE_EXAMPLES_TEST in tests:  # the same test's function, on the copy's files, without pytest's start-up
        tests.remove(RULE_EXAMPLES_TEST)
        first = _rule_examples_fail()
        if first:
            return first
    if not tests:
        return ""
    env = {**os.environ, "PTD_TRIAGE_CACHE": "off", "PTD_SHARED_DIR": str(_WORKER["copy"] / "no-shared"),
           "PYTHONPATH": str(_WORKER["copy"]), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           *tests], cwd=_WORKER["copy"], env=env, capture_output=True, text=True)
    if done.returncode == 0:
        return ""
    failed = re.search(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M)
    return failed.group(1) if failed else f"pytest exit {done.returncode}"


RULE_EXAMPLES_TEST = "tests/test_rule_examples.py"


def _rule_examples_fail() -> str:
    """tests/test_rule_examples.py's check of the queue's examples file, run in this process on the copy."""
    import importlib.util

    copy: Path = _WORKER["copy"]
    queue = _WORKER["rubric"].parent.name
    examples = copy / "tests" / "data" / "rule_examples" / f"{queue}.yaml"
    if not (copy / RULE_EXAMPLES_TEST).is_file() or not examples.is_file():
        return ""
    if "rule_examples" not in _WORKER:
        spec = importlib.util.spec_from_file_location("_rule_examples", copy / RULE_EXAMPLES_TEST)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _WORKER["rule_examples"] = module
    problems = _WORKER["rule_examples"].problems_of(_WORKER["rubric"], yaml.safe_load(examples.read_text("utf-8")))
    return f"{RULE_EXAMPLES_TEST}::test_every_pattern_matches_its_examples[{queue}]" if problems else ""


# --- suggesting examples -----------------------------------------------------------------------------------------
# For a survivor, a text the pattern matches only through that alternative: sampled from the pattern with the
# alternation narrowed to it, then kept only if the pattern matches it and neither mutant of the alternative does.
# A maintainer reads and edits what is suggested (`--suggest FILE` merges them into a test-data file).

_PICK = " aA1-_.,:/x\n"  # characters tried, in order, for a class or a negated literal


def _sample(items, rng: random.Random | None, out: list[str]) -> None:
    from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812 - the parser's opcodes

    for op, av in items:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(next(c for c in _PICK if ord(c) != av))
        elif op is C.ANY:
            out.append("a")
        elif op is C.IN:
            out.append(_in_class(av, rng))
        elif op is C.BRANCH:
            options = av[1]
            _sample(options[rng.randrange(len(options))] if rng else options[0], rng, out)
        elif op is C.SUBPATTERN:
            _sample(av[-1], rng, out)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            low, high, body = av
            # first try: an optional piece once (it may hold the word), a filler repeated as little as it may
            count = (1 if high == 1 else low) if rng is None else rng.choice([low, max(low, 1)])
            count = min(count, high) if high is not C.MAXREPEAT else count
            for _ in range(count):
                _sample(body, rng, out)
        elif op is C.AT:
            if av in (C.AT_BEGINNING, C.AT_BEGINNING_STRING) and out and out[-1] != "\n":
                out.append("\n")
            elif av in (C.AT_END, C.AT_END_STRING):
                out.append("\n")
        elif op is C.CATEGORY:
            out.append(_category(av))


def _category(av) -> str:
    from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812

    return {C.CATEGORY_DIGIT: "1", C.CATEGORY_NOT_DIGIT: "a", C.CATEGORY_SPACE: " ", C.CATEGORY_NOT_SPACE: "a",
            C.CATEGORY_WORD: "a", C.CATEGORY_NOT_WORD: " "}.get(av, "a")


def _in_class(items, rng: random.Random | None) -> str:
    from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812

    negate = any(op is C.NEGATE for op, _ in items)
    members = [(op, av) for op, av in items if op is not C.NEGATE]

    def inside(c: str) -> bool:
        for op, av in members:
            if op is C.LITERAL and ord(c) == av or op is C.RANGE and av[0] <= ord(c) <= av[1]:
                return True
            if op is C.CATEGORY and re.fullmatch(_CATEGORY_RE.get(av, "a"), c):
                return True
        return False

    if not negate and rng is None and members and members[0][0] is C.LITERAL:
        return chr(members[0][1])
    candidates = [c for c in _PICK if inside(c) != negate]
    if not candidates and not negate and members:
        op, av = members[0]
        return chr(av[0]) if op is C.RANGE else _category(av) if op is C.CATEGORY else chr(av)
    return (rng.choice(candidates) if rng else candidates[0]) if candidates else "a"


def _category_re() -> dict:
    from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812

    return {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
            C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W"}


_CATEGORY_RE = _category_re()


def sample_text(source: str, rng: random.Random | None = None) -> str | None:
    """A text the (expanded) pattern is written to match, or None when Python's parser cannot read it."""
    from re import _parser as sre_parse  # type: ignore[attr-defined]

    plain = re.sub(r"\(\?[a-zA-Z]+\)", "", source)  # (?i) and other flags: the sampler ignores case
    plain = re.sub(r"\\p\{?\w+\}?|\\pN|\\pL", "a", plain)
    try:
        parsed = sre_parse.parse(plain, re.IGNORECASE)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    out: list[str] = []
    try:
        _sample(parsed, rng, out)
    except (StopIteration, RecursionError, IndexError):
        return None
    return "".join(out)


def _narrowed(source: str, spans: list[tuple[int, int]], k: int) -> str:
    """The pattern with the alternation of spans[k] reduced to that one alternative."""
    a, b = spans[k]
    start, end = spans[0][0], spans[-1][1]
    return source[:start] + source[a:b] + source[end:]


def suggest(rubric_text: str, mutants: list[Mutant], tries: int = 12,
            existing: dict[str, list[str]] | None = None,
            missed: list[tuple[Mutant, str]] | None = None) -> dict[str, list[str]]:
    """For each mutant's pattern key: new texts, each matched by the pattern and by neither mutant of one of the
    given mutants' alternatives (delete and alter), so that the example fails without it (failing: a text that
    one of the two misses); none for an alternative an `existing` example already defends. An alternative no text
    is found for goes into `missed`, with the reason: it cannot be sampled here, every text tried is still matched
    without it (a sibling covers it: a dead alternative), or the pattern alone matches any text (an anchor, a
    boundary: only a rule around it can show what the alternative is for)."""
    from triage.text.patterns import compile_pattern

    data = yaml.safe_load(rubric_text)
    parts = {k: v for k, v in (data.get("parts") or {}).items() if isinstance(v, str)}

    def expanded(source: str) -> str:
        from triage.config.parts import _Expander

        return _Expander(parts).text(source)

    def matcher(source: str):
        try:
            return compile_pattern(expanded(source), case_sensitive=False)
        except Exception:  # noqa: BLE001 - a pattern that does not compile alone: no suggestion
            return None

    out: dict[str, list[str]] = {}
    by_alt: dict[tuple[str, tuple[int, int]], Mutant] = {}
    for m in mutants:
        by_alt.setdefault((m.key, m.span), m)
    cache: dict[str, Any] = {}
    for (key, index), m0 in by_alt.items():
        source = get(data, m0.path)
        spans = next((s for s in alternatives(source) if index in s), None)
        if spans is None:
            continue
        whole = cache.setdefault(source, matcher(source))
        mutated = [matcher(x.value) for x in _both_mutants(source, spans, index)]
        if whole is None or any(x is None for x in mutated):
            continue
        have = [t for t in (existing or {}).get(key, []) if isinstance(t, str)]
        if any(whole.search(t) and not any(x.search(t) for x in mutated) for t in have):
            continue  # an example it has already fails without the alternative
        narrow = expanded(_narrowed(source, spans, spans.index(index)))
        rng = random.Random(f"{key}:{index}")
        best, best_kills, matched = "", 0, False
        for attempt in range(tries):
            text = sample_text(narrow, None if attempt == 0 else rng)
            if not text or not text.strip() or len(text) > 300:
                continue
            text = text.strip("\n") if whole.search(text.strip("\n")) else text
            if not whole.search(text):
                continue
            matched = True
            kills = sum(1 for x in mutated if not x.search(text))
            if kills > best_kills:
                best, best_kills = text, kills
            if kills == len(mutated):
                break
        if best and not any(best in t or whole.search(t) and not mutated[0].search(t) for t in have):
            out.setdefault(key, []).append(best)
        if best_kills < len(mutated) and missed is not None:
            why = ("every text tried is still matched without it (a sibling covers it)" if matched
                   else "no text could be built from it here")
            if mutated[0].search("") or whole.search(""):  # `^`, `$`, a boundary: the pattern alone matches ""
                why = "it matters only next to what a rule puts around it: defend it with the rule's example"
            missed.append((m0, why if not best else "the misspelt word still matches (it is optional)"))
    return out


def _both_mutants(source: str, spans: list[tuple[int, int]], span: tuple[int, int]) -> list[Mutant]:
    k = spans.index(span)
    a, b = span
    cut = (a - 1, b) if k else (a, b + 1)
    out = [Mutant("", (), 0, "", "delete", source[a:b], source[:cut[0]] + source[cut[1]:], 0, 0, span=span)]
    word = literal_word(source[a:b])
    if word:
        alt = source[a:b]
        altered = alt[:word[0]] + _typo(alt[word[0]:word[1]]) + alt[word[1]:]
        out.append(replace(out[0], kind="alter", value=source[:a] + altered + source[b:]))
    return out


EXAMPLES_HEADER = """\
# Examples of {queue}'s patterns, one list per pattern, keyed by the pattern's name (`parts.NAME`, a slot
# `SECTION.slots.NAME`, a signal `SECTION...signals.ID.match` or `.all.N`, `modifiers.NAME.KEY`): texts the pattern
# must match (`match`) and near misses it must not (`not`), the pattern read case-insensitively with its parts
# composed. tests/test_rule_examples.py runs them. Each `match` text was chosen so that it fails when one of the
# pattern's alternatives is deleted or misspelt: scripts/mutation_check.py measures how many such mutants the
# examples and tests catch, and `--suggest` proposes texts for those they miss (read them before you keep them).
"""


def merge_examples(file: Path, queue: str, found: dict[str, list[str]]) -> int:
    """Add the suggested texts to the examples file (created with its header), keys in order; how many added."""
    current = yaml.safe_load(file.read_text(encoding="utf-8")) if file.is_file() else None
    current = current if isinstance(current, dict) else {}
    added = 0
    for key, texts in found.items():
        entry = current.setdefault(key, {})
        have = entry.setdefault("match", [])
        for text in texts:
            if text not in have:
                have.append(text)
                added += 1
    lines = [EXAMPLES_HEADER.format(queue=queue)]
    for key in current:
        lines.append(f"{key}:")
        for kind in ("match", "not"):
            if current[key].get(kind):
                lines += _flow(f"  {kind}: [", current[key][kind])
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return added


def _flow(head: str, texts: list[str], width: int = 115) -> list[str]:
    """A YAML flow list of the texts in lines of at most `width` where the texts allow (each JSON-quoted: YAML
    reads JSON strings)."""
    import json

    lines, line = [], head
    for i, text in enumerate(texts):
        item = json.dumps(text, ensure_ascii=False) + ("]" if i == len(texts) - 1 else ",")
        if line.strip() not in ("", head.strip()) and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = " " * len(head)
        line += ("" if line.endswith(("[", " ")) else " ") + item
    return lines + [line]


def read_examples(file: Path) -> dict[str, list[str]]:
    current = yaml.safe_load(file.read_text(encoding="utf-8")) if file.is_file() else None
    return {k: list(v.get("match") or []) for k, v in (current or {}).items() if isinstance(v, dict)}


# --- the run and the report --------------------------------------------------------------------------------------

def _bad_input(message: str) -> NoReturn:
    print(f"mutation_check: {message}", file=sys.stderr)
    raise SystemExit(2)


def resolve_queue(given: str) -> Path:
    folder = Path(given)
    if not folder.is_dir():
        try:
            folder = bundled_queue(given)
        except ConfigError as exc:
            _bad_input(str(exc))
    if not (folder / "rubric.yaml").is_file():
        _bad_input(f"{folder}: no rubric.yaml")
    return folder.resolve()


def _tree_of(folder: Path) -> Path:
    """The checkout a queue folder is in (where its tests are): the nearest parent with .git or tests/."""
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists() or (parent / "tests").is_dir():
            return parent
    return folder.parent


def sample(mutants: list[Mutant], n: int | None, seed: int) -> list[Mutant]:
    eligible = [m for m in mutants if not m.excluded]
    if n is None or n >= len(eligible):
        return eligible
    chosen = random.Random(seed).sample(range(len(eligible)), n)
    return [eligible[i] for i in sorted(chosen)]


def run(folder: Path, n: int | None, seed: int, tests: tuple[str, ...],
        jobs: int) -> tuple[list[Mutant], list[Verdict]]:
    tree = _tree_of(folder)
    original = (folder / "rubric.yaml").read_text(encoding="utf-8")
    mutants = enumerate_mutants(original, str(folder / "rubric.yaml"))
    chosen = sample(mutants, n, seed)
    job = Job(str(tree), str(folder.relative_to(tree)), tests, original)
    if tests:  # the tests must pass on the queue as it is, or every mutant would look caught
        _worker_start(job)
        failed = _tests_fail(job)
        if failed:
            _bad_input(f"the tests fail on the queue as it is ({failed}): fix them first")
    if jobs <= 1:
        _worker_start(job)
        verdicts = [check_mutant(m) for m in chosen]
    else:
        with ProcessPoolExecutor(jobs, initializer=_worker_start, initargs=(job,)) as pool:
            verdicts = []
            for verdict in pool.map(check_mutant, chosen, chunksize=4):
                verdicts.append(verdict)
                if len(verdicts) % 25 == 0:  # progress, on stderr: a run takes minutes
                    caught = sum(1 for v in verdicts if v.caught_by and v.caught_by != "no change")
                    print(f"{len(verdicts)}/{len(chosen)} checked, {caught} caught", file=sys.stderr)
    return mutants, verdicts


def report(folder: Path, mutants: list[Mutant], verdicts: list[Verdict], *, seed: int, command: str) -> str:
    counted = [v for v in verdicts if v.caught_by != "no change"]
    caught = [v for v in counted if v.caught_by]
    by_check = Counter(v.caught_by.split(":")[0] for v in caught)
    excluded = Counter(m.excluded for m in mutants if m.excluded)
    excluded["no change"] += len(verdicts) - len(counted)
    rate = len(caught) / len(counted) if counted else 0.0
    lines = [f"## Mutation check: {folder.name}", "",
             f"`{command}`", "",
             f"Seed {seed}; {len(verdicts)} of {sum(1 for m in mutants if not m.excluded)} mutants sampled "
             f"({len(mutants)} in all). **Caught {len(caught)} / {len(counted)} = {100 * rate:.1f}%** "
             f"(validate and the load-time examples {by_check['validate']}, tests {by_check['tests']}).",
             "Excluded, not counted: " + (", ".join(f"{k} {v}" for k, v in sorted(excluded.items())) or "none")
             + ".", "", "| section | mutants | caught | % | delete caught | alter caught |",
             "|---|---:|---:|---:|---:|---:|"]
    sections = sorted({v.mutant.section for v in counted})
    for section in sections:
        rows = [v for v in counted if v.mutant.section == section]
        got = sum(1 for v in rows if v.caught_by)
        kinds = {kind: [v for v in rows if v.mutant.kind == kind] for kind in ("delete", "alter")}
        cells = [f"{sum(1 for v in k if v.caught_by)}/{len(k)}" for k in kinds.values()]
        percent = f"{100 * got / len(rows):.0f}"
        lines.append(f"| {section} | {len(rows)} | {got} | {percent} | {cells[0]} | {cells[1]} |")
    survivors = [v for v in counted if not v.caught_by]
    lines += ["", f"Survivors ({len(survivors)}): FILE:LINE, the pattern, the mutation, the alternative", ""]
    rubric = folder / "rubric.yaml"
    rubric = Path(os.path.relpath(rubric)) if rubric.is_relative_to(Path.cwd()) else rubric  # as typed
    for v in survivors:
        m = v.mutant
        lines.append(f"- {rubric}:{m.line} `{m.key}` {m.kind}: `{m.alternative}`")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("queue", help="a bundled queue's name or a queue folder (rubric.yaml, labels.json, "
                                      "templates/)")
    parser.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                        help=f"mutants to check (default {DEFAULT_SAMPLE})")
    parser.add_argument("--all", action="store_true", help="every mutant (slow: minutes per hundred)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tests", nargs="*", default=None,
                        help="test files to run on a mutant validate passes (default: the bundled queue's list)")
    parser.add_argument("--no-tests", action="store_true", help="validate and the examples only")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--min", type=float, default=0.0, help="exit 1 below this catch rate (a fraction)")
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument("--suggest", metavar="FILE",
                        help="instead of checking: add to this examples file (tests/data/rule_examples/QUEUE.yaml)"
                             " a text for every alternative (all, not a sample) that no example of it defends")
    args = parser.parse_args(argv)
    if args.sample < 1:
        parser.error("--sample must be at least 1")
    folder = resolve_queue(args.queue)
    if args.no_tests:
        tests: tuple[str, ...] = ()
    elif args.tests is not None:
        tests = tuple(args.tests)
    else:
        tests = tuple(DEFAULT_TESTS.get(folder.name, ())) if folder.parent == (ROOT / "queues") else ()
    if args.suggest:
        text = (folder / "rubric.yaml").read_text(encoding="utf-8")
        mutants = [m for m in enumerate_mutants(text) if not m.excluded]
        target = Path(args.suggest)
        missed: list[tuple[Mutant, str]] = []
        found = suggest(text, mutants, existing=read_examples(target), missed=missed)
        added = merge_examples(target, folder.name, found)
        alts = len({(m.key, m.span) for m in mutants})
        print(f"{target}: {added} texts added ({alts} alternatives; read them, edit, keep what says something)")
        print(f"{len(missed)} alternatives without a text that fails without them:")
        for m, why in missed:
            print(f"- {folder / 'rubric.yaml'}:{m.line} `{m.key}`: `{m.alternative}`: {why}")
        return 0
    command = "python scripts/mutation_check.py " + " ".join(argv if argv is not None else sys.argv[1:])
    mutants, verdicts = run(folder, None if args.all else args.sample, args.seed, tests, args.jobs)
    text = report(folder, mutants, verdicts, seed=args.seed, command=command)
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    counted = [v for v in verdicts if v.caught_by != "no change"]
    rate = sum(1 for v in counted if v.caught_by) / len(counted) if counted else 1.0
    return 0 if rate >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
