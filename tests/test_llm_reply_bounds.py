"""A model's reply text is parsed in time linear in its size (issue 18: "nothing a model can stall"). The reply's
fence (```json ... ```) was stripped with a regex that has `\\s*` on both sides of `(.*)`: on a reply of many
newlines it backtracked cubically (10,000 newlines did not finish in 10 minutes), and parsing runs after the
call's deadline, where nothing can stop it. Now string operations; the old pattern is kept here as the oracle of
what a fence is, on inputs small enough for it.
"""
from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.llm.common import MAX_REPLY_BYTES, _unfenced, plan_from_text
from triage.llm.errors import LLMError, LLMInvalidReply

OLD_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*)\n\s*```$", re.S)


def _old(text: str) -> str:
    found = OLD_FENCE.match(text)
    return found.group(1).strip() if found else text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="`\n \tjson{}x-", max_size=24))
def test_a_fence_is_what_the_old_pattern_called_a_fence(text):
    text = text.strip()
    assert _unfenced(text) == _old(text)


@pytest.mark.parametrize("text", [
    "```json\n" + "\n" * (MAX_REPLY_BYTES - 20) + "x",
    "```json\n" + "\n" * (MAX_REPLY_BYTES - 20) + "```",
    "```" + " " * (MAX_REPLY_BYTES // 2) + "\n" + "\n" * (MAX_REPLY_BYTES // 3) + "```",
    "```json\n" + "\n \t" * (MAX_REPLY_BYTES // 4) + "{}\n```",
], ids=["newlines-unclosed", "newlines-closed", "spaces-then-newlines", "whitespace-then-object"])
def test_a_hostile_fence_of_the_largest_allowed_size_is_parsed_quickly(text):
    started = time.perf_counter()
    try:
        plan_from_text(text, provider="anthropic")
    except LLMError as exc:
        assert isinstance(exc, LLMInvalidReply)
    # Linear work over 4 MB takes well under a second; the generous limit is for a loaded 2-core machine.
    assert time.perf_counter() - started < 5.0


def test_a_fenced_answer_still_parses():
    assert plan_from_text('```json\n{"a": 1}\n```', provider="p") == {"a": 1}
    assert plan_from_text('  ```\n{"a": 1}\n  ```  ', provider="p") == {"a": 1}
    with pytest.raises(LLMInvalidReply):
        plan_from_text('```json {"a": 1}```', provider="p")
