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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LOCATIONS = ("title", "prose", "code", "frame", "error", "comment", "environment")

_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_FRAME = re.compile(r'^\s*File "[^"]+", line \d+')
_CPP_FRAME = re.compile(r"^\s*(?:frame )?#\d+[:\s]|^\s*\[rank\d+\]:\s*(?:frame )?#\d+")
_ERROR = re.compile(
    r"^\s*(?:\[rank\d+\]:\s*)?(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Warning|Failure|Interrupt)\b:?"
    r"|^\s*(?:Segmentation fault|Aborted|terminate called|RuntimeError|AssertionError)"
    r"|INTERNAL ASSERT FAILED"
)
_COLLECT_ENV = re.compile(r"Collecting environment information|PyTorch version:|Is debug build:|\[pip3?\]|\[conda\]")


@dataclass(frozen=True)
class Document:
    """Text per location."""

    text: dict[str, str]
    folded_text: dict[str, str]  # case-folded copies, for the signals' cheap literal pre-check

    def get(self, location: str) -> str:
        return self.text.get(location, "")

    def folded(self, location: str) -> str:
        return self.folded_text.get(location, "")

    def without(self, fragments: list[str]) -> "Document":
        """The same document with every occurrence of the fragments blanked out."""
        text = dict(self.text)
        for fragment in sorted(set(fragments), key=len, reverse=True):
            if fragment.strip():
                text = {loc: value.replace(fragment, " ") for loc, value in text.items()}
        return Document(text=text, folded_text={k: v.casefold() for k, v in text.items()})


def _classify_line(line: str, default: str) -> str:
    if _FRAME.match(line) or _CPP_FRAME.match(line):
        return "frame"
    if _ERROR.search(line):
        return "error"
    return default


def split_markdown(
    markdown: str,
    *,
    environment_heading: re.Pattern[str],
    comment_separator: re.Pattern[str] | None,
    base: str = "prose",
) -> dict[str, list[str]]:
    """Return the lines of one markdown text, per location."""
    out: dict[str, list[str]] = {loc: [] for loc in LOCATIONS}
    text = _HTML_COMMENT.sub("", markdown.replace("\r\n", "\n"))
    in_env = False
    current = base
    fence: str | None = None
    block: list[str] = []
    for line in text.split("\n"):
        if fence is not None:
            if line.strip().startswith(fence):
                body = "\n".join(block)
                env_block = in_env or bool(_COLLECT_ENV.search(body))
                for code_line in block:
                    target = "environment" if env_block else _classify_line(code_line, "code" if current != "comment" else "comment")
                    out[target].append(code_line)
                fence, block = None, []
            else:
                block.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence, block = opened.group(1)[:3], []
            continue
        if comment_separator is not None and comment_separator.match(line):
            current, in_env = "comment", False
            continue
        heading = _HEADING.match(line)
        if heading:
            in_env = bool(environment_heading.search(heading.group(1)))
            if not in_env:
                out[current].append(heading.group(1))
            continue
        if in_env or _COLLECT_ENV.search(line):
            out["environment"].append(line)
        else:
            out[_classify_line(line, current)].append(line)
    if fence is not None:  # an unclosed fence: still code
        for code_line in block:
            out["environment" if in_env else _classify_line(code_line, "code")].append(code_line)
    return out


def build_document(
    title: str,
    body: str,
    comments: list[str],
    *,
    environment_heading: re.Pattern[str],
    comment_separator: re.Pattern[str] | None = None,
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
    text = {loc: "\n".join(items) for loc, items in lines.items() if items}
    return Document(text=text, folded_text={k: v.casefold() for k, v in text.items()})
