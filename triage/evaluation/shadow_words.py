"""What a plan read, in plain words, for shadow's report: per step, the strongest pieces of text the decision rests
on, quoted with where they were ("'NCCL' in the title"), and step 5's criteria by name. No rule ids: a maintainer
reading a disagreement wants the words of the issue that moved the bot, not the names of the signals.

Pure. May import: the standard library.
"""

from __future__ import annotations

from typing import Any

WHERE = {"title": "the title", "prose": "the text", "code": "the code", "frame": "a traceback", "error": "the error",
         "comment": "a comment", "environment": "the environment"}
QUOTES = 3  # pieces of evidence quoted per step
QUOTE_CHARS = 48


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "'" + text.replace("'", "’") + "'"


def evidence_words(plan) -> dict[str, list[str]]:
    """Step number (as a string, for JSON) -> up to QUOTES pieces of the evidence that weighed for its decision,
    strongest first, as "'text' in where"."""
    out: dict[str, list[str]] = {}
    for step in getattr(plan, "steps", ()) or ():
        pieces = sorted((e for e in getattr(step, "evidence", ()) or () if e.points > 0), key=lambda e: -e.points)
        words = list(dict.fromkeys(f"{quote(e.text)} in {WHERE.get(e.location, e.location)}" for e in pieces))
        if words:
            out[str(step.step)] = words[:QUOTES]
    return out


def criterion_words(name: str) -> str:
    """A step-5 criterion's name as words: `multinode_hang` -> "multinode hang"."""
    return str(name).replace("_", " ")


def step_words(plan: dict[str, Any], step: int) -> dict[str, Any]:
    """A step's decision as the plan's JSON keeps it: {decision, criteria, score, by}; empty when it did not run."""
    for item in plan.get("steps") or ():
        if item.get("step") == step:
            return item
    return {}
