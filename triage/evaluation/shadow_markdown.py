"""Shadow's report as Markdown: for a file (`--markdown`) and the Action's step summary.

It renders the document `triage.evaluation.shadow_steps.shadow_document` makes, in the order of
`triage.evaluation.shadow_render` (whose pieces it shares): the first screen says what to do, the rest is the
evidence. Titles, reasons and labels come from issues and planners: hostile text. Each is one line, escaped the way
the step summary escapes (`triage.action.report.md_escape`, which this layer cannot import), so it renders as text
and never breaks a table; the comment the bot would post is quoted line by line, escaped too. The Markdown is
capped (`cap` bytes): over it, the long lists (what the bot would have written, what was not read) are cut, each
cut saying how many rows it left out and where they all are.

May import: the standard library, `triage.evaluation.shadow_render`.
"""

from __future__ import annotations

import re
from typing import Any

from triage.evaluation.shadow_render import (PER_STEP, SHORT_NAMES, STEP_NAMES, TITLE_CHARS, counts, cut,
                                             decided_by, headline, label_fix, label_rows, num, read_words, shown,
                                             threshold_note, threshold_rows, who, wrote)

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
COMMENT_LINES = 12  # lines of the bot's comment quoted under a step


def md_escape(text: Any) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split())).replace("&", "&amp;")


def _code(text: Any) -> str:
    """Inline code for a configuration line (the queue's own text, never an issue's): no backtick ends it early,
    no pipe splits a table cell."""
    return "`" + str(text).replace("`", "'").replace("|", "\\|") + "`"


def _link(item: dict) -> str:
    number = item["id"].rsplit("#", 1)[-1]
    return f"[#{number}]({item['url']})" if item["url"] else md_escape(item["id"])


def _verdict_table(doc: dict) -> list[str]:
    several = any(len(s.get("decided_by") or {}) > 1 for s in doc["steps"].values())
    head = "| step | verdict | precision | recall | caught / missed / extra | do this |"
    rows = [head + (" decided by |" if several else ""),
            "| --- | --- | ---: | ---: | :---: | --- |" + (" --- |" if several else "")]
    for name, step in doc["steps"].items():
        v = doc["verdicts"][name]
        do = md_escape(v["do"]) + "".join(f"<br>{_code(line)}" for line in v["lines"])
        rows.append(f"| {SHORT_NAMES[name]} | **{md_escape(v['words'])}**<br>{md_escape(v['why'])} | "
                    f"{num(step['precision'])} | {num(step['recall'])} | {counts(step)} | {do} |"
                    + (f" {md_escape(who(step))} |" if several else ""))
    return rows


def _labels(doc: dict) -> list[str]:
    rows = label_rows(doc)
    if not rows:
        return []
    out = ["", f"#### Labels the bot would add, against your people's ({doc['triaged_by_people']} issues)", "",
           "| label | the bot would add | your people gave | both | to stop the bot adding it |",
           "| --- | ---: | ---: | ---: | --- |"]
    for row in rows:
        words, line = label_fix(row, doc)
        fix = md_escape(words) + (f": {_code(line)}" if line else "")
        out.append(f"| {md_escape(row['label'])} | {row['bot_adds']} | {row['people_apply']} | {row['both']} | "
                   f"{fix} |")
    if doc["lines"].get("disable_repository"):
        out += ["", f"In a repository's own configuration: {_code(doc['lines']['disable_repository'])}."]
    return out


def _threshold(doc: dict) -> list[str]:
    table = doc["high_priority_table"]
    out = ["", f"#### High priority: step 5's threshold on your history (people marked {table['people_flagged']})",
           "", "| threshold | people's caught | missed | extra holds |", "| ---: | ---: | ---: | ---: |"]
    for row in threshold_rows(table):
        cell = f"**{row['label']}**" if row["special"] else row["label"]
        out.append(f"| {cell} | {row['caught']} | {row['missed']} | {row['extra']} |")
    line = doc["lines"].get("threshold")
    out += ["", md_escape(threshold_note(table)) + (f": {_code(line)} (in a repository's configuration "
                                                    f"{_code(doc['lines']['threshold_repository'])})." if line else
                                                    ".")]
    return out


def _first_screen(doc: dict) -> list[str]:
    lines = headline(doc)
    out = [f"## ptd-triage shadow: {md_escape(doc['repo'])}, nothing written", "",
           *[f"- {md_escape(line)}" for line in lines[:1]],
           f"- **{md_escape(decided_by(doc))}**" if (doc.get("planners") or {}).get("fallbacks") else
           f"- {md_escape(decided_by(doc))}", *[f"- {md_escape(line)}" for line in lines[2:]], "",
           f"**Next:** {md_escape(doc['next'])}.", ""]
    out += _verdict_table(doc) + _labels(doc) + _threshold(doc)
    rerun = (f"ptd-triage shadow --repo {doc['repo']} --since {doc['since']} --until {doc['until']} --cache DIR "
             "--config YOUR-QUEUE")
    out += ["", f"After a change, measure again from the cache (it reads no issue again): {_code(rerun)}, or re-run "
                "the shadow workflow with its cache."]
    return out


def _routing(doc: dict) -> list[str]:
    routing = doc["steps"]["routing"]
    out = ["", f"### Routing: {routing['caught']} of {routing['total']} people's routes caught", "",
           "| people \\\\ bot | " + " | ".join(map(md_escape, routing["columns"])) + " |",
           "| --- |" + " ---: |" * len(routing["columns"])]
    out += [f"| {md_escape(route)} | " + " | ".join(str(row[c]) for c in routing["columns"]) + " |"
            for route, row in routing["confusion"].items()]
    for kind in ("routing", "modules"):
        found = doc["confusions"][kind]
        if kind == "modules":
            m = doc["steps"]["modules"]
            out += ["", f"### Modules: precision {num(m['precision'])}, recall {num(m['recall'])} "
                        f"({counts(m)} caught / missed / extra)"]
        if not found:
            continue
        head = ("| routes: people | the bot |" if kind == "routing" else
                "| people gave, the bot did not | the bot added, people did not |")
        out += ["", f"{head} issues | what the bot read |", "| --- | --- | ---: | --- |"]
        out += [f"| {md_escape(g['people'])} | {md_escape(g['bot'])} | {g['count']} | "
                f"{md_escape('; '.join(g['signals']) or 'no evidence')} |" for g in found[:PER_STEP]]
    return out


def _quoted_comment(comment: dict | None) -> list[str]:
    """The comment as it would read: the queue's own template, rendered, quoted with its Markdown (bold, code) but
    without its hidden marker and with any tag shown as text."""
    if not comment:
        return []
    body = _HTML_COMMENT.sub("", str(comment.get("body") or "")).replace("&", "&amp;").replace("<", "&lt;")
    lines = body.strip().splitlines()
    quoted = [f"> {line}" if line.strip() else ">" for line in lines[:COMMENT_LINES]]
    more = ["> …"] if len(lines) > COMMENT_LINES else []
    return ["", f"The comment the bot would post ({md_escape(comment.get('template'))}):", "", *quoted, *more]


def _disagreements(doc: dict) -> list[str]:
    out = ["", f"### Disagreements by step ({len(doc['disagreements'])} issues)"]
    for step, items in doc["disagreements_by_step"].items():
        if not items:
            continue
        out += ["", f"#### {md_escape(STEP_NAMES[step])}: {len(items)}", "",
                "| issue | the bot | people | what the bot read |", "| --- | --- | --- | --- |"]
        for item in shown(items):
            read = read_words(item, step)
            out.append(f"| {_link(item)} {md_escape(cut(item['title'], 60))} | {md_escape(item['bot'])} | "
                       f"{md_escape(item['people'])} | {md_escape(read)} |")
        if len(items) > PER_STEP:
            out += ["", f"_{len(items) - PER_STEP} more in the JSON report (disagreements\\_by\\_step.{step})._"]
        out += _quoted_comment(next((i["comment"] for i in items if i.get("comment")), None))
    return out


def _would_row(item: dict) -> str:
    yet = "" if item["triaged_by_people"] else " (not yet triaged by people)"
    return f"| {_link(item)} {md_escape(cut(item['title'], TITLE_CHARS))}{yet} | {md_escape(wrote(item))} |"


def render_markdown(doc: dict, *, cap: int | None = None, rest_in: str = "") -> str:
    """The Markdown report; at most `cap` bytes (UTF-8), its lists cut first (`rest_in` names the whole report)."""
    head = _first_screen(doc) + _routing(doc) + _disagreements(doc)
    would = doc["would_write"]
    not_read = [f"| {md_escape(i['id'])} | skipped: {md_escape(i['why'])} |" for i in doc.get("skipped") or ()]
    not_read += [f"| | {md_escape(note)} |" for note in doc.get("notes") or ()]
    not_read += [f"| {md_escape(i)} | opted out by people: left out |" for i in doc.get("opted_out_issues") or ()]
    sections = [
        (f"### What the bot would have written: {would['labels']} labels, {would['comments']} comments",
         "| issue | labels and comment |\n| --- | --- |", [_would_row(item) for item in would["issues"]]),
        ("### Not read", "| issue | why |\n| --- | --- |", not_read),
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
