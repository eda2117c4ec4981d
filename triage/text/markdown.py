"""One pass over markdown that says, line by line, what a reader of the rendered issue sees.

Both readers of issue text use it: the located text (`triage.text.document.split_markdown`, which
weighs code, headings and prose differently) and the `/ptd-retriage` command grammar
(`command_lines`), so that "is this line code, quoted, or hidden?" has one answer.

What it knows, after CommonMark (https://spec.commonmark.org/), block by block:
- fenced code: a line of at least three backticks or tildes, indented at most three columns, opens a
  fence (a backtick fence's info string may hold no backtick); only a line of the same character, at
  least as long, indented at most three columns and followed by nothing but spaces, closes it. An
  unclosed fence runs to the end. Inside a fence everything is code, `<!--` included.
- HTML comments: `<!--` up to the next `-->` is hidden, across lines; the text before and after it
  joins into one line, as the renderer shows it. A `<!--` that is never closed hides the rest of the
  text when it starts a line (an HTML block of type 2, which ends only at `-->`), and is plain text
  in the middle of a line (an inline comment must be closed).
- `>` block quotes, ATX headings (`# …`, up to six `#`), and lines indented four columns or more
  (indented code, or a continuation line that the renderer joins to the one before: neither stands as
  a line of its own).
Not modelled: list-item containers (a fence inside a list item indented four columns is an indented
line), setext headings, and structure inside block quotes (a quoted line is one `quote` line).

Cost: each character is looked at a bounded number of times (`str.find`/`lstrip` from a cursor that
only moves forward; whether any `-->` is left is known from one `rfind`), no regular expression, so a
64 KB body of `<!--`, backticks or newlines costs what any 64 KB body does.

May import: the standard library only.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

TEXT = "text"  # a paragraph line or a blank line
HEADING = "heading"
QUOTE = "quote"
INDENTED = "indented"
FENCE_OPEN = "fence_open"
CODE = "code"
FENCE_CLOSE = "fence_close"

_OPEN, _CLOSE = "<!--", "-->"


class Line(NamedTuple):  # a tuple, not a dataclass: a 64 KB body can be 65,536 lines
    kind: str
    text: str  # the line as shown, HTML comments removed (inside a fence: the line as written)
    heading: str = ""  # HEADING: the heading's own text, without the `#` marks


_BLANK = Line(TEXT, "")
# A line that starts with none of these (indentation, a fence, a heading, a quote) is a line of text.
_SPECIAL_START = frozenset(" \t`~#>")


def _indent(line: str) -> tuple[int, str]:
    """Columns of leading indentation (a tab advances to the next multiple of four), and the rest."""
    if line[:1] not in (" ", "\t"):
        return 0, line
    rest = line.lstrip(" \t")
    prefix = line[: len(line) - len(rest)]
    if "\t" not in prefix:
        return len(prefix), rest
    columns = 0
    for char in prefix:
        columns = columns + 4 - columns % 4 if char == "\t" else columns + 1
    return columns, rest


def _fence_opening(rest: str) -> tuple[str, int] | None:
    char = rest[:1]
    if char not in ("`", "~"):
        return None
    length = len(rest) - len(rest.lstrip(char))
    if length < 3 or (char == "`" and "`" in rest[length:]):
        return None
    return char, length


def _closes(line: str, fence: tuple[str, int]) -> bool:
    columns, rest = _indent(line)
    char, length = fence
    if columns > 3 or not rest.startswith(char):
        return False
    run = len(rest) - len(rest.lstrip(char))
    return run >= length and not rest[run:].strip(" \t")


def _heading(rest: str) -> str | None:
    """The text of an ATX heading (`rest` is the line without its indentation), or None."""
    level = len(rest) - len(rest.lstrip("#"))
    if not 1 <= level <= 6 or rest[level : level + 1] not in ("", " ", "\t"):
        return None
    content = rest[level:].strip(" \t")
    # An optional closing sequence: `#`s at the end, preceded by a space (or the whole content).
    without = content.rstrip("#")
    if without != content and (not without or without[-1] in " \t"):
        content = without.rstrip(" \t")
    return content


def _classify(line: str) -> tuple[Line, tuple[str, int] | None]:
    """One visible line outside a fence, and the fence it opens (if it does)."""
    if not line:
        return _BLANK, None
    columns, rest = _indent(line)
    if not rest:
        return Line(TEXT, line), None
    if columns >= 4:
        return Line(INDENTED, line), None
    first = rest[0]
    if first in "`~":
        fence = _fence_opening(rest)
        if fence:
            return Line(FENCE_OPEN, line), fence
    elif first == "#":
        heading = _heading(rest)
        if heading is not None:
            return Line(HEADING, line, heading), None
    elif first == ">":
        return Line(QUOTE, line), None
    return Line(TEXT, line), None


def scan(markdown: str) -> Iterator[Line]:
    """The lines of a markdown text, typed; hidden text (HTML comments) is not yielded at all."""
    text = markdown.replace("\r\n", "\n")
    # The last `-->`: a `<!--` after it is never closed. Knowing this up front keeps the scan linear
    # (no search for a `-->` that is not there, once per `<!--`).
    has_comments = _OPEN in text
    last_close = text.rfind(_CLOSE)
    fence: tuple[str, int] | None = None
    pieces: list[str] = []  # the visible parts of the current line, when a comment spans lines
    in_comment = False
    offset = 0  # where the current physical line starts in `text`
    for raw in text.split("\n"):
        start, offset = offset, offset + len(raw) + 1
        if fence is not None:
            if _closes(raw, fence):
                fence = None
                yield Line(FENCE_CLOSE, raw)
            else:
                yield Line(CODE, raw)
            continue
        cursor = 0
        if in_comment:
            end = raw.find(_CLOSE)
            if end < 0:
                continue  # the whole line is inside the comment
            in_comment, cursor = False, end + len(_CLOSE)
        elif not has_comments or _OPEN not in raw:
            if raw and raw[0] not in _SPECIAL_START:  # most lines: nothing at their start makes them special
                yield Line(TEXT, raw)
            else:
                line, fence = _classify(raw)
                yield line
            continue
        # Remove the comments in this line, from `cursor` on.
        while True:
            opened = raw.find(_OPEN, cursor)
            if opened < 0:
                pieces.append(raw[cursor:])
                break
            if start + opened + len(_OPEN) > last_close:  # never closed
                before = "".join(pieces) + raw[cursor:opened]
                if len(before) <= 3 and not before.strip(" "):
                    return  # it starts the line: an HTML block that hides the rest of the text
                pieces.append(raw[cursor:])  # in the middle of a line it is plain text
                break
            pieces.append(raw[cursor:opened])
            end = raw.find(_CLOSE, opened + len(_OPEN))
            if end < 0:
                in_comment = True  # closed on a later line
                break
            cursor = end + len(_CLOSE)
        if in_comment:
            continue  # the line goes on after the comment closes, on a later line
        line, fence = _classify("".join(pieces))
        pieces = []
        yield line


def command_lines(body: str | None) -> Iterator[str]:
    """The stripped lines of a comment that a reader sees as lines of text of their own: outside
    fenced code, `>` quotes, HTML comments, headings and indented code. The command grammar is "a
    line that is exactly the command word"; callers check that the word occurs at all first."""
    for line in scan(body or ""):
        if line.kind == TEXT:
            yield line.text.strip()
