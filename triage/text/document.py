"""Split an issue into located passages, so that a signal can weigh where it occurs.

The same word means more in the title than in a pasted environment dump: `nccl` in the output of
`collect_env` says nothing about the bug, `torch/distributed/fsdp/` in a traceback frame says a lot.
Locations (their weights are rubric data, not code):

- title        the issue title
- prose        description text outside code
- code         fenced code that is not a traceback (scripts, commands, logs)
- frame        traceback frame lines (`File ".../torch/distributed/fsdp/x.py", line 3, in f`)
- error        exception lines (`RuntimeError: ...`, `torch.distributed.DistBackendError: ...`)
- comment      text of comments by people (and comment excerpts inlined in the body)
- environment  version/environment dumps (the "Versions" section, collect_env output)

Which lines are code, headings, quotes or hidden is `triage.text.markdown`'s answer (one scanner for
the located text and the command grammar); every pattern here is an RE2 pattern (`triage.text.patterns`).

May import: the standard library and `triage.text` (markdown, modifiers, patterns).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.text import markdown
from triage.text.modifiers import CueIndex
from triage.text.patterns import Pattern, compile_pattern

LOCATIONS = ("title", "prose", "code", "frame", "error", "comment", "environment")

_FRAME = compile_pattern(r'^\s*File "[^"]+", line \d+')
_CPP_FRAME = compile_pattern(r"^\s*(?:frame )?#\d+[:\s]|^\s*\[rank\d+\]:\s*(?:frame )?#\d+")
_ERROR = compile_pattern(
    r"^\s*(?:\[rank\d+\]:\s*)?(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Warning|Failure|Interrupt)\b:?"
    r"|^\s*(?:Segmentation fault|Aborted|terminate called|RuntimeError|AssertionError)"
    r"|INTERNAL ASSERT FAILED"
)
_COLLECT_ENV = compile_pattern(r"Collecting environment information|PyTorch version:|Is debug build:|\[pip3?\]|\[conda\]")


@dataclass(frozen=True)
class Document:
    """Text per location, with the copies matching needs: case-folded (for the signals' cheap literal
    pre-check) and UTF-8 encoded (what RE2 reads; encoded once here, not once per pattern)."""

    text: dict[str, str]
    folded_text: dict[str, str] = field(default_factory=dict, repr=False)
    encoded_text: dict[str, bytes] = field(default_factory=dict, repr=False)
    # Where the modifiers' cues are ("no", "if", "my own kernel": `triage.text.modifiers`), read once per text and
    # only when a signal or frame that minds them has matched.
    cues: CueIndex = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.cues is None:
            object.__setattr__(self, "cues", CueIndex(self.encoded))

    @classmethod
    def of(cls, text: dict[str, str]) -> "Document":
        return cls(
            text=text,
            folded_text={k: v.casefold() for k, v in text.items()},
            # "replace": text that bypassed the snapshot's clean-up must still not crash matching.
            encoded_text={k: v.encode("utf-8", "replace") for k, v in text.items()},
        )

    def get(self, location: str) -> str:
        return self.text.get(location, "")

    def folded(self, location: str) -> str:
        return self.folded_text.get(location, "")

    def encoded(self, location: str) -> bytes:
        return self.encoded_text.get(location, b"")

    def without(self, fragments: list[str]) -> "Document":
        """The same document with every occurrence of the fragments blanked out."""
        text = dict(self.text)
        for fragment in sorted(set(fragments), key=len, reverse=True):
            if fragment.strip():
                text = {loc: value.replace(fragment, " ") for loc, value in text.items()}
        return Document.of(text)


class _LineTests:
    """The per-line tests of one markdown text. A test whose literals occur nowhere in the text is
    dropped up front, so a long text pays for the few tests that can match in it; and each distinct
    line is tested once (a pasted log repeats its lines, and so does hostile text)."""

    def __init__(self, folded: str, separator: Pattern | None):
        def keep(pattern: Pattern | None) -> Pattern | None:
            return pattern if pattern is not None and pattern.may_match(folded) else None

        self.frames = tuple(p for p in (keep(_FRAME), keep(_CPP_FRAME)) if p)
        self.error = keep(_ERROR)
        self.collect_env = keep(_COLLECT_ENV)
        self.separator = keep(separator)
        self._seen: dict[str, tuple[bool, bool, str | None]] = {}
        self._headings: dict[str, bool] = {}

    def verdict(self, line: str) -> tuple[bool, bool, str | None]:
        """(is a comment separator, is environment output, "frame"/"error"/None) for one line."""
        found = self._seen.get(line)
        if found is None:
            folded = line.casefold()
            kind = None
            if any(p.match(line, folded) for p in self.frames):
                kind = "frame"
            elif self.error and self.error.search(line, folded):
                kind = "error"
            found = (
                bool(self.separator and self.separator.match(line, folded)),
                self.is_environment(line, folded),
                kind,
            )
            self._seen[line] = found
        return found

    def is_environment(self, text: str, folded: str) -> bool:
        return bool(self.collect_env and self.collect_env.search(text, folded))

    def is_environment_heading(self, heading: str, pattern: Pattern) -> bool:
        found = self._headings.get(heading)
        if found is None:
            found = self._headings[heading] = bool(pattern.search(heading, heading.casefold()))
        return found


def split_markdown(
    text: str,
    *,
    environment_heading: Pattern,
    comment_separator: Pattern | None,
    base: str = "prose",
) -> dict[str, list[str]]:
    """Return the lines of one markdown text, per location (`triage.text.markdown` types them)."""
    out: dict[str, list[str]] = {loc: [] for loc in LOCATIONS}
    tests = _LineTests(text.casefold(), comment_separator)
    in_env = False
    current = base
    block: list[str] | None = None  # the lines of the fenced code block we are in

    def flush_block(lines: list[str]) -> None:
        body = "\n".join(lines)
        env_block = in_env or tests.is_environment(body, body.casefold())
        default = "code" if current != "comment" else "comment"
        for code_line in lines:
            out["environment" if env_block else tests.verdict(code_line)[2] or default].append(code_line)

    for line in markdown.scan(text):
        kind = line.kind
        if kind == markdown.CODE:
            block.append(line.text)  # type: ignore[union-attr]
            continue
        if kind == markdown.FENCE_OPEN:
            block = []
            continue
        if kind == markdown.FENCE_CLOSE:
            flush_block(block or [])
            block = None
            continue
        separator, environment, located = tests.verdict(line.text)
        if separator:
            current, in_env = "comment", False
            continue
        if kind == markdown.HEADING:
            in_env = tests.is_environment_heading(line.heading, environment_heading)
            if not in_env:
                out[current].append(line.heading)
            continue
        out["environment" if in_env or environment else located or current].append(line.text)
    if block is not None:  # an unclosed fence runs to the end: still code
        flush_block(block)
    return out


def build_document(
    title: str,
    body: str,
    comments: list[str],
    *,
    environment_heading: Pattern,
    comment_separator: Pattern | None = None,
) -> Document:
    lines: dict[str, list[str]] = {loc: [] for loc in LOCATIONS}
    lines["title"].append(title)
    sources = [(body, "prose")] + [(c, "comment") for c in comments]
    for text, base in sources:
        parts = split_markdown(
            text, environment_heading=environment_heading, comment_separator=comment_separator, base=base
        )
        for loc, items in parts.items():
            if base == "comment" and loc in ("prose", "code"):
                loc = "comment"
            lines[loc].extend(items)
    return Document.of({loc: "\n".join(items) for loc, items in lines.items() if items})
