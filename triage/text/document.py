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

Every passage also keeps who said it (`triage.text.speakers`: the reporter, a maintainer, another user), by byte
offset within its location, so that what lowers a criterion can be read only in the words of those it may come
from (the rubric's `said_by`).

Which lines are code, headings, quotes or hidden is `triage.text.markdown`'s answer (one scanner for
the located text and the command grammar); every pattern here is an RE2 pattern (`triage.text.patterns`).

May import: the standard library and `triage.text` (markdown, modifiers, patterns, speakers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triage.text import markdown
from triage.text.modifiers import CueIndex
from triage.text.patterns import Pattern, compile_pattern
from triage.text.speakers import THE_REPORTER, Runs, Speaker, inlined, separator_login

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
    # Who said what: per location, the speaker of each run of its text (by UTF-8 byte offset); a location without
    # runs, and any text not in a location (the frames' lead: the title and the description's first sentence), is
    # the reporter's.
    speakers: dict[str, Runs] = field(default_factory=dict, repr=False, compare=False)
    reporter: Speaker = field(default=THE_REPORTER, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.cues is None:
            object.__setattr__(self, "cues", CueIndex(self.encoded, self.speaker_at))

    @classmethod
    def of(cls, text: dict[str, str], speakers: dict[str, Runs] | None = None,
           reporter: Speaker = THE_REPORTER) -> "Document":
        return cls(
            text=text,
            folded_text={k: v.casefold() for k, v in text.items()},
            # "replace": text that bypassed the snapshot's clean-up must still not crash matching.
            encoded_text={k: v.encode("utf-8", "replace") for k, v in text.items()},
            speakers=speakers or {},
            reporter=reporter,
        )

    @classmethod
    def from_lines(cls, lines: dict[str, list[tuple[str, Speaker]]], reporter: Speaker = THE_REPORTER) -> "Document":
        """A document from each location's lines and who said each (consecutive lines of one speaker: one run)."""
        text, speakers = {}, {}
        for loc, items in lines.items():
            if not items:
                continue
            starts: list[int] = []
            said: list[Speaker] = []
            offset = 0
            for line, speaker in items:
                if not said or said[-1] != speaker:
                    starts.append(offset)
                    said.append(speaker)
                offset += len(line.encode("utf-8", "replace")) + 1  # the line and its "\n"
            text[loc] = "\n".join(line for line, _ in items)
            if said != [reporter]:
                speakers[loc] = Runs(starts, said)
        return cls.of(text, speakers, reporter)

    def speaker_at(self, location: str, offset: int) -> Speaker:
        """Who said the byte at `offset` of the location's text."""
        runs = self.speakers.get(location)
        return runs.at(offset, self.reporter) if runs is not None else self.reporter

    def get(self, location: str) -> str:
        return self.text.get(location, "")

    def folded(self, location: str) -> str:
        return self.folded_text.get(location, "")

    def encoded(self, location: str) -> bytes:
        return self.encoded_text.get(location, b"")

    def without(self, fragments: list[str]) -> "Document":
        """The same document with every occurrence of the fragments blanked out (within each speaker's run: who
        said the rest is kept)."""
        cut = [f for f in sorted(set(fragments), key=len, reverse=True) if f.strip()]

        def blank(value: str) -> str:
            for fragment in cut:
                value = value.replace(fragment, " ")
            return value

        lines: dict[str, list[tuple[str, Speaker]]] = {}
        for loc, value in self.text.items():
            runs = self.speakers.get(loc)
            if runs is None:
                lines[loc] = [(blank(value), self.reporter)]
                continue
            encoded = self.encoded(loc)
            bounds = runs.starts[1:] + [len(encoded) + 1]  # each run but the last ends with its "\n"
            lines[loc] = [(blank(encoded[start:end - 1].decode("utf-8", "replace")), speaker)
                          for start, end, speaker in zip(runs.starts, bounds, runs.speakers)]
        return Document.from_lines(lines, self.reporter)


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
        self._separator = separator
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

    def login(self, line: str) -> str:
        """The login a comment-separator line names (`triage.text.speakers.separator_login`)."""
        found = self._separator.regex.match(line.encode("utf-8", "replace")) if self._separator else None
        return separator_login(line, found)

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
    speaker: Speaker = THE_REPORTER,
) -> dict[str, list[tuple[str, Speaker]]]:
    """Return the lines of one markdown text, per location (`triage.text.markdown` types them), each with who said
    it: `speaker`, or after a comment-separator line the login it names (`triage.text.speakers.inlined`)."""
    out: dict[str, list[tuple[str, Speaker]]] = {loc: [] for loc in LOCATIONS}
    tests = _LineTests(text.casefold(), comment_separator)
    in_env = False
    current, said = base, speaker
    block: list[str] | None = None  # the lines of the fenced code block we are in

    def flush_block(lines: list[str]) -> None:
        body = "\n".join(lines)
        env_block = in_env or tests.is_environment(body, body.casefold())
        default = "code" if current != "comment" else "comment"
        for code_line in lines:
            out["environment" if env_block else tests.verdict(code_line)[2] or default].append((code_line, said))

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
            current, in_env, said = "comment", False, inlined(speaker, tests.login(line.text))
            continue
        if kind == markdown.HEADING:
            in_env = tests.is_environment_heading(line.heading, environment_heading)
            if not in_env:
                out[current].append((line.heading, said))
            continue
        out["environment" if in_env or environment else located or current].append((line.text, said))
    if block is not None:  # an unclosed fence runs to the end: still code
        flush_block(block)
    return out


def build_document(
    title: str,
    body: str,
    comments: list,
    *,
    environment_heading: Pattern,
    comment_separator: Pattern | None = None,
    reporter: Speaker = THE_REPORTER,
) -> Document:
    """The located document of an issue. `comments` are texts, each with its speaker (`(text, Speaker)`); a bare
    text is the reporter's. The title and the description are `reporter`'s."""
    lines: dict[str, list[tuple[str, Speaker]]] = {loc: [] for loc in LOCATIONS}
    lines["title"].append((title, reporter))
    sources = [(body, "prose", reporter)] + [
        (c, "comment", reporter) if isinstance(c, str) else (c[0], "comment", c[1]) for c in comments]
    for text, base, speaker in sources:
        parts = split_markdown(
            text, environment_heading=environment_heading, comment_separator=comment_separator, base=base,
            speaker=speaker,
        )
        for loc, items in parts.items():
            if base == "comment" and loc in ("prose", "code"):
                loc = "comment"
            lines[loc].extend(items)
    return Document.from_lines(lines, reporter)
