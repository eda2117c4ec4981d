"""What a run tells people: step outputs, the step summary (markdown) and annotations.

Outputs and annotations go through actions-toolkit's command primitives (`actions_toolkit.command`,
`actions_toolkit.file_command`): the same code `actions_toolkit.core.set_output/error/warning` wraps, but
without `core`'s import of `requests` (for its OIDC client), which costs ~0.1 s of cold start on every event,
including the many events the Action ignores.

Issue text is hostile: anything in a summary that came from an issue (reasons quote evidence) is escaped so
it renders as text, never as markdown links, images or HTML.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

from actions_toolkit.command import issue_command
from actions_toolkit.file_command import prepare_key_value_message

OUTPUT_NAMES = ("outcome", "labels-added", "sub-oncall", "modules", "plan")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def md_escape(text: str) -> str:
    """Render untrusted text literally inside markdown (one line: newlines become spaces)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split())).replace("&", "&amp;")


@dataclass
class IssueReport:
    """One issue's plan and what was written for it (or would have been, in a dry run)."""

    plan: dict
    labels_written: list[str] = field(default_factory=list)
    comment_posted: str | None = None  # template name
    dry_run: bool = False
    forced: bool = False
    error: str | None = None
    stop_sweep: bool = False  # the error will repeat for every issue (credentials, permission, rate limit)


class Reporter:
    """Writes to the runner's files when they exist (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) and to stdout.

    `annotations=False` (the CLI) prints errors and warnings as plain `error: ...` lines on stderr instead of
    workflow commands.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, *, annotations: bool = True):
        env = os.environ if environ is None else environ
        self.output_path = env.get("GITHUB_OUTPUT") or None
        self.summary_path = env.get("GITHUB_STEP_SUMMARY") or None
        self.annotations = annotations

    # ---- log lines and annotations -----------------------------------------------------------------------------

    def info(self, message: str) -> None:
        print(message, flush=True)

    def _annotate(self, kind: str, message: str) -> None:
        if self.annotations:
            issue_command(kind, {}, message)  # escapes %, CR and LF: always one workflow command
            sys.stdout.flush()
        else:
            print(f"{kind}: {' '.join(str(message).split())}", file=sys.stderr, flush=True)

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
                handle.write(prepare_key_value_message(name, value) + os.linesep)

    def write_summary(self, markdown: str) -> None:
        if not self.summary_path:
            return
        with open(self.summary_path, "a", encoding="utf-8") as handle:
            handle.write(markdown.rstrip() + "\n")


# ---- what the outputs and the summary say ------------------------------------------------------------------------


def ignored_outputs() -> dict[str, str]:
    return {"outcome": "ignored", "labels-added": "[]", "sub-oncall": "", "modules": "[]", "plan": "null"}


def error_outputs() -> dict[str, str]:
    return dict(ignored_outputs(), outcome="error")


def issue_outputs(report: IssueReport) -> dict[str, str]:
    plan = report.plan
    return {
        "outcome": plan["outcome"],
        "labels-added": json.dumps(report.labels_written),
        "sub-oncall": plan.get("sub_oncall") or "",
        "modules": json.dumps(plan.get("modules") or []),
        "plan": json.dumps(plan, sort_keys=True),
    }


def sweep_outputs(reports: list[IssueReport]) -> dict[str, str]:
    """A sweep has many plans: `plan` is their list, `labels-added` the union of the labels written."""
    added = sorted({label for r in reports for label in r.labels_written})
    modules = sorted({m for r in reports for m in (r.plan.get("modules") or [])})
    return {
        "outcome": "swept",
        "labels-added": json.dumps(added),
        "sub-oncall": "",
        "modules": json.dumps(modules),
        "plan": json.dumps([r.plan for r in reports], sort_keys=True),
    }


def _code(text: str) -> str:
    return "`" + str(text).replace("`", "'") + "`"


def issue_markdown(report: IssueReport) -> str:
    plan = report.plan
    number = plan.get("issue")
    lines = [f"### Issue #{number}: {_code(plan.get('outcome', 'error'))}" + (" (dry run)" if report.dry_run else ""), ""]
    if report.error:
        lines += [f"**Failed:** {md_escape(report.error)}", ""]
    lines += [
        "| | |",
        "| --- | --- |",
        f"| Sub-oncall | {_code(plan['sub_oncall']) if plan.get('sub_oncall') else '-'} |",
        f"| Modules | {', '.join(_code(m) for m in plan.get('modules') or []) or '-'} |",
        f"| Confidence | {plan.get('confidence') or '-'} |",
        f"| Forced re-triage | {'yes' if report.forced else 'no'} |",
    ]
    verb = "Would add labels" if report.dry_run else "Labels written"
    lines.append(f"| {verb} | {', '.join(_code(l) for l in report.labels_written) or 'none'} |")
    comment = report.comment_posted
    lines.append(f"| {'Would post comment' if report.dry_run else 'Comment posted'} | {_code(comment) if comment else 'none'} |")
    reasons = plan.get("reasons") or []
    if reasons:
        lines += ["", "Steps and evidence:", ""] + [f"{i}. {md_escape(r)}" for i, r in enumerate(reasons, 1)]
    return "\n".join(lines) + "\n"


def summary_markdown(title: str, reports: list[IssueReport], notes: list[str] = ()) -> str:
    parts = [f"## ptd-triage: {md_escape(title)}", ""]
    parts += [f"- {md_escape(n)}" for n in notes]
    if notes:
        parts.append("")
    if not reports:
        parts.append("No issue was triaged.")
    parts += [issue_markdown(r) for r in reports]
    return "\n".join(parts)
