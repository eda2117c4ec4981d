"""Small pieces of the step summary that finish a thought (issue 40): the text of the comment beside its template's
name, what a model cost as a small table (the same numbers as the log's line), and what a re-triage leaves as it
is (it only adds labels; a person removes a wrong one).

The comment's text is the rendered template (configuration, with the reporter's login, which GitHub limits to
letters, digits and hyphens): shown as GitHub will show it, quoted, with its hidden marker left out; `<` is written
as `&lt;` so that no template can open or close the summary's own HTML (a `</details>`).

May import: the standard library, `triage.action.report` (escaping), and inside functions `triage.llm.pricing`,
`triage.core.vocab`.
"""
from __future__ import annotations

import html
import re

from triage.action.report import md_escape, safe_text

_MARKER = re.compile(r"\s*<!-- ptd-triage:[A-Za-z0-9_-]+ -->\s*")
COMMENT_LINES = 40  # a longer template is cut here, saying so (the step summary is for reading, not archiving)


def code(text: str) -> str:
    """A name as inline code (see triage.action.summary.code)."""
    return "`" + safe_text(text).replace("`", "'").replace("|", "\\|") + "`"


def comment_text(template: str, body: str, *, posted: bool, where: str = "") -> list[str]:
    """A collapsed block with the comment's text, headed by its template's name (`where`: on which issue)."""
    text = _MARKER.sub("\n", safe_text(body)).strip().replace("<", "&lt;")
    lines = text.splitlines()
    cut = len(lines) > COMMENT_LINES
    lines = lines[:COMMENT_LINES] + (["…"] if cut else [])
    verb = "posted" if posted else "it would post"
    # Raw HTML: GitHub renders no markdown inside <summary>, so the name is <code>, escaped as HTML.
    head = f"The comment {verb}: <code>{html.escape(safe_text(template))}</code>" + (
        f" ({html.escape(where)})" if where else "")
    quoted = [f"> {line}" if line.strip() else ">" for line in lines]
    return [f"<details><summary>{head}</summary>", "", *quoted, "", "</details>", ""]


def comment_texts(commented, dry_run: bool) -> list[str]:
    """A sweep's comments: each template's text once (as on the first issue that gets it: only the reporter's login
    differs between two)."""
    lines, seen = [], set()
    for r in commented:
        if r.comment_posted not in seen and r.plan is not None and r.plan.comment is not None:
            seen.add(r.comment_posted)
            lines += comment_text(r.comment_posted, r.plan.comment.body, posted=not dry_run, where=f"on #{r.number}")
    return lines


def says(result) -> str:
    """What the comment tells the reporter, from the flow that posts it (the procedure has two comments)."""
    from triage.core.vocab import Outcome

    if result.plan is not None and result.plan.outcome == Outcome.NOT_IN_QUEUE:
        words = result.words
        return f"that it looks {words.not_in_queue if words else 'not in this queue'}; a maintainer moves it"
    return "asks the reporter for a reproduction"


def _number(value) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def usage_table(usage: dict) -> list[str]:
    """One issue's model usage as a table: the calls the provider received (retries included, as the run's line
    counts them), the tokens, the estimated cost and the time; and the fallback, when the model's plan was not used."""
    from triage.llm.pricing import format_usd

    model = " ".join(str(usage.get(k) or "") for k in ("provider", "model")).strip() or "model"
    cost = format_usd(usage["cost_usd"]) if usage.get("cost_usd") is not None else "no estimate"
    seconds = usage.get("latency_ms")
    took = f"{seconds / 1000:.1f} s" if isinstance(seconds, (int, float)) else "-"
    lines = ["| Model | Calls | Input tokens | of them cached | written to the cache | Output tokens | Cost | Time |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |",
             f"| {code(model)} | {_number(usage.get('calls'))} | {_number(usage.get('input_tokens'))} | "
             f"{_number(usage.get('cached_input_tokens', 0))} | {_number(usage.get('cache_write_tokens', 0))} | "
             f"{_number(usage.get('output_tokens'))} | {cost} | {took} |", ""]
    if usage.get("fallback"):
        lines += [f"The model's plan was not used (the rubric's stands): {md_escape(str(usage['fallback']))}", ""]
    return lines


def retriage_line(result, *, dry_run: bool) -> str:
    """What a re-triage does not do: it only adds labels. The labels of a team, a module or a type the issue keeps
    (the plan does not name them) are named, with what a person does about one that is wrong."""
    kept = tuple(getattr(result, "kept", ()) or ())
    said = "**A re-triage only adds labels**: it never removes one"
    if not kept:
        return said + "."
    named = ", ".join(code(label) for label in kept)
    verb = "would keep" if dry_run else "keeps"
    return (f"{said}, so the issue {verb} {named}, which this plan does not name. If one is wrong, a person "
            "removes it by hand, then adds the right one or asks for a re-triage again.")
