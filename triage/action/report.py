"""What a run tells people: step outputs, the step summary (markdown) and annotations.

Outputs and annotations use the documented workflow-command formats (`triage.action.workflow_commands`).
Everything written is made safe first: text that cannot be encoded (a lone surrogate from an issue) is replaced,
never allowed to fail a run after its labels were written; and every text goes through the run's one scrubber
(`triage.action.redact`): no run of 8 characters of the model's key or the GitHub token leaves the run.

Issue text is hostile: anything in a summary that came from an issue (reasons quote evidence) is escaped so
it renders as text, never as markdown links, images or HTML.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Mapping

from triage.action.redact import Redactor, redactor_from_environ
from triage.action.workflow_commands import issue_command, prepare_key_value_message

OUTPUT_NAMES = ("outcome", "labels-added", "sub-oncall", "modules", "plan", "triaged", "flagged", "failed", "left")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def md_escape(text: str) -> str:
    """Render untrusted text literally inside markdown (one line: newlines become spaces)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split())).replace("&", "&amp;")




def safe_text(text: Any) -> str:
    """Text any stream or file can take: unencodable characters (lone surrogates) become U+FFFD."""
    return str(text).encode("utf-8", "replace").decode("utf-8")


class Reporter:
    """Writes to the runner's files when they exist (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) and to stdout.

    `annotations=False` (the CLI) prints errors and warnings as plain `error: ...` lines on stderr instead of
    workflow commands.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, *, annotations: bool = True,
                 redactor: Redactor | None = None):
        env = os.environ if environ is None else environ
        self.output_path = env.get("GITHUB_OUTPUT") or None
        self.summary_path = env.get("GITHUB_STEP_SUMMARY") or None
        self.annotations = annotations
        self.redactor = redactor if redactor is not None else redactor_from_environ(env)

    def scrub(self, text: Any) -> str:
        """What may leave the run: encodable, and without any secret of the run (the one edge every write uses)."""
        return self.redactor.scrub(safe_text(text))

    # ---- log lines and annotations -----------------------------------------------------------------------------

    def info(self, message: str) -> None:
        print(self.scrub(message), flush=True)

    def _annotate(self, kind: str, message: str) -> None:
        if self.annotations:
            issue_command(kind, {}, self.scrub(message))  # escapes %, CR and LF: always one workflow command
            sys.stdout.flush()
        else:
            print(f"{kind}: {' '.join(self.scrub(message).split())}", file=sys.stderr, flush=True)

    def notice(self, message: str) -> None:
        self._annotate("notice", message)

    def warning(self, message: str) -> None:
        self._annotate("warning", message)

    def error(self, message: str) -> None:
        self._annotate("error", message)

    # ---- outputs and summary -----------------------------------------------------------------------------------

    def set_outputs(self, outputs: Mapping[str, Any]) -> None:
        """Append to GITHUB_OUTPUT with heredoc delimiters, so multi-line JSON values are safe."""
        if not self.output_path:
            return
        with open(self.output_path, "a", encoding="utf-8", newline="") as handle:
            for name, value in outputs.items():
                handle.write(prepare_key_value_message(name, self.scrub(value)) + os.linesep)

    def write_summary(self, markdown: str) -> None:
        if not self.summary_path:
            return
        with open(self.summary_path, "a", encoding="utf-8") as handle:
            handle.write(self.scrub(markdown).rstrip() + "\n")


    def write_file(self, path, text: str) -> None:
        """A file the run leaves behind for others (the plans file), scrubbed like every other write."""
        from pathlib import Path

        Path(path).write_text(self.scrub(text), encoding="utf-8")


# ---- what the outputs and the summary say ------------------------------------------------------------------------


def _counts(results) -> dict[str, int]:
    return {
        "triaged": sum(1 for r in results if r.plan is not None and not r.error and not r.left),
        "flagged": sum(1 for r in results if r.needs_person),
        "failed": sum(1 for r in results if r.error),
    }


def ignored_outputs() -> dict[str, str]:
    return {"outcome": "ignored", "labels-added": "[]", "sub-oncall": "", "modules": "[]", "plan": "null",
            "triaged": "0", "flagged": "0", "failed": "0", "left": "0"}


def error_outputs() -> dict[str, str]:
    return dict(ignored_outputs(), outcome="error")


def plan_dict(result) -> dict | None:
    return result.plan.to_dict() if result.plan is not None else None


def issue_outputs(result) -> dict[str, str]:
    plan = result.plan
    counts = _counts([result])
    return {
        "outcome": result.outcome,
        "labels-added": json.dumps(list(result.labels_written)),
        "sub-oncall": (plan.sub_oncall if plan else None) or "",
        "modules": json.dumps(list(plan.modules) if plan else []),
        "plan": json.dumps(plan_dict(result), sort_keys=True),
        **{k: str(v) for k, v in counts.items()}, "left": "0",
    }


def sweep_outputs(sweep) -> dict[str, str]:
    """A sweep has many plans: `plan` is their list, `labels-added` the union of the labels written."""
    results = sweep.results
    added = sorted({label for r in results for label in r.labels_written})
    modules = sorted({m for r in results if r.plan for m in r.plan.modules})
    return {
        "outcome": "swept",
        "labels-added": json.dumps(added),
        "sub-oncall": "",
        "modules": json.dumps(modules),
        "plan": json.dumps([plan_dict(r) for r in results], sort_keys=True),
        **{k: str(v) for k, v in _counts(results).items()}, "left": str(sweep.left),
    }


def _code(text: str) -> str:
    return "`" + safe_text(text).replace("`", "'") + "`"


def _link(result) -> str:
    title = md_escape(result.title[:80]) if result.title else ""
    if result.url:
        return f"[#{result.number}]({result.url})" + (f" {title}" if title else "")
    return f"#{result.number}" + (f" {title}" if title else "")


def issue_markdown(result) -> str:
    plan = result.plan
    heading = "failed" if result.error else result.outcome
    lines = [f"### {_link(result) if result.number else 'Search'}: {_code(heading)}"
             + (" (dry run)" if result.dry_run else ""), ""]
    if result.error:
        lines += [f"**Failed:** {md_escape(result.error)}"
                  + (f" (it had planned {_code(result.words.outcome(plan.outcome) if result.words else plan.outcome)})"
                     if plan is not None else ""), ""]
    if result.left:
        lines += [f"Left: {md_escape(result.left)}", ""]
    if plan is None:
        return "\n".join(lines) + "\n"
    lines += [
        "| | |",
        "| --- | --- |",
        f"| Planner | {_code(plan.planner)} |",
        f"| Sub-oncall | {_code(plan.sub_oncall) if plan.sub_oncall else '-'} |",
        f"| Modules | {', '.join(_code(m) for m in plan.modules) or '-'} |",
        f"| Confidence | {plan.confidence or '-'} |",
        f"| Forced re-triage | {'yes' if result.forced else 'no'} |",
    ]
    verb = "Would add labels" if result.dry_run else "Labels written"
    lines.append(f"| {verb} | {', '.join(_code(l) for l in result.labels_written) or 'none'} |")
    comment = result.comment_posted
    lines.append(f"| {'Would post comment' if result.dry_run else 'Comment posted'} | {_code(comment) if comment else 'none'} |")
    deciders = sorted({getattr(step, "by", plan.planner) for step in plan.steps if not step.skipped})
    if deciders and deciders != ["rubric"]:
        by_step = ", ".join(f"{step.step}: {getattr(step, 'by', plan.planner)}" for step in plan.steps if not step.skipped)
        lines.append(f"| Decided by (step: planner) | {md_escape(by_step)} |")
    if plan.usage:
        lines.append(f"| Model usage | {md_escape(json.dumps(plan.usage, sort_keys=True))} |")
    if plan.explained:
        lines += ["", "Steps and evidence:", ""] + [f"{i}. {md_escape(r)}" for i, r in enumerate(plan.explained, 1)]
    return "\n".join(lines) + "\n"


def summary_markdown(title: str, results, notes=(), *, sweep=None) -> str:
    """For people: for a sweep, a table of every issue and the totals first, what needs a person, details below."""
    parts = [f"## ptd-triage: {md_escape(title)}", ""]
    parts += [f"- {md_escape(n)}" for n in notes]
    if notes:
        parts.append("")
    if sweep is not None:
        counts = _counts(results)
        skipped = sum(sweep.skipped.values())
        parts += [f"**Found {sweep.found}** queue issue(s) without the marker: triaged {counts['triaged']}, "
                  f"waiting for a person {counts['flagged']}, failed {counts['failed']}, skipped {skipped}, "
                  f"left for the next sweep {sweep.left}.", ""]
        for why, count in sorted(sweep.skipped.items()):
            parts.append(f"- skipped {count}: {md_escape(why)}")
        if sweep.stopped:
            parts.append(f"- stopped early: {md_escape(sweep.stopped)}")
        if sweep.skipped or sweep.stopped:
            parts.append("")
        if results:
            parts += ["| Issue | Outcome | Labels added | Needs a person |", "| --- | --- | --- | --- |"]
            for r in results:
                labels = ", ".join(_code(l) for l in r.labels_written) or "-"
                person = "**yes**" if r.needs_person else ("failed" if r.error else "no")
                parts.append(f"| {_link(r) if r.number else 'search'} | {_code('failed' if r.error else r.outcome)} "
                             f"| {labels} | {person} |")
            parts.append("")
            waiting = [r for r in results if r.needs_person]
            if waiting:
                parts += ["Needs a person: " + ", ".join(_link(r) for r in waiting), ""]
            parts += ["<details><summary>Details per issue</summary>", ""]
    if not results:
        parts.append("No issue was triaged.")
    parts += [issue_markdown(r) for r in results]
    if sweep is not None and results:
        parts += ["</details>", ""]
    return "\n".join(parts)
