"""What a run tells people: step outputs, annotations, and the writing of the step summary (its markdown is
`triage.action.summary`'s). Outputs and the summary stay under GitHub's size limits (`triage.action.limits`).

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

from triage.action.limits import OUTPUT_CAP, SUMMARY_CAP, nbytes
from triage.action.redact import Redactor, redactor_from_environ
from triage.action.workflow_commands import issue_command, prepare_key_value_message
from triage.service.summary import sweep_counts

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
        self.temp_dir = env.get("RUNNER_TEMP") or None  # where a text too large for GitHub's limits is kept whole
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
                text = self.scrub(value)
                if nbytes(text) > OUTPUT_CAP:  # the callers cap what can grow (plan, plans): a last defence
                    self.warning(f"output {name} left empty: {nbytes(text)} bytes is over GitHub's 1 MB limit")
                    text = ""
                handle.write(prepare_key_value_message(name, text) + os.linesep)

    def write_summary(self, markdown: str) -> None:
        if not self.summary_path:
            return
        text = self.scrub(markdown).rstrip() + "\n"
        room = SUMMARY_CAP - self._summary_size()
        if nbytes(text) > room:  # summary_markdown keeps under the cap itself: a last defence, cut at a line
            text = text.encode("utf-8", "replace")[:max(room - 200, 0)].decode("utf-8", "ignore")
            text = text[:text.rfind("\n") + 1] + "\n_(cut here: GitHub's 1 MiB step-summary limit)_\n"
        with open(self.summary_path, "a", encoding="utf-8") as handle:
            handle.write(text)

    def _summary_size(self) -> int:
        try:
            return os.path.getsize(self.summary_path)
        except OSError:
            return 0

    def write_aside(self, name: str, text: str) -> str | None:
        """`text` whole in a file in the runner's temporary directory (what did not fit GitHub's limits); its path,
        or None outside a runner."""
        if not self.temp_dir:
            return None
        from pathlib import Path

        path = Path(self.temp_dir) / name
        self.write_file(path, text)
        return str(path)


    def write_file(self, path, text: str) -> None:
        """A file the run leaves behind for others (the plans file), scrubbed like every other write."""
        from pathlib import Path

        Path(path).write_text(self.scrub(text), encoding="utf-8")


# ---- what the outputs and the summary say ------------------------------------------------------------------------


def ignored_outputs() -> dict[str, str]:
    return {"outcome": "ignored", "labels-added": "[]", "sub-oncall": "", "modules": "[]", "plan": "null",
            "triaged": "0", "flagged": "0", "failed": "0", "left": "0"}


def error_outputs() -> dict[str, str]:
    return dict(ignored_outputs(), outcome="error")


def plan_dict(result) -> dict | None:
    return result.plan.to_dict() if result.plan is not None else None


def issue_outputs(result) -> dict[str, str]:
    plan = result.plan
    return {
        "outcome": result.outcome,
        "labels-added": json.dumps(list(result.labels_written)),
        "sub-oncall": (plan.sub_oncall if plan else None) or "",
        "modules": json.dumps(list(plan.modules) if plan else []),
        "plan": json.dumps(plan_dict(result), sort_keys=True),
        "triaged": str(int(result.triaged)), "flagged": str(int(result.needs_person)),
        "failed": str(int(bool(result.error))), "left": "0",
    }


def sweep_outputs(sweep, plans: list[dict]) -> tuple[dict[str, str], int]:
    """A sweep has many plans: `plan` is their list (`plans`, each result's `plan_dict`), cut to GitHub's limit;
    `labels-added` the union of the labels written. (The outputs, how many plans `plan` holds.)"""
    results = sweep.results
    counts = sweep_counts(sweep)
    added = sorted({label for r in results for label in r.labels_written})
    modules = sorted({m for r in results if r.plan for m in r.plan.modules})
    listed, kept = capped_list(plans)
    return {
        "outcome": "swept",
        "labels-added": json.dumps(added),
        "sub-oncall": "",
        "modules": json.dumps(modules),
        "plan": listed,
        # The step summary's counts, the same numbers: `failed` counts issues, so a failed search is not one (it
        # fails the run by itself, with its own line).
        "triaged": str(counts.triaged), "flagged": str(counts.flagged), "failed": str(counts.failed),
        "left": str(counts.left),
    }, kept


def capped_list(items: list, cap: int = OUTPUT_CAP) -> tuple[str, int]:
    """(the JSON list of the first items that fit in `cap` bytes, how many). Always valid JSON: whole items only."""
    pieces, used = [], 2
    for item in items:
        piece = json.dumps(item, sort_keys=True)
        used += nbytes(piece) + 2
        if used > cap:
            break
        pieces.append(piece)
    return "[" + ", ".join(pieces) + "]", len(pieces)


def capped_document(document: dict, cap: int = OUTPUT_CAP, *, rest_in: str = "") -> tuple[str, int]:
    """The plans document as one output, its `plans` list cut to fit `cap` bytes (then `omitted` counts the rest and
    `plans_file` says where they all are); (the JSON, how many plans it holds)."""
    text = json.dumps(document, ensure_ascii=False)
    plans = document.get("plans") or []
    if nbytes(text) <= cap:
        return text, len(plans)
    head = {k: v for k, v in document.items() if k != "plans"}
    listed, kept = capped_list(plans, cap - nbytes(json.dumps(head)) - 200)
    cut = dict(head, omitted=len(plans) - kept, plans_file=rest_in, plans=json.loads(listed))
    return json.dumps(cut, ensure_ascii=False), kept
