"""Which words of an issue may clear a flag: the quote a model gives for a `no_flag` in `hybrid`.

A flag asks a person to look first, and the model clears the rubric's flag only with a reason from the closed list
and a quote (`triage.core.merge.flag_stands_unless_cleared_for_cause`). Being "words of the issue" is not enough:
anyone can comment, an issue can hold an instruction to the bot, and any one letter ("e") or number ("2") is in
every issue. So the quote that clears a flag must be:
- a phrase: at least MIN_WORDS words (letters, not numbers) and MIN_LETTERS letters, in one piece (a quote may
  leave words out with "..."; every piece is then found in order, and one piece at least is a phrase); in a script
  whose one character is a word or a syllable (Chinese, Japanese, Korean), at least MIN_DENSE of its characters
  instead;
- words the reporter or a maintainer wrote (`triage.core.authors`: the title and description, their comments,
  and nothing a "login · comment · date" excerpt inlines for anyone else), all of it in ONE of their texts;
- and the issue must hold no instruction-like passage anywhere, whoever wrote it (words addressed to the bot or a
  model, the answer's own vocabulary, "ignore the previous instructions", "do not flag this"): the model read it,
  and what it quotes then may be what it was told to quote. Such an issue's flag is not cleared by the model (the
  direction a stranger can push is only towards a person looking).
A quote that fails keeps the rubric's flag, and the plan's reason says which rule it failed.

Cost: one RE2 scan per text for the instruction patterns (linear, `triage.text.patterns`), on text the prompt
already clipped.

May import: the standard library, `triage.config` (types), `triage.core` (authors, snapshot), `triage.text`,
`triage.planners.model.prompt`, `triage.planners.model.schema`.
"""
from __future__ import annotations

import re

from triage.config.bundle import Bundle
from triage.core.authors import reporter
from triage.core.snapshot import IssueSnapshot
from triage.planners.model.schema import DECISIONS, NO_FLAG_REASONS, PARTS
from triage.text.patterns import compile_pattern
from triage.text.speakers import TRUSTED, Speaker, inlined, separator_login

MIN_WORDS = 3
MIN_LETTERS = 10
# Chinese and Japanese put no space between words (a run of their characters is one "word" to `_WORD`), and a
# Korean syllable block is two or three letters of a Latin script: six such characters say about as much as three
# words ("おそらく自分の…", "我们自己的代码", "제 설정 문제였습니다"); one or two ("错", "はい") never do.
MIN_DENSE = 6
_DENSE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W\d_]+")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")
# The answer's own words (its keys and choices, the closed list's reasons: those an issue would not say in passing,
# the ones with an underscore), and words addressed to a bot or a model.
_ANSWER_WORDS = sorted(str(w) for w in {*PARTS.values(), *NO_FLAG_REASONS, "no_flag_reason",
                                   *(w for words in DECISIONS.values() for w in words)} if "_" in w)
# Words addressed to the bot or to a model, not about the bug. Narrow on purpose: an issue about training an LLM, a
# log line or a script says "model", "output", "label" and "flag" all the time; what is matched here is the shape
# of an order to a triager. (A miss costs nothing that the other rules do not cover; a match keeps a flag.)
_INSTRUCTION = compile_pattern(
    r"\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your|my|these|those|of)\s+)*(?:(?:previous|prior|"
    r"above|earlier|preceding|system|original|other)\s+)?(?:instructions?|rules|prompts?|guidelines|directions)\b"
    r"|\b(?:system prompt|system message|developer message)\b|<\|?\s*/?\s*(?:system|im_start|im_end|instructions?)"
    r"\s*\|?>|\[/?(?:system|inst)\]"
    r"|\bas an? (?:ai|assistant|language model|llm|triager|triage bot|bot)\b"
    r"|\b(?:you are|you're) (?:an?|the|now)\b[^\n]{0,30}\b(?:ai|assistant|model|bot|triager|classifier)\b"
    r"|\b(?:dear|hey|hello|hi|attention),?\s+(?:triage\s+)?(?:bot|triager|model|ai|assistant|llm)\b"
    r"|\b(?:respond|reply|answer)\b[^\n]{0,40}\b(?:json|no.?flag|schema)\b"
    r"|\b(?:do not|don'?t|never|must not)\s+(?:flag|escalate|label|mark|prioriti[sz]e)\b"
    r"|\b(?:remove|clear|drop|unset|lower|lift)\s+(?:the\s+|this\s+|its\s+|any\s+)?(?:high.priority|triage review"
    r"|priority|hold)\b"
    r"|\b(?:mark|label|classify)\s+(?:this|it|the issue)\s+as\b"
    r"|\b(?:" + "|".join(re.escape(w) for w in _ANSWER_WORDS) + r")\b",
    case_sensitive=False)


def instruction_like(text: str) -> bool:
    """Whether the text holds a passage addressed to a bot or a model, or the answer's own vocabulary."""
    return _INSTRUCTION.search(text) is not None


def is_phrase(text: str) -> bool:
    words = _WORD.findall(text)
    if len(words) >= MIN_WORDS and sum(len(w) for w in words) >= MIN_LETTERS:
        return True
    return len(_DENSE.findall(text)) >= MIN_DENSE


def _segments(text: str, speaker: Speaker, separator) -> list[tuple[Speaker, str]]:
    """A text cut at its "login · comment · date" lines, each part with who said it (`triage.text.speakers`)."""
    if separator is None:
        return [(speaker, text)]
    out: list[tuple[Speaker, list[str]]] = [(speaker, [])]
    for line in text.split("\n"):
        found = separator.regex.match(line.encode("utf-8", "replace"))
        if found is not None:
            out.append((inlined(speaker, separator_login(line, found)), []))
        else:
            out[-1][1].append(line)
    return [(who, "\n".join(lines)) for who, lines in out]


def clearing_texts(issue: dict, snapshot: IssueSnapshot, bundle: Bundle, normal) -> tuple[str, ...] | None:
    """The texts, as the model was shown them (`issue`, from `prompt.issue_text`) and normalised (`normal`), that a
    clearing quote may come from: the reporter's and maintainers'. None when any text of the issue, whoever wrote
    it, holds an instruction-like passage: the model read it, and whatever it then quotes may be what it was told
    to quote, so no quote clears that issue's flag (a person looks)."""
    separator = bundle.rubric.comment_separator
    author = reporter(snapshot)
    sources = [(author, issue["title"]), *_segments(issue["body"], author, separator)]
    for shown in issue["comments"]:
        # The comment's own speaker: `inlined` keeps it for its own login and makes any other login `other`.
        who = Speaker(shown.role or "", f"#comment{len(sources)}")
        sources += _segments(shown.text, who, separator)
    if any(instruction_like(text) for _, text in sources):
        return None
    return tuple(normal(text) for who, text in sources if who.role in TRUSTED and text.strip())


def quote_problem(quote: str, texts: tuple[str, ...] | None, normal) -> str | None:
    """Why the quote cannot clear a flag (None when it can; see the module docstring).

    `texts`: `clearing_texts`."""
    if texts is None:
        return "the issue holds words addressed to the bot, so no quote clears its flag"
    pieces = [p for p in (normal(part) for part in _ELLIPSIS.split(quote or "")) if p]
    if not any(is_phrase(piece) for piece in pieces):
        return f"the quote is not a phrase (at least {MIN_WORDS} words)"
    for text in texts:
        at = 0
        for piece in pieces:
            at = text.find(piece, at)
            if at < 0:
                break
            at += len(piece)
        else:
            return None
    return "the quote is not words the reporter or a maintainer wrote (outside any instruction to the bot)"


__all__ = ["MIN_LETTERS", "MIN_WORDS", "clearing_texts", "instruction_like", "is_phrase", "quote_problem"]
