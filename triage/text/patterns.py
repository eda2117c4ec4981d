"""Compiling the patterns that run on issue text: Google's RE2, with a cheap literal pre-check.

Every pattern that runs on issue text (the rubric's signals and text patterns, the located-text
patterns of `triage.text.document`) is compiled here, by `compile_pattern`, with RE2: its cost is
linear in the input by construction, whatever the pattern, so no issue text can stall the bot
(Python's `re` backtracks: `# a` + 4,000 spaces + `b` once took 111 s to plan). RE2 has no
lookarounds and no backreferences; a pattern it cannot compile raises `PatternError`, and the rubric
refuses to load. Lookarounds are written instead as explicit boundaries that consume a character,
e.g. `(?:^|[^A-Za-z0-9])(FSDP)`: the evidence a pattern reports is the first capturing group that
took part in the match, or the whole match when none did (`evidence_text`).

May import: the standard library and `re2` (google-re2) only.
"""

from __future__ import annotations

import functools
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import re2

try:  # the regex parser: public as sre_parse until 3.11, private since (sre_parse still warns)
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef]


class PatternError(ValueError):
    """A pattern RE2 cannot compile (a lookaround, a backreference, a syntax error); one line."""


_ZERO_WIDTH = ("AT", "ASSERT", "ASSERT_NOT")


def _required_literals(items) -> frozenset[str] | None:
    """Strings (case-folded) of which one must occur wherever the parsed pattern matches.

    Conservative: anything not understood contributes nothing, so the result is only ever a
    necessary condition. Zero-width items (anchors) do not break a literal run.
    """
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            candidates.append(frozenset({"".join(run).casefold()}))
        run.clear()

    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(arg))
            continue
        if name in _ZERO_WIDTH:
            continue
        flush()
        if name == "SUBPATTERN":
            inner = _required_literals(arg[-1])
            if inner:
                candidates.append(inner)
        elif name == "BRANCH":
            alternatives = [_required_literals(alt) for alt in arg[1]]
            if alternatives and all(alternatives):
                candidates.append(frozenset().union(*alternatives))  # type: ignore[arg-type]
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") and arg[0] >= 1:
            inner = _required_literals(arg[2])
            if inner:
                candidates.append(inner)
    flush()
    if not candidates:
        return None
    # The most selective: the one whose shortest string is longest.
    return max(candidates, key=lambda c: (min(len(t) for t in c), -len(c)))


def required_literals(source: str, case_sensitive: bool = True) -> frozenset[str] | None:
    """Case-folded strings of which one occurs in any text the pattern matches (None: no such set).

    Python's parser reads the pattern for this purpose only; RE2 does the matching. Where the two
    disagree on syntax (RE2's `\\pL`, `\\z`, `\\Q…\\E`), Python's parser fails and the answer is None,
    which only costs the pre-check: the pattern is then always scanned.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = _sre_parse.parse(source, 0 if case_sensitive else re.IGNORECASE)
        return _required_literals(parsed)
    except Exception:  # an optimisation only: if the parser's shape ever changes, just scan
        return None


def _options(case_sensitive: bool) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False  # the error is raised, with its message, to the caller
    return options


@dataclass(frozen=True)
class Pattern:
    """One RE2 pattern, multi-line (`^`/`$` at line ends), with its literal pre-check.

    `search`/`match` take the text and, optionally, its case-folded copy: when none of the pattern's
    required literals occurs in it, RE2 is not called at all (planning runs a hundred patterns on
    every location, and most cannot match: on the dev set the check saves about 40% of the planning time).
    """

    source: str
    case_sensitive: bool
    triggers: frozenset[str] | None = field(default=None, compare=False, repr=False)
    # RE2's compiled pattern; None until first used when the pattern is known to compile (see `compile_pattern`).
    compiled: Any = field(default=None, compare=False, repr=False)

    @property
    def regex(self):
        if self.compiled is None:
            object.__setattr__(self, "compiled", _re2(self.source, self.case_sensitive))
        return self.compiled

    def may_match(self, folded: str) -> bool:
        if self.triggers is None:
            return True
        # Each literal is a scan of the text. On a long text, several scans cost more than RE2's one pass
        # (measured on 64-256 KB hostile texts: planning took twice as long with them), so skip them there.
        if len(self.triggers) > 2 and len(folded) > 4096:
            return True
        for literal in self.triggers:  # a loop, not any(...): this runs ~600 times per plan
            if literal in folded:
                return True
        return False

    def search(self, text: str | bytes, folded: str | None = None):
        """RE2's match object (over UTF-8 bytes: use `evidence_text` for the text), or None."""
        if folded is not None and not self.may_match(folded):
            return None
        return self.regex.search(_utf8(text))

    def match(self, text: str | bytes, folded: str | None = None):
        """Like `search`, anchored at the start of the text."""
        if folded is not None and not self.may_match(folded):
            return None
        return self.regex.match(_utf8(text))


def _utf8(text: str | bytes) -> bytes:
    # RE2 reads UTF-8. Encoding here (not in re2's wrapper) means a lone surrogate in text that bypassed the
    # snapshot's clean-up becomes "?" instead of an exception, and spans need no mapping back to characters.
    return text if isinstance(text, bytes) else text.encode("utf-8", "replace")


# Patterns RE2 compiled before, under this code and this RE2, with their required literals: what a queue's compiled
# form (triage.config.compiled) remembers, so that loading it again neither re-parses them with Python's parser nor
# compiles with RE2 what a run never matches (RE2 compiles each on first use).
_KNOWN: dict[tuple[str, bool], frozenset[str] | None] = {}
_RECORDING: list[set[tuple[str, bool]]] = []


def compile_pattern(source: str, *, case_sensitive: bool = True) -> Pattern:
    """Compile with RE2 in multi-line mode; raises PatternError (one line) if RE2 refuses it. Cached: validation
    and loading compile the same rubric's patterns, and a run must not pay for that twice. A known pattern (see
    `learn`) is neither parsed nor compiled here: RE2 compiles it when it is first used."""
    if _RECORDING:
        _RECORDING[-1].add((source, case_sensitive))
    return _compiled(source, case_sensitive)


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, case_sensitive: bool) -> Pattern:
    key = (source, case_sensitive)
    if key in _KNOWN:
        return Pattern(source, case_sensitive, triggers=_KNOWN[key])
    regex = _re2(source, case_sensitive)
    return Pattern(source, case_sensitive, triggers=required_literals(source, case_sensitive), compiled=regex)


def _re2(source: str, case_sensitive: bool):
    try:
        return re2.compile("(?m)" + source, _options(case_sensitive))
    except re2.error as exc:
        message = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(message, bytes):
            message = message.decode("utf-8", "replace")
        raise PatternError(" ".join(str(message).split())) from None
    except (TypeError, UnicodeEncodeError) as exc:
        raise PatternError(f"not a pattern ({exc})") from None


@contextmanager
def recording() -> Iterator[set[tuple[str, bool]]]:
    """Within the block, the (source, case_sensitive) of every pattern compiled (the patterns a queue uses)."""
    used: set[tuple[str, bool]] = set()
    _RECORDING.append(used)
    try:
        yield used
    finally:
        _RECORDING.remove(used)


def learn(known: Iterable[tuple[str, bool, frozenset[str] | None]]) -> None:
    """Patterns RE2 compiled before under this code, with their required literals (triage.config.compiled)."""
    for source, case_sensitive, literals in known:
        _KNOWN[(source, case_sensitive)] = literals


def check_pattern(source: str) -> None:
    """Raise PatternError (one line) if RE2 refuses the pattern; nothing else. For a pattern that is never run on
    text by itself (a rubric part, checked on its own before it is composed), so it pays for no literal pre-check."""
    _re2(source, True)


def evidence_group(found) -> int:
    """The number of the first capturing group that took part in the match, else 0 (the whole match): the words a
    match is evidence of, without the boundary characters around them (see above)."""
    for index in range(1, found.re.groups + 1):
        if found.start(index) >= 0:
            return index
    return 0


def evidence_text(found) -> str:
    """The text of `evidence_group`: the first capturing group that took part in the match, else the whole match."""
    return _decoded(found.group(evidence_group(found)))


def _decoded(part: str | bytes) -> str:
    return part.decode("utf-8", "replace") if isinstance(part, bytes) else part
