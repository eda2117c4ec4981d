"""The step summary as GitHub shows it: markdown rendered to HTML with markdown-it-py (CommonMark, the GFM table
extension, raw HTML allowed as GitHub's sanitizer allows <details>), then read back as a flat list of blocks.

Used by tests/test_step_summary.py to check the structure a person sees, and by
scripts/render_summary_pictures.py to take the README's pictures of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from markdown_it import MarkdownIt


def to_html(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


@dataclass
class Block:
    tag: str  # h2, h3, h4, p, table, li, blockquote, details (its text: its <summary>'s)
    text: str = ""
    header: list[str] = field(default_factory=list)  # a table's header cells
    rows: list[list[str]] = field(default_factory=list)  # a table's body rows, as cell texts


class _Reader(HTMLParser):
    HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6", "p", "li"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.tags: list[str] = []  # every start tag, in order (a hostile title must add none)
        self._text: list[str] | None = None
        self._table: Block | None = None
        self._cell: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self._table = Block("table")
        elif tag == "thead":
            self._in_head = True
        elif tag == "tbody":
            self._in_head = False
        elif tag == "tr" and self._table is not None and not self._in_head:
            self._table.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []
        elif tag in self.HEADINGS and self._table is None:
            self._text = []
        elif tag == "details":
            self.blocks.append(Block("details"))
        elif tag == "summary" and self.blocks and self.blocks[-1].tag == "details":
            self._summary: list[str] | None = []

    def handle_endtag(self, tag):
        if tag == "summary" and getattr(self, "_summary", None) is not None:
            self.blocks[-1].text = " ".join("".join(self._summary).split())
            self._summary = None
        elif tag == "table" and self._table is not None:
            self.blocks.append(self._table)
            self._table = None
        elif tag in ("th", "td") and self._cell is not None and self._table is not None:
            text = " ".join("".join(self._cell).split())
            (self._table.header if self._in_head else self._table.rows[-1]).append(text)
            self._cell = None
        elif tag in self.HEADINGS and self._text is not None and self._table is None:
            self.blocks.append(Block(tag, " ".join("".join(self._text).split())))
            self._text = None

    def handle_data(self, data):
        if getattr(self, "_summary", None) is not None:
            self._summary.append(data)
        elif self._cell is not None:
            self._cell.append(data)
        elif self._text is not None:
            self._text.append(data)


def read(markdown: str) -> tuple[list[Block], list[str]]:
    """(the blocks in order, every HTML start tag in order)."""
    reader = _Reader()
    reader.feed(to_html(markdown))
    reader.close()
    return reader.blocks, reader.tags
