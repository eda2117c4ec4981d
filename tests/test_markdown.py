"""The one markdown scanner: what a reader sees as code, quote, heading, hidden or a line of text.

Both the located text and the `/ptd-retriage` grammar read issue text through it, so each rule here is
checked on the typed lines and, where it matters for the command, on `command_lines`.
"""

from __future__ import annotations

import time

import pytest

from triage.text.markdown import CODE, FENCE_CLOSE, FENCE_OPEN, HEADING, INDENTED, QUOTE, TEXT, command_lines, scan


def kinds(text: str) -> list[tuple[str, str]]:
    return [(line.kind, line.text) for line in scan(text)]


def test_a_fence_closes_only_with_the_same_character_at_least_as_long():
    text = "````\n```\n~~~~\ninside\n`````\nafter"
    assert kinds(text) == [
        (FENCE_OPEN, "````"), (CODE, "```"), (CODE, "~~~~"), (CODE, "inside"), (FENCE_CLOSE, "`````"), (TEXT, "after"),
    ]


def test_a_closing_fence_has_nothing_after_it_and_at_most_three_spaces_before():
    text = "```\n```python\n    ```\n   ```  \nafter"
    assert kinds(text) == [
        (FENCE_OPEN, "```"), (CODE, "```python"), (CODE, "    ```"), (FENCE_CLOSE, "   ```  "), (TEXT, "after"),
    ]


def test_a_backtick_line_with_a_backtick_in_its_info_string_is_inline_code_not_a_fence():
    # GitHub shows "```x.py``` is defined as follows" as inline code: the script after it is the fenced block.
    text = "```x.py``` is defined as follows\n```\nimport torch\n```"
    assert kinds(text) == [
        (TEXT, "```x.py``` is defined as follows"), (FENCE_OPEN, "```"), (CODE, "import torch"), (FENCE_CLOSE, "```"),
    ]
    assert [k for k, _ in kinds("~~~ info with ` backtick\ncode\n~~~")] == [FENCE_OPEN, CODE, FENCE_CLOSE]


def test_an_unclosed_fence_runs_to_the_end():
    assert kinds("```\na\n\nb") == [(FENCE_OPEN, "```"), (CODE, "a"), (CODE, ""), (CODE, "b")]


def test_four_columns_of_indentation_is_not_a_fence_heading_or_quote():
    for line in ("    ```", "\t```", "    # title", "    > quoted", "  \t/ptd-retriage"):
        assert kinds(line) == [(INDENTED, line)]


def test_headings_quotes_and_blank_lines():
    assert list(scan("# Title #")) == [(HEADING, "# Title #", "Title")]
    assert list(scan("### C#")) == [(HEADING, "### C#", "C#")]  # a closing sequence needs a space before it
    assert list(scan("#")) == [(HEADING, "#", "")]
    assert kinds("#hashtag\n####### seven") == [(TEXT, "#hashtag"), (TEXT, "####### seven")]
    assert kinds("> q\n   >q\n\n") == [(QUOTE, "> q"), (QUOTE, "   >q"), (TEXT, ""), (TEXT, "")]


def test_crlf_line_ends():
    assert kinds("a\r\n```\r\nb\r\n```\r\n") == [(TEXT, "a"), (FENCE_OPEN, "```"), (CODE, "b"), (FENCE_CLOSE, "```"), (TEXT, "")]


def test_html_comments_are_hidden_and_the_text_around_them_joins():
    assert kinds("a <!-- x --> b <!-- y --> c") == [(TEXT, "a  b  c")]
    assert kinds("before <!--\nhidden\n```\nstill hidden\n--> after\nnext") == [(TEXT, "before  after"), (TEXT, "next")]
    # what is left after the comment is read as a line of its own kind
    assert kinds("<!--\nx\n--># Versions") == [(HEADING, "# Versions")]


def test_an_unclosed_comment_that_starts_a_line_hides_the_rest_and_one_mid_line_is_text():
    assert kinds("seen\n  <!-- never closed\n/ptd-retriage\n```") == [(TEXT, "seen")]
    assert kinds("seen <!-- not a comment\nalso seen") == [(TEXT, "seen <!-- not a comment"), (TEXT, "also seen")]
    assert kinds("    <!-- indented: code, shown") == [(INDENTED, "    <!-- indented: code, shown")]


def test_inside_a_fence_a_comment_is_code():
    assert kinds("```\n<!-- kept -->\n```") == [(FENCE_OPEN, "```"), (CODE, "<!-- kept -->"), (FENCE_CLOSE, "```")]
    # and a `-->` in code does not close a comment opened before the fence
    assert kinds("<!--\n```\n-->\nshown") == [(TEXT, ""), (TEXT, "shown")]


@pytest.mark.parametrize(
    "body, lines",
    [
        ("Thanks!\r\n/ptd-retriage  \r\n", ["Thanks!", "/ptd-retriage", ""]),
        ("```\n/ptd-retriage\n```\nafter", ["after"]),
        ("> /ptd-retriage\n# /ptd-retriage\n    /ptd-retriage", []),
        ("<!-- /ptd-retriage -->\nx", ["", "x"]),
        ("/ptd-retriage <!-- why -->", ["/ptd-retriage"]),
        ("<!--\n/ptd-retriage", []),
        (None, [""]),  # like "".split("\n"): one empty line
    ],
)
def test_command_lines(body, lines):
    assert list(command_lines(body)) == lines


@pytest.mark.parametrize(
    "name, text",
    [
        ("<!-- at a line start", "<!--" * 16_384),
        ("<!-- mid-line", "x" + "<!--" * 16_384),
        ("<!-- on every line", "x <!--\n" * 9_000),
        ("<!-- and --> alternating", "<!-- -->" * 8_192),
        ("fence lines", "```\n" * 16_384),
        ("newlines", "\n" * 65_536),
        ("one long line", "x" * 65_536),
        ("spaces then a heading mark", " " * 65_000 + "#"),
        ("backticks", "`" * 65_536),
    ],
)
def test_scanning_64kb_of_any_construct_is_quick(name, text):
    started = time.perf_counter()
    for _ in scan(text):
        pass
    list(command_lines(text))
    elapsed = time.perf_counter() - started
    assert elapsed < 0.5, f"{name}: {elapsed:.3f} s"
