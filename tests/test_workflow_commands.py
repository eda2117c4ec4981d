"""triage.action.workflow_commands against GitHub's documented workflow-command formats.

Two kinds of check:
- the exact lines GitHub's documentation shows (https://docs.github.com/actions/reference/workflow-commands-for-
  github-actions): annotations with and without properties, the escaping table, the GITHUB_OUTPUT heredoc form;
- round trips through parsers that follow the runner's own (actions/runner ActionCommand.TryParseV2 with its
  unescape order, and the heredoc reader that tests/actionrun.py already uses for every end-to-end run): whatever
  text an issue carries comes back unchanged, on one line, without starting another command or setting another
  output.
"""
from __future__ import annotations

import io
import os
import re

import pytest
from actionrun import parse_output_file
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.action.workflow_commands import (
    DELIMITER_PREFIX,
    escape_data,
    escape_property,
    format_command,
    issue_command,
    prepare_key_value_message,
    to_command_value,
)

# ---- the runner's side, as actions/runner implements it ----------------------------------------------------------

# Unescape in the runner's order: CR, LF, then %25 last (so an escaped "%0A" in the text survives).
_DATA_UNESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%25", "%"))
_PROPERTY_UNESCAPES = (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%"))


def _unescape(text: str, table) -> str:
    for escaped, raw in table:
        text = text.replace(escaped, raw)
    return text


def runner_parse(line: str) -> tuple[str, dict[str, str], str] | None:
    """ActionCommand.TryParseV2: `::` + name [space properties] + `::` + data; properties split on `,`, each
    on its first `=`."""
    line = line.lstrip()
    if not line.startswith("::"):
        return None
    end = line.find("::", 2)
    if end < 0:
        return None
    info = line[2:end]
    name, _, props_text = info.partition(" ")
    props = {}
    for item in filter(None, props_text.strip().split(",")):
        key, sep, value = item.partition("=")
        if sep and key and value:
            props[key] = _unescape(value, _PROPERTY_UNESCAPES)
    return name, props, _unescape(line[end + 2:], _DATA_UNESCAPES)


def runner_commands(stdout: str) -> list[tuple[str, dict[str, str], str]]:
    """Every command the runner would see in a step's output (it reads stdout line by line)."""
    # The runner reads lines with .NET's ReadLine: CR, LF or CRLF end a line (not U+2028, unlike splitlines).
    return [cmd for line in re.split(r"\r\n|\r|\n", stdout) if (cmd := runner_parse(line)) is not None]


# ---- the documented lines ----------------------------------------------------------------------------------------


def test_documented_annotation_lines():
    # "::warning file={name},line={line},endLine={endLine},title={title}::{message}"
    assert format_command("warning", {"file": "app.js", "line": 1, "col": 5, "endColumn": 7},
                          "Missing semicolon") == "::warning file=app.js,line=1,col=5,endColumn=7::Missing semicolon"
    assert format_command("error", {}, "Something failed") == "::error::Something failed"
    assert format_command("notice", None, "") == "::notice::"


def test_documented_escapes():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    # ':' and ',' are safe in a message: only the first '::' after the name ends the command info.
    assert escape_data("a::b,c") == "a::b,c"


def test_values_are_converted_like_the_toolkit():
    assert to_command_value(None) == ""
    assert to_command_value("x") == "x"
    assert to_command_value(True) == "true"
    assert to_command_value({"a": [1, None]}) == '{"a": [1, null]}'
    assert format_command("notice", {"line": None, "title": "t"}, 3) == "::notice title=t::3"


def test_issue_command_writes_one_line_to_the_stream():
    out = io.StringIO()
    issue_command("error", {}, "line one\n::add-mask::secret", stream=out)
    assert out.getvalue() == "::error::line one%0A::add-mask::secret" + os.linesep
    assert runner_commands(out.getvalue()) == [("error", {}, "line one\n::add-mask::secret")]


def test_issue_command_defaults_to_stdout(capsys):
    issue_command("warning", {"title": "T"}, "careful")
    assert capsys.readouterr().out == "::warning title=T::careful" + os.linesep


@pytest.mark.parametrize("name", ["", "add mask", "a::b", "x\ny"])
def test_a_bad_command_name_is_refused(name):
    with pytest.raises(ValueError, match="command name"):
        format_command(name, {}, "m")


@pytest.mark.parametrize("key", ["", "a=b", "a,b", "a:b", "a b"])
def test_a_bad_property_name_is_refused(key):
    with pytest.raises(ValueError, match="property name"):
        format_command("error", {key: "v"}, "m")


_TEXT = st.text(alphabet=st.sampled_from(list("%\r\n:,=< aZ0ADC25>`\u00e9\u2028")), max_size=40)
# The runner trims the properties' text, so a space at the end of the last value is lost (for the toolkit's
# output too); property values here carry no white space at all (U+2028 counts as white space there).
_PROPERTY = st.text(alphabet=st.sampled_from(list("%\r\n:,=<aZ0ADC25>`\u00e9")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(message=_TEXT, title=_PROPERTY, file=_PROPERTY)
def test_any_text_round_trips_through_the_runner_on_one_line(message, title, file):
    line = format_command("error", {"title": title, "file": file}, message)
    assert "\n" not in line and "\r" not in line
    parsed = runner_commands(line)
    assert len(parsed) == 1
    name, props, data = parsed[0]
    assert name == "error" and data == message
    # The runner drops a property whose value is empty (its split removes empty entries), exactly as it does
    # for the toolkit's output; every non-empty one comes back unchanged.
    assert props == {k: v for k, v in {"title": title, "file": file}.items() if v}


# ---- GITHUB_OUTPUT entries ---------------------------------------------------------------------------------------


def test_documented_heredoc_form():
    entry = prepare_key_value_message("plan", '{"a": 1}\n{"b": 2}', delimiter="EOF")
    assert entry == f"plan<<EOF{os.linesep}{{\"a\": 1}}\n{{\"b\": 2}}{os.linesep}EOF"
    assert parse_output_file(entry + os.linesep) == {"plan": '{"a": 1}\n{"b": 2}'}


def test_the_delimiter_is_random_and_unguessable():
    first = prepare_key_value_message("k", "v").splitlines()[0]
    second = prepare_key_value_message("k", "v").splitlines()[0]
    assert first != second
    assert re.fullmatch(rf"k<<{DELIMITER_PREFIX}[0-9a-f]{{32}}", first)


def test_a_value_that_contains_the_delimiter_is_never_written():
    with pytest.raises(ValueError, match="contains the heredoc delimiter"):
        prepare_key_value_message("plan", "text\nEOF\nevil=1", delimiter="EOF")


def test_a_random_delimiter_that_occurs_in_the_value_is_drawn_again(monkeypatch):
    import triage.action.workflow_commands as wc

    drawn = iter(["aaaa", "bbbb", "cccc"])
    monkeypatch.setattr(wc.secrets, "token_hex", lambda _n: next(drawn))
    value = f"x {DELIMITER_PREFIX}aaaa y"
    entry = prepare_key_value_message("k", value)
    assert entry.splitlines()[0] == f"k<<{DELIMITER_PREFIX}bbbb"
    assert parse_output_file(entry + "\n") == {"k": value}


def test_the_delimiter_is_refused_when_every_draw_collides(monkeypatch):
    import triage.action.workflow_commands as wc

    monkeypatch.setattr(wc.secrets, "token_hex", lambda _n: "same")
    with pytest.raises(ValueError, match="delimiter"):
        prepare_key_value_message("k", f"{DELIMITER_PREFIX}same")


@pytest.mark.parametrize("key", ["", "a\nb", "a<<b", "a=b"])
def test_a_bad_output_name_is_refused(key):
    with pytest.raises(ValueError, match="output name"):
        prepare_key_value_message(key, "v")


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.text(alphabet=st.sampled_from(list("ab=<\n%:EOF ghadelimiter_")), max_size=60),
                       min_size=1, max_size=4))
def test_any_values_round_trip_and_cannot_set_another_output(values):
    names = [f"out{i}" for i in range(len(values))]
    text = "".join(prepare_key_value_message(n, v) + os.linesep for n, v in zip(names, values))
    # Hostile text such as "evil<<X" or "a=b" lines stays inside its own entry.
    assert parse_output_file(text) == dict(zip(names, values))
