"""The step summary (markdown): what a busy maintainer reads after a run, in the order they act on it.

1. The headline says what kind of run it was; a dry run says so there and in every count ("would triage"), never
   "triaged 20" for a run that wrote nothing.
2. What needs a person comes first, one row per issue with the reason in the queue's words (possibly high priority
   and by which criterion, not in this queue, module unclear, no sub-oncall, the triage failed).
3. Then every issue in one table: outcome, the labels and the comment (template) it got or would get. The queue's
   marker label is named once above the table, not repeated in each row.
4. What the run was (the queue, the search, the budget, the model), then the steps and evidence per issue, folded.

Titles and reasons come from issues and models: hostile text. Each is cut at a word boundary and escaped
(`md_escape`), so a title's pipes, backticks or HTML render as text and never break a table.

Size: GitHub refuses a step summary over 1 MiB (see `triage.action.limits`). The rendering takes a byte budget;
when everything does not fit, sections are filled in the order above and each one cut short says how many rows it
left out and where the whole summary is (a file beside the run, `summary-file`).

May import: the standard library, `triage.action.report` (escaping), `triage.action.limits`,
`triage.action.summary_blocks`, `triage.core.drops`, `triage.core.vocab`, `triage.service.summary` (the counts).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from triage.action.limits import SUMMARY_CAP, nbytes
from triage.action.report import md_escape, safe_text
from triage.action.summary_blocks import (
    code,
    comment_text,
    comment_texts,
    retriage_line,
    says,
    usage_table,
)
from triage.service.summary import Counts, count_gap, sweep_counts

TITLE_CHARS = 70  # a title beyond this is cut at a word boundary, with an ellipsis
REASON_CHARS = 160
_URL = re.compile(r"https://[^\s()<>\[\]\"'`|\\]+")


# ---- small pieces ------------------------------------------------------------------------------------------------


def cut(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters: cut at the last word boundary before it, with an ellipsis."""
    text = " ".join(safe_text(text).split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    if space >= limit // 2:  # a word boundary not too far back; otherwise one very long word is cut inside
        head = head[:space]
    return head.rstrip(" ,;:.-—") + "…"


def issue_link(result, *, title: bool = True) -> str:
    if not result.number:
        return "search"
    url = result.url if isinstance(result.url, str) and _URL.fullmatch(result.url) else ""
    link = f"[#{result.number}]({url})" if url else f"#{result.number}"
    shown = md_escape(cut(result.title, TITLE_CHARS)) if title and result.title else ""
    return f"{link} {shown}" if shown else link


def _outcome(result) -> str:
    return "failed" if result.error else result.outcome


def _labels(result, marker: str = "") -> str:
    labels = [label for label in result.labels_written if label != marker]
    return ", ".join(code(label) for label in labels) or "-"


def _comment(result) -> str:
    return code(result.comment_posted) if result.comment_posted else "-"


def _write_heads(dry_run: bool) -> tuple[str, str]:
    """The headers of the labels and comment columns: what was written, or what a dry run would write."""
    return ("Would add", "Would post") if dry_run else ("Labels added", "Comment posted")


# ---- why a person is needed --------------------------------------------------------------------------------------

HIGH_PRIORITY = "possibly high priority"  # the reasons' kinds, counted in the headline
FAILED = "the triage failed"


def reasons(result) -> list[tuple[str, str]]:
    """(kind, reason) for each reason this issue needs a person, in the queue's words; empty: it does not. Pure:
    from the plan's steps and the policy's drops, which the planners already explain."""
    if result.error:
        return [(FAILED, f"the triage failed: {cut(result.error, REASON_CHARS)}; a re-run completes it")]
    if not result.needs_person:
        return []
    # Here, not at the top: the vocabulary imports the labels' schema (jsonschema), which an ignored event, whose
    # run writes no summary, must not pay for (tests/test_entrypoint_inputs.py).
    from triage.core.drops import DropKind
    from triage.core.vocab import Confidence, Outcome

    plan, words = result.plan, result.words
    team = words.team if words else "team"
    found = []
    if plan.outcome == Outcome.HIGH_PRIORITY:
        found.append((HIGH_PRIORITY, _high_priority(plan.step(5), getattr(result, "criteria", None) or {})))
    if plan.outcome == Outcome.NOT_IN_QUEUE:
        not_in_queue = words.not_in_queue if words else "not in this queue"
        found.append((not_in_queue, f"{not_in_queue}: not in the queue, move it to the right one"))
    step3 = plan.step(3)
    module_unclear = step3 is not None and step3.decision == Confidence.LOW
    if module_unclear:
        found.append(("module unclear", "module unclear: add the module label"))
    # The policy's records, not their wording (triage.core.drops).
    if plan.dropped(DropKind.REVIEW_NO_SUB_ONCALL):
        found.append((f"no {team}", f"no {team} found: choose one"))
    if plan.dropped(DropKind.REVIEW_NO_MODULE) and not module_unclear:
        found.append(("no module label", "no module label: add one"))
    if not found:
        found.append(("to review", "to review: " + cut(plan.explained[-1] if plan.explained else plan.outcome,
                                                       REASON_CHARS)))
    return found


def attention(result) -> str | None:
    """Why this issue needs a person, in one line (None: it does not)."""
    found = reasons(result)
    return "; ".join(text for _, text in found) if found else None


def _criterion(name: str, criteria: dict) -> str:
    """A criterion as the rubric describes it ("a hang affecting multi-node ..."), never its id: what it is, the
    description's words before its first ": " (after it, the description says how to read it)."""
    text = str(criteria.get(name) or name.replace("_", " ")).split(": ", 1)[0].strip().rstrip(".")
    first = text.split(" ", 1)[0]
    return text if len(first) > 1 and first.isupper() else text[:1].lower() + text[1:]  # "NCCL ..." stays


def _high_priority(step5, criteria: dict) -> str:
    """"possibly high priority: <criteria>" from step 5's result (the rubric's or the model's), else its reason."""
    if step5 is not None and step5.criteria:
        said = "; ".join(_criterion(name, criteria) for name in step5.criteria)
        return f"{HIGH_PRIORITY}: {cut(said, REASON_CHARS)}"
    said = re.sub(r"^step 5( \([^)]*\))?: ", "", step5.reason if step5 is not None else "")
    return HIGH_PRIORITY + (f": {cut(said, 80)}" if said else "")


# ---- the counts ----------------------------------------------------------------------------------------------------


def counts_sentence(c: Counts, dry_run: bool) -> str:
    if dry_run:
        return (f"Found {c.found} queue issue(s) to triage: would triage {c.triaged}, {c.failed} failed, "
                f"{c.skipped} skipped, {c.left} left for the next sweep. Nothing was written to GitHub.")
    return (f"Found {c.found} queue issue(s) to triage: triaged {c.triaged}, {c.failed} failed, {c.skipped} "
            f"skipped, {c.left} left for the next sweep.")


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def lead(results, dry_run: bool, sweep=None) -> list[str]:
    """The first lines a person reads: what they must do, what the bot says in public, what a cut-off left out."""
    results = [r for r in results if r.number]
    waiting = [reasons(r) for r in results]
    waiting = [found for found in waiting if found]
    kinds: dict[str, int] = {}
    for found in waiting:
        for kind in dict.fromkeys(kind for kind, _ in found):
            kinds[kind] = kinds.get(kind, 0) + 1
    if waiting and sweep is None:  # one issue: why, in full
        need = f"**{'Would need' if dry_run else 'Needs'} a person**: {md_escape(attention(results[0]) or '')}"
    elif waiting:
        detail = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
        verb = "would need" if dry_run else "needs" if len(waiting) == 1 else "need"
        need = f"**{len(waiting)} of {len(results)} {verb} a person**: {md_escape(detail)}"
    elif sweep is None:
        need = "**No person needed.**"
    else:
        need = "**No issue would need a person.**" if dry_run else "**No issue needs a person.**"
    posted = sum(1 for r in results if r.comment_posted and not r.error)
    if dry_run:
        said = f"**{_plural(posted, 'comment')} would be posted**" if posted else "**No comment would be posted.**"
    else:
        said = (f"**{_plural(posted, 'comment')} {'was' if posted == 1 else 'were'} posted**" if posted
                else "**No comment was posted.**")
    if posted and sweep is not None:
        said += ", listed below"
    elif posted:
        said += f": {code(results[0].comment_posted)}"
    lines = [f"- {need}", f"- {said}"]
    if sweep is None and results and results[0].forced and results[0].plan is not None:
        lines.append(f"- {retriage_line(results[0], dry_run=dry_run)}")
    if sweep is not None and sweep.not_before:
        lines.append(f"- {_cutoff(sweep, dry_run)}")
    return lines + [""]


def _cutoff(sweep, dry_run: bool) -> str:
    n, when = sweep.before_cutoff, md_escape(str(sweep.not_before).removesuffix("T00:00:00Z"))
    if sweep.not_before_mode == "skip":
        return f"**{_plural(n, 'queue issue')} created before {when} {'was' if n == 1 else 'were'} not triaged** " \
               "(not-before)"
    verb = "would get" if dry_run else "got"
    return f"**{_plural(n, 'issue')} created before {when} {verb} labels and no comment** (not-before, labels-only)"


# ---- the document ----------------------------------------------------------------------------------------------


@dataclass
class _Section:
    """A run of rows under a header; cut short when the byte budget runs out."""

    what: str  # "rows of the table", said in the line that counts what was left out
    open: list[str]
    rows: list[str]
    close: list[str] = field(default_factory=list)


def _headline(title: str, dry_run: bool) -> str:
    if dry_run:
        return f"## ptd-triage — dry run, nothing written: {md_escape(title)}"
    return f"## ptd-triage: {md_escape(title)}"


def _team_word(result) -> str:
    words = getattr(result, "words", None)
    team = words.team if words else "team"
    return team[:1].upper() + team[1:]


def issue_block(result, *, level: str = "###", table: bool = True) -> str:
    """One issue: heading, what it got (or would get), and the steps with their evidence."""
    plan = result.plan
    dry = result.dry_run
    lines = [f"{level} {issue_link(result)}: {code(_outcome(result))}" + (" (dry run)" if dry and table else ""), ""]
    if result.forced:
        lines += ["Forced re-triage: a person asked for it.", ""]
    if result.error:
        had = f" (it had planned {code(result.words.outcome(plan.outcome) if result.words else plan.outcome)})" \
            if plan is not None else ""
        lines += [f"**Failed:** {md_escape(result.error)}{had}", ""]
    if result.left:
        lines += [f"Left: {md_escape(result.left)}", ""]
    if plan is None:
        return "\n".join(lines) + "\n"
    why = attention(result)
    if why and not result.error and not table:
        lines += [f"**Needs a person:** {md_escape(why)}", ""]
    modules = ", ".join(code(m) for m in plan.modules) or "-"
    sub = code(plan.sub_oncall) if plan.sub_oncall else "-"
    if table:
        labels_head, comment_head = _write_heads(dry)
        lines += [f"| {_team_word(result)} | Modules | Confidence | {labels_head} | {comment_head} |",
                  "| --- | --- | --- | --- | --- |",
                  f"| {sub} | {modules} | {plan.confidence or '-'} | {_labels(result)} | {_comment(result)} |", ""]
        if result.comment_posted and plan.comment is not None and not result.error:
            lines += comment_text(result.comment_posted, plan.comment.body, posted=not dry)
    else:
        lines += [f"{_team_word(result)} {sub} · modules {modules} · confidence {plan.confidence or '-'}", ""]
    extra = [f"Planner: {code(plan.planner)}"]
    deciders = sorted({getattr(step, "by", plan.planner) for step in plan.steps if not step.skipped})
    if deciders and deciders != ["rubric"]:
        extra.append("Decided by (step: planner): " + md_escape(", ".join(
            f"{step.step}: {getattr(step, 'by', plan.planner)}" for step in plan.steps if not step.skipped)))
    lines += [f"- {item}" for item in extra] + [""]
    if plan.usage:
        lines += ["Model usage:", ""] + usage_table(plan.usage)
    if plan.explained:
        lines += ["Steps and evidence:", ""] + [f"{i}. {md_escape(r)}" for i, r in enumerate(plan.explained, 1)]
    return "\n".join(lines) + "\n"


def summary_markdown(title: str, results, notes=(), *, sweep=None, dry_run: bool | None = None,
                     cap: int | None = SUMMARY_CAP, rest_in: str = "", task: list[str] | None = None,
                     go_live: str = "") -> str:
    """The step summary. `cap`: its size in bytes at most (None: no cap); `rest_in`: where the whole summary is,
    said in each line that counts what a cut section left out. `task`: a maintenance run's report (labels sync),
    markdown lines shown instead of the triage. `go_live`: how this run's workflow writes (triage.action.golive),
    the last line of a dry run's summary."""
    results = list(results)
    if dry_run is None:
        dry_run = bool(sweep.dry_run) if sweep is not None else any(r.dry_run for r in results)
    tail = f"\n### To go live\n\n{go_live[:1].upper() + go_live[1:]}\n" if dry_run and go_live else ""
    return _body(title, results, notes, sweep, dry_run, cap, rest_in, task) + tail


def _body(title: str, results: list, notes, sweep, dry_run: bool, cap: int | None, rest_in: str,
          task: list[str] | None) -> str:
    head = [_headline(title, dry_run), ""]
    about = [_Section("lines about the run", ["### This run", ""], [f"- {md_escape(n)}" for n in notes], [""])]
    if task is not None:
        return _assemble(head + list(task), about, cap, rest_in)
    if sweep is not None or any(r.plan is not None or r.error for r in results):
        head += lead(results, dry_run, sweep)
    if sweep is not None:
        head += _sweep_head(sweep, dry_run)
    if not results:
        if sweep is None or not sweep.found:
            head.append("No issue was triaged.")
        return _assemble(head, about, cap, rest_in)
    if sweep is None:
        return _assemble(head + [issue_block(r) for r in results], about, cap, rest_in)
    sections = _sweep_sections(results, dry_run, sweep.marker)
    return _assemble(head, sections[:-1] + about + sections[-1:], cap, rest_in)


def _sweep_head(sweep, dry_run: bool) -> list[str]:
    lines = [counts_sentence(sweep_counts(sweep), dry_run), ""]
    gap = count_gap(sweep)
    if gap:
        lines += [f"> [!WARNING]\n> {md_escape(gap[0].upper() + gap[1:])}.", ""]
    more = [f"- skipped {count}: {md_escape(why)}" for why, count in sorted(sweep.skipped.items())]
    if sweep.stopped:
        more.append(f"- stopped early: {md_escape(sweep.stopped)}")
    return lines + more + ([""] if more else [])


def _sweep_sections(results, dry_run: bool, marker: str) -> list[_Section]:
    from triage.core.vocab import Outcome

    labels_head, comment_head = _write_heads(dry_run)
    waiting = [(r, attention(r)) for r in results]
    waiting = [(r, why) for r, why in waiting if why]
    flagged = sum(1 for r in results if r.plan is not None and not r.error and r.plan.outcome == Outcome.HIGH_PRIORITY)
    sections = []
    if waiting:
        hold = (f"An issue flagged as {HIGH_PRIORITY} {'would get' if dry_run else 'gets'} the review label and no "
                "marker, so that a sweep leaves it until a person acts." if flagged else "")
        sections.append(_Section(
            "issues that need a person",
            [f"### {'Would need' if dry_run else 'Needs'} a person ({len(waiting)})", ""]
            + ([hold, ""] if hold else [])
            + [f"| Issue | Why | {labels_head} | {comment_head} |", "| --- | --- | --- | --- |"],
            [f"| {issue_link(r)} | {md_escape(why)} | {_labels(r, marker)} | {_comment(r)} |" for r, why in waiting],
            [""]))
    commented = [r for r in results if r.comment_posted and not r.error]
    if commented:
        sections.append(_Section(
            "comments",
            [f"### {'Would post' if dry_run else 'Posted'} ({_plural(len(commented), 'comment')})", "",
             "| Issue | Comment | What it says |", "| --- | --- | --- |"],
            [f"| {issue_link(r)} | {_comment(r)} | {md_escape(says(r))} |" for r in commented],
            [""] + comment_texts(commented, dry_run)))
    marked = sum(1 for r in results if marker and marker in r.labels_written)
    unmarked = f" (not to the {flagged} flagged as {HIGH_PRIORITY})" if flagged else ""
    marker_line = (f"The marker {code(marker)} {'would be added' if dry_run else 'was added'} to {marked} of these"
                   f"{unmarked}; it is left out of the table." if marker else "")
    sections.append(_Section(
        "rows of the table",
        [f"### {'Would triage' if dry_run else 'Triaged'} ({len(results)})", ""]
        + ([marker_line, ""] if marker_line else [])
        + [f"| Issue | Outcome | {labels_head} | {comment_head} |", "| --- | --- | --- | --- |"],
        [f"| {issue_link(r)} | {code(_outcome(r))} | {_labels(r, marker)} | {_comment(r)} |" for r in results],
        [""]))
    sections.append(_Section(
        "issues' steps and evidence",
        ["<details><summary>Steps and evidence per issue</summary>", ""],
        [issue_block(r, level="####", table=False) for r in results],
        ["</details>", ""]))
    return sections


_RESERVE = 2048  # room kept for the closing lines and the "left out" lines of every section


def _assemble(head: list[str], sections: list[_Section], cap: int | None, rest_in: str) -> str:
    parts = ["\n".join(head).rstrip("\n") + "\n"]
    used = nbytes(parts[0])
    for section in sections:
        opening, closing = "\n".join(section.open) + "\n", "\n".join(section.close) + "\n"
        rows, kept = [], 0
        budget = None if cap is None else cap - _RESERVE - used - nbytes(opening) - nbytes(closing)
        for row in section.rows:
            row = row + "\n"
            if budget is not None:
                budget -= nbytes(row)
                if budget < 0:
                    break
            rows.append(row)
            kept += 1
        left_out = len(section.rows) - kept
        if kept:
            text = opening + "".join(rows) + closing
        else:
            text = ""
        if left_out:
            where = f": the whole summary is in {code(rest_in)}" if rest_in else ""
            text += (f"_{left_out} of {len(section.rows)} {section.what} left out here, to stay under GitHub's "
                     f"1 MiB step-summary limit{where}._\n\n")
        parts.append(text)
        used += nbytes(text)
    return "\n".join(p.rstrip("\n") + "\n" for p in parts if p)
