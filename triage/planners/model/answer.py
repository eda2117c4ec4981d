"""The adapter from a model's conforming answer to the procedure's per-step decisions (`Judgement`s), and how the
model's words may appear in a plan (one line, clipped, its quote checked against the issue; a `no_flag`'s quote
also against the rule for the words that may clear a flag, `triage.planners.model.quotes`).

Nothing here sequences steps or merges them with the rubric's: `triage.core.procedure.run` does, with the
planner's merge policy (`triage.core.merge`), for every planner alike.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.model.schema`,
`triage.planners.model.prompt`, `triage.planners.model.quotes`.
"""
from __future__ import annotations

import re
from typing import Any

from triage.config.bundle import Bundle
from triage.core.merge import Judgement
from triage.core.snapshot import IssueSnapshot
from triage.core.vocab import Flag
from triage.planners.model.quotes import clearing_texts, quote_problem
from triage.planners.model.schema import MAX_QUOTE, MAX_REASON, PARTS, no_flag_reason_text

_SPACE = re.compile(r"\s+")
# What a model changes when it copies words: typographic quotes and dashes, markdown emphasis and code marks.
_TYPOGRAPHY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                             "\u2014": "-", "`": " ", "*": " "})
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")


def one_line(text: Any, limit: int) -> str:
    """A model's text as it may appear in a reason: one line, no control characters, clipped."""
    text = _SPACE.sub(" ", "".join(ch for ch in str(text) if ch.isprintable() or ch.isspace())).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def normal(text: str) -> str:
    """Text as quotes are compared: one space for any run of whitespace, lower case, plain quotes and dashes, no
    markdown emphasis or code marks."""
    return _SPACE.sub(" ", text.translate(_TYPOGRAPHY)).strip().lower()


def quote_found(quote: str, text: str) -> bool:
    """Whether the model's `quote` is words of the issue (`text`, already `normal`): each piece between ellipses
    ("..." or "…", where the model left words out) occurs, in order. An empty quote is found nowhere."""
    pieces = [normal(p) for p in _ELLIPSIS.split(quote or "")]
    pieces = [p for p in pieces if p]
    at = 0
    for piece in pieces:
        at = text.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return bool(pieces)


def decisions_from_answer(answer: dict, take: frozenset[int], by: str, text: str) -> dict[int, Judgement]:
    """The judgements of a conforming answer for the steps in `take` (the rubric decides the others). `text` is
    the issue's normalised text (`issue_text_for_quotes`), to check the model's quotes against. A step-5 quote is
    `quoted` only when it may clear a flag (`clearing_problem`)."""
    out: dict[int, Judgement] = {}
    for step in sorted(take & PARTS.keys()):
        part = answer[PARTS[step]]
        quote = one_line(part["quote"], MAX_QUOTE)
        found = quote_found(quote, text) and (step != 5 or clearing_problem(quote, text) is None)
        out[step] = Judgement(str(part["decision"]), said(step, part, by, text), by,
                              labels=tuple(part.get("labels") or ()), performance=bool(part.get("performance")),
                              criteria=tuple(str(c) for c in part.get("criteria") or ()) if step == 5 else (),
                              retraction=no_flag_reason_text(part.get("no_flag_reason")) if step == 5 else "",
                              quoted=found)
    return out


class QuoteText(str):
    """The issue as the model was shown it, normalised; `clearing` holds the texts a flag-clearing quote may come
    from (`triage.planners.model.quotes.clearing_texts`)."""

    clearing: tuple[str, ...] | None = ()


def clearing_problem(quote: str, text: str) -> str | None:
    """Why the quote cannot clear a flag (None when it can): the rule of `triage.planners.model.quotes`, against
    the texts `text` (a `QuoteText`) says may clear one; a plain text says none may."""
    return quote_problem(quote, getattr(text, "clearing", ()), normal)


def said(step: int, part: dict, by: str, text: str) -> str:
    """The model's decision as a plan's reason: one line, clipped, its quote checked against the issue (and, for a
    `no_flag`, against the words that may clear a flag)."""
    reason = one_line(part["reason"], MAX_REASON)
    quote = one_line(part["quote"], MAX_QUOTE)
    words = f"step {step} ({by}): {part['decision']} — {reason}"
    if quote:
        words += f' (quotes "{quote}")'
        if not quote_found(quote, text):
            words += " [quote not found in the issue]"
        elif step == 5 and str(part["decision"]) == Flag.NO_FLAG:
            problem = clearing_problem(quote, text)
            words += f" [{problem}]" if problem else ""
    return words


def issue_text_for_quotes(snapshot: IssueSnapshot, bundle: Bundle) -> QuoteText:
    """The issue as the model was shown it, normalised: a quote is found in it or it is marked as not found."""
    from triage.planners.model.prompt import issue_text

    issue = issue_text(snapshot, bundle.templates.names)
    text = QuoteText(normal(" ".join([issue["title"], issue["body"], *(c.text for c in issue["comments"])])))
    text.clearing = clearing_texts(issue, snapshot, bundle, normal)
    return text


__all__ = ["QuoteText", "clearing_problem", "decisions_from_answer", "issue_text_for_quotes", "normal", "one_line",
           "quote_found", "said"]
