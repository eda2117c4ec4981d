"""Shadow's report as a person reads it: a table on a terminal, Markdown for a file and the Action's step summary.

Both render the document `triage.evaluation.shadow_steps.shadow_document` makes; nothing is counted here. Titles,
reasons and labels come from issues and planners: hostile text. In Markdown each is one line, escaped the way the
step summary escapes (`triage.action.report.md_escape`, which this layer cannot import), so it renders as text and
never breaks a table. The Markdown is capped (`cap` bytes): over it, the long lists (disagreements, what the bot
would have written) are cut, each cut saying how many rows it left out and where they all are.

May import: the standard library.
"""

from __future__ import annotations

import re
from typing import Any

STEP_NAMES = {"routing": "routing (sub-oncall)", "modules": "modules", "type": "type (feature / enhancement)",
              "flag": "high priority: a person's label vs the bot's hold", "reproduction": "reproduction requests"}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
TITLE_CHARS = 80
REASON_CHARS = 300


def md_escape(text: Any) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split())).replace("&", "&amp;")


def _cut(text: Any, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _rate(step: dict) -> str:
    return "n/a" if step["rate"] is None else f"{step['rate']:.3f}"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return str(value)


def _wrote(item: dict) -> str:
    parts = [f"+{name}" for name in item["labels"]]
    if item["comment"]:
        parts.append(f"comment {item['comment']}")
    return ", ".join(parts) or "nothing"


def headline(doc: dict) -> list[str]:
    lines = [f"{doc['issues']} issues entered the queue between {doc['since']} and {doc['until']}: "
             f"{doc['triaged_by_people']} triaged by people, {doc['not_yet_triaged']} not yet triaged by people "
             "(planned, not compared)",
             f"the search found {doc['found']}; {doc['outside_window']} of those read entered the queue outside the "
             f"window; {doc['from_cache']} read from the cache; API requests: {doc['requests']}"]
    if doc["stopped"]:
        lines.append(f"stopped early, {doc['left']} issue(s) not read: {doc['stopped']} (re-run with the same "
                     "--cache to read the rest)")
    return lines


def render_text(doc: dict) -> str:
    """The terminal report."""
    out = [f"ptd-triage shadow: {doc['repo']} (planner {doc['planner']})", *headline(doc), ""]
    out.append(f"  {'step':<52}{'agree':>7}{'total':>7}{'rate':>8}")
    for name, step in doc["steps"].items():
        out.append(f"  {STEP_NAMES[name]:<52}{step['agree']:>7}{step['total']:>7}{_rate(step):>8}")
    modules = doc["steps"]["modules"]
    out.append(f"  module labels: precision {_num(modules['precision'])}, recall {_num(modules['recall'])} "
               f"(tp {modules['tp']}, fp {modules['fp']}, fn {modules['fn']})")
    out += ["", "Routing, people (rows) x bot (columns):"]
    routing = doc["steps"]["routing"]
    width = max(len(c) for c in routing["columns"]) + 2
    out.append("  " + "".ljust(16) + "".join(c.rjust(width) for c in routing["columns"]))
    for route, row in routing["confusion"].items():
        out.append("  " + route.ljust(16) + "".join(str(row[c]).rjust(width) for c in routing["columns"]))
    out += ["", f"Disagreements ({len(doc['disagreements'])}):"]
    for item in doc["disagreements"]:
        out.append(f"- {item['id']}  {_cut(item['title'], TITLE_CHARS)}  {item['url']}")
        for step, pair in item["steps"].items():
            out.append(f"    {step}: bot {_value(pair['bot'])}; people {_value(pair['people'])}")
        out.append(f"    the bot would add: {_wrote(item['bot'])}; people's labels: {_value(item['people'])}")
        out.extend(f"      - {_cut(reason, REASON_CHARS)}" for reason in item["bot"]["reasons"])
    would = doc["would_write"]
    out += ["", f"The bot would have written {would['labels']} labels and {would['comments']} comments on "
                f"{len(would['issues'])} issues:"]
    out.extend(f"  {item['id']}: {_wrote(item)}" for item in would["issues"])
    out += ["", "Not rebuilt:"] + [f"  - {note}" for note in doc["cannot_rebuild"]]
    return "\n".join(out) + "\n"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _link(item: dict) -> str:
    number = item["id"].rsplit("#", 1)[-1]
    return f"[#{number}]({item['url']})" if item["url"] else md_escape(item["id"])


def _disagreement_row(item: dict) -> str:
    steps = "<br>".join(f"{md_escape(step)}: bot {md_escape(_value(p['bot']))}, people {md_escape(_value(p['people']))}"
                        for step, p in item["steps"].items())
    reasons = "<br>".join(md_escape(_cut(r, REASON_CHARS)) for r in item["bot"]["reasons"][:6])
    return (f"| {_link(item)} {md_escape(_cut(item['title'], TITLE_CHARS))} | {steps} | "
            f"{md_escape(_wrote(item['bot']))} | {md_escape(_value(item['people']))} | {reasons} |")


def _would_row(item: dict) -> str:
    who = "" if item["triaged_by_people"] else " (not yet triaged by people)"
    return f"| {_link(item)} {md_escape(_cut(item['title'], TITLE_CHARS))}{who} | {md_escape(_wrote(item))} |"


def render_markdown(doc: dict, *, cap: int | None = None, rest_in: str = "") -> str:
    """The Markdown report; at most `cap` bytes (UTF-8), its lists cut first (`rest_in` names the whole report)."""
    head = [f"## ptd-triage shadow: {md_escape(doc['repo'])}, nothing written", "",
            *[f"- {md_escape(line)}" for line in headline(doc)], f"- planner: {md_escape(doc['planner'])}", "",
            "| step | agree | total | rate |", "| --- | ---: | ---: | ---: |"]
    head += [f"| {md_escape(STEP_NAMES[name])} | {s['agree']} | {s['total']} | {_rate(s)} |"
             for name, s in doc["steps"].items()]
    modules, routing = doc["steps"]["modules"], doc["steps"]["routing"]
    head += ["", f"Module labels: precision {_num(modules['precision'])}, recall {_num(modules['recall'])}.", "",
             "Routing, people (rows) x bot (columns):", "",
             "| people \\\\ bot | " + " | ".join(map(md_escape, routing["columns"])) + " |",
             "| --- |" + " ---: |" * len(routing["columns"])]
    head += [f"| {md_escape(route)} | " + " | ".join(str(row[c]) for c in routing["columns"]) + " |"
             for route, row in routing["confusion"].items()]
    would = doc["would_write"]
    sections = [
        (f"### Disagreements ({len(doc['disagreements'])})",
         "| issue | step: bot, people | the bot would add | people's labels | the bot's reasons |\n"
         "| --- | --- | --- | --- | --- |", [_disagreement_row(item) for item in doc["disagreements"]]),
        (f"### What the bot would have written: {would['labels']} labels, {would['comments']} comments",
         "| issue | labels and comment |\n| --- | --- |", [_would_row(item) for item in would["issues"]]),
    ]
    tail = ["", "### Not rebuilt", "", *[f"- {md_escape(note)}" for note in doc["cannot_rebuild"]], ""]
    return _assemble(head, sections, tail, cap, rest_in)


def _assemble(head: list[str], sections, tail: list[str], cap: int | None, rest_in: str) -> str:
    """Head, sections and tail; under a cap each section's rows share what the rest leaves, equally."""
    fixed = "\n".join(head + tail) + "\n"
    share = None if cap is None else max(cap - _size(fixed) - 1024 * (1 + len(sections)), 0) // len(sections)
    parts = ["\n".join(head)]
    for title, table_head, rows in sections:
        parts += ["", title, ""]
        if not rows:
            parts.append("None.")
            continue
        kept: list[str] = []
        used = 0
        for row in rows:
            if share is not None and used + _size(row) + 1 > share:
                break
            kept.append(row)
            used += _size(row) + 1
        parts += [table_head, *kept]
        if len(kept) < len(rows):
            where = f"; every row is in {rest_in}" if rest_in else ""
            parts += ["", f"_{len(rows) - len(kept)} more rows left out to stay under GitHub's step summary limit"
                          f"{md_escape(where)}._"]
    return "\n".join(parts + tail) + "\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "replace"))
