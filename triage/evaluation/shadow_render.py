"""Shadow's report as a person reads it on a terminal, and the pieces its Markdown (`shadow_markdown`) shares.

Both render the document `triage.evaluation.shadow_steps.shadow_document` makes; nothing is counted here. The
first screen answers "can we go live, and if not what do we change": the headline (what was read, which planner
decided, a model's fallbacks, what was skipped), the verdict per step with its precision, recall and counts, the
labels the bot would add against how often people give them (with the line that disables one people never use),
and step 5's threshold table. Then the evidence: the confusions, and the disagreements step by step in plain words
(a screen each at most; every one is in the JSON). Titles, reasons and labels come from issues and planners:
hostile text, printed on one line each (Markdown escapes them).

May import: the standard library.
"""

from __future__ import annotations

from typing import Any

STEP_NAMES = {"routing": "routing (sub-oncall)", "modules": "modules", "type": "type (feature / enhancement)",
              "flag": "high priority: a person's label vs the bot's hold", "reproduction": "reproduction requests"}
SHORT_NAMES = {"routing": "routing", "modules": "modules", "type": "type", "flag": "high priority",
               "reproduction": "reproduction"}
TITLE_CHARS = 80
REASON_CHARS = 300
PER_STEP = 6  # disagreements shown per step; the JSON has them all
LABEL_ROWS = 7  # the labels shown; the JSON has them all
BUDGET = "LLMBudgetExhausted"  # a model's fallback for its call budget (a limit the user set), not a failure


def cut(text: Any, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def counts(step: dict) -> str:
    return f"{step['caught']} / {step['missed']} / {step['extra']}"


def wrote(item: dict) -> str:
    parts = [f"+{name}" for name in item["labels"]]
    if item["comment"]:
        parts.append(f"comment {item['comment']}")
    return ", ".join(parts) or "nothing"


def decided_by(doc: dict) -> str:
    """Which planner decided, in one line: the model's fallbacks said first."""
    p = doc.get("planners") or {}
    asked = doc["planner"]
    deciders = {by for counts in (p.get("by_step") or {}).values() for by in counts}
    if p.get("fallbacks"):
        reasons = p.get("fallback_reasons") or [{"reason": "?"}]
        what = "failed" if p.get("failed") else "was not used (its call budget was spent)"
        return (f"planner {asked}: the model {what} on {p['fallbacks']} of {p['issues']} issues: their plans are "
                f"the rubric's, and are counted as the rubric's ({cut(reasons[0]['reason'], 160)})")
    if asked == "rubric" or deciders <= {"rubric"}:
        return f"planner {asked}: the rubric decided every step"
    return f"planner {asked}: per step, who decided is in the table"


def headline(doc: dict) -> list[str]:
    entered = doc["issues"] + doc.get("opted_out", 0)
    lines = [f"{entered} issues entered the queue between {doc['since']} and {doc['until']}: "
             f"{doc['triaged_by_people']} triaged by people (compared), {doc['not_yet_triaged']} not yet triaged by "
             "people (planned, not compared)" + (f", {doc['opted_out']} opted out by people (left out)"
                                                  if doc.get("opted_out") else ""),
             decided_by(doc),
             f"the search found {doc['found']}; {doc['outside_window']} of those read entered the queue outside the "
             f"window; {doc['from_cache']} read from the cache; API requests: {doc['requests']}"]
    if doc.get("skipped") or doc.get("notes"):
        lines.append(f"{len(doc.get('skipped') or [])} issue(s) skipped and {len(doc.get('notes') or [])} bad "
                     "answer(s) or cache file(s) left out, each named under \"Not read\"")
    if doc["stopped"]:
        lines.append(f"stopped early, {doc['left']} issue(s) not read: {doc['stopped']} (re-run with the same "
                     "--cache to read the rest)")
    return lines


def who(step: dict) -> str:
    """The planners that decided a step, most first: "rubric" or "llm 7, rubric 3"."""
    found = step.get("decided_by") or {}
    if len(found) <= 1:
        return next(iter(found), "rubric")
    return ", ".join(f"{by} {n}" for by, n in found.items())


def shown(items: list[dict], limit: int = PER_STEP) -> list[dict]:
    """A screen of a step's disagreements: taken in turn from the missed, the wrong and the extra ones, so each
    kind shows (the JSON lists them all, in that order)."""
    kinds: dict[str, list[dict]] = {}
    for item in items:
        kinds.setdefault(item["kind"], []).append(item)
    out: list[dict] = []
    while len(out) < min(limit, len(items)):
        for group in kinds.values():
            if group and len(out) < limit:
                out.append(group.pop(0))
    return out


def read_words(item: dict, step: str) -> str:
    if item["because"]:
        return "; ".join(item["because"])
    return "no criterion met" if step == "flag" else "no evidence found"


def label_rows(doc: dict) -> list[dict]:
    return [row for row in doc.get("labels") or () if row["bot_adds"] or row["disabled"]][:LABEL_ROWS]


def label_fix(row: dict, doc: dict) -> tuple[str, str | None]:
    """What to do about a label: (words, the configuration line or None)."""
    if row["disabled"]:
        return "disabled", None
    if not row["rarely_used"]:
        return "", None
    rare = "people never give it" if row["never_used"] else "people almost never give it"
    if row["role"] == "type" and doc.get("lines", {}).get("disable"):
        return rare, doc["lines"]["disable"]
    where = {"module": "Modules", "reproduction": "Reproduction"}.get(row["role"], "the disagreements")
    return f"{rare}; no switch for this role: see {where} below", None


def threshold_note(table: dict) -> str:
    suggested = table.get("suggested")
    if table["people_flagged"] == 0:
        return "people marked no issue high priority in this window: there is no operating point to draw"
    if suggested is None:
        return "no threshold holds any of people's high-priority issues: the rubric's step 5 misses them"
    if suggested == table["threshold"]:
        return f"the current threshold ({suggested:g}) is the best trade of holds caught against extra holds here"
    return f"the best trade of people's holds caught against extra holds here is at {suggested:g}"


def threshold_rows(table: dict) -> list[dict]:
    """The table's rows, consecutive thresholds with the same counts merged into one ("4-6"); the current and the
    suggested threshold are always rows of their own."""
    merged: list[dict] = []
    for row in table["rows"]:
        special = row["current"] or row["threshold"] == table.get("suggested")
        last = merged[-1] if merged else None
        if last and not special and not last["special"] and all(last[k] == row[k] for k in ("caught", "extra")):
            last["to"] = row["threshold"]
            continue
        merged.append({**row, "special": special, "to": None})
    for row in merged:
        row["label"] = f"{row['threshold']:g}" + (f"-{row['to']:g}" if row["to"] is not None else "")
        row["label"] += " (now)" if row["current"] else ""
        row["label"] += " (suggested)" if row["threshold"] == table.get("suggested") and not row["current"] else ""
    return merged


def render_text(doc: dict) -> str:
    """The terminal report."""
    out = [f"ptd-triage shadow: {doc['repo']} (planner {doc['planner']}), nothing written", *headline(doc), "",
           f"Next: {doc['next']}", ""]
    out.append(f"  {'step':<15}{'verdict':<22}{'precision':>10}{'recall':>8}  {'caught/missed/extra':<21}do this")
    for name, step in doc["steps"].items():
        v = doc["verdicts"][name]
        line = "".join(f"; {each}" for each in v["lines"])
        out.append(f"  {SHORT_NAMES[name]:<15}{v['words']:<22}{num(step['precision']):>10}{num(step['recall']):>8}"
                   f"  {counts(step):<21}{v['do']}{line}")
        several = len(step.get("decided_by") or {}) > 1
        out.append(f"  {'':<15}{v['why']}" + (f"; decided by {who(step)}" if several else ""))
    rows = label_rows(doc)
    if rows:
        out += ["", f"Labels the bot would add, over the {doc['triaged_by_people']} issues people triaged "
                    "(the bot / people / both):"]
        width = max(len(row["label"]) for row in rows) + 2
        out += [f"  {row['label']:<{width}}{row['bot_adds']:>4}{row['people_apply']:>4}{row['both']:>4}  "
                f"{': '.join(part for part in label_fix(row, doc) if part)}" for row in rows]
    table = doc["high_priority_table"]
    out += ["", f"High priority: people marked {table['people_flagged']}; threshold now {table['threshold']:g}; "
                f"{threshold_note(table)}", "  threshold        caught  missed  extra"]
    out += [f"  {row['label']:<17}{row['caught']:>6}{row['missed']:>8}{row['extra']:>7}"
            for row in threshold_rows(table)]
    for key in ("threshold", "disable"):
        if doc["lines"].get(key):
            out.append(f"  to change: {doc['lines'][key]}  (or {doc['lines'][key + '_repository']})")
    out += _text_routing(doc) + _text_disagreements(doc)
    would = doc["would_write"]
    out += ["", f"The bot would have written {would['labels']} labels and {would['comments']} comments on "
                f"{len(would['issues'])} issues:"]
    out.extend(f"  {item['id']}: {wrote(item)}" for item in would["issues"])
    out += _text_not_read(doc)
    out += ["", "Not rebuilt:"] + [f"  - {note}" for note in doc["cannot_rebuild"]]
    return "\n".join(out) + "\n"


def _text_routing(doc: dict) -> list[str]:
    routing = doc["steps"]["routing"]
    out = ["", "Routing, people (rows) x bot (columns):"]
    width = max(len(c) for c in routing["columns"]) + 2
    out.append("  " + "".ljust(16) + "".join(c.rjust(width) for c in routing["columns"]))
    for route, row in routing["confusion"].items():
        out.append("  " + route.ljust(16) + "".join(str(row[c]).rjust(width) for c in routing["columns"]))
    for kind in ("routing", "modules"):
        for item in doc["confusions"][kind]:
            pair = (f"people {item['people']}, the bot {item['bot']}" if kind == "routing" else
                    f"people gave {item['people']} (not the bot), the bot added {item['bot']} (not people)")
            out.append(f"  {kind}: {pair}: {item['count']} issue(s); the bot read "
                       f"{'; '.join(item['signals']) or 'no evidence'}")
    return out


def _text_disagreements(doc: dict) -> list[str]:
    out = ["", f"Disagreements by step ({len(doc['disagreements'])} issues):"]
    for step, items in doc["disagreements_by_step"].items():
        if not items:
            continue
        out.append(f"  {STEP_NAMES[step]} ({len(items)}):")
        for item in shown(items):
            out.append(f"  - {item['id']} {cut(item['title'], 60)}: the bot {item['bot']}, people "
                       f"{item['people']}; the bot read {read_words(item, step)}")
        if len(items) > PER_STEP:
            out.append(f"    ... {len(items) - PER_STEP} more in the JSON report (disagreements_by_step.{step})")
    return out


def _text_not_read(doc: dict) -> list[str]:
    skipped, notes = doc.get("skipped") or [], doc.get("notes") or []
    if not skipped and not notes and not doc.get("opted_out"):
        return []
    out = ["", "Not read:"]
    out += [f"  - {item['id']} skipped: {item['why']}" for item in skipped]
    out += [f"  - {note}" for note in notes]
    out += [f"  - {name}: opted out by people (the opt-out label): left out" for name in doc.get("opted_out_issues")
            or ()]
    return out


def run_warnings(document: dict, *, cache: str) -> list[str]:
    """One line per issue skipped and per bad answer or cache file left out, then a stop that was not a failure
    (the budget, --limit) and a model's spent call budget."""
    lines = [f"{item['id']} skipped: {item['why']}" for item in document["skipped"]] + list(document["notes"])
    if document["stopped"] and not document["failed"]:
        lines.append(f"stopped early: {document['stopped']}; {document['left']} issue(s) not read (re-run with the "
                     f"same {cache} to read the rest)")
    planners = document["planners"]
    if planners["fallbacks"] > planners["failed"]:
        spent = planners["fallbacks"] - planners["failed"]
        lines.append(f"the model's call budget was spent: the rubric planned {spent} issue(s) without it, and the "
                     "report counts them as the rubric's")
    return lines


def run_errors(document: dict, *, cache: str) -> list[str]:
    """What makes the run fail (exit 1) although it reported: GitHub failed midway, or the model failed."""
    lines = []
    if document["failed"]:
        lines.append(f"stopped early: {document['failed']}; {document['left']} issue(s) not read (what was read is "
                     f"reported; with {cache}, re-run to go on)")
    planners = document["planners"]
    if planners["failed"]:
        reason = next(r["reason"] for r in planners["fallback_reasons"] if not r["reason"].startswith(BUDGET))
        lines.append(f"the model failed on {planners['failed']} of {planners['issues']} issue(s) ({reason}): their "
                     "plans are the rubric's, and the report counts them as the rubric's")
    return lines
