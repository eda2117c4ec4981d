"""How a dry run goes live, said at the end of its step summary and in its log (issue 40): from what the run can see
of its workflow, the switch that applies to this run.

- a dispatch whose form has the "Dry run" box (the example sweep workflow's `dry-run` input): run it again with the
  box cleared (and, when the workflow has `PTD_TRIAGE_LIVE`, that its scheduled runs follow that instead);
- a workflow with `PTD_TRIAGE_LIVE` in its `env:` (every example; a workflow's `env:` reaches its steps): set it to
  "true" in that workflow file (named from GITHUB_WORKFLOW_REF);
- any other workflow: the step's `dry-run` input.

May import: the standard library.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

LIVE = "PTD_TRIAGE_LIVE"
_WORKFLOW = re.compile(r"^[^/]+/[^/]+/(?P<path>\.github/workflows/[^@]+)@")


def _workflow_file(environ: Mapping[str, str]) -> str:
    found = _WORKFLOW.match(environ.get("GITHUB_WORKFLOW_REF", ""))
    return found.group("path") if found else ""


def how_to_go_live(environ: Mapping[str, str], event: str, payload: Mapping[str, Any], *, what: str = "write",
                   mode: str = "triage") -> str:
    """One sentence: what makes this workflow write (`what`: "write", or a task's own verb, e.g. "create them")."""
    inputs = payload.get("inputs") if isinstance(payload, Mapping) else None
    has_var = LIVE in environ
    file = _workflow_file(environ)
    in_file = f" in the `env:` of `{file}`" if file else " in the workflow's `env:`"
    if mode == "plan":  # read-only by design: the switch is the apply job's
        said = "this job only plans (mode plan, a read-only token): the apply job writes the saved plans"
        if has_var and environ.get(LIVE, "").strip() != "true":
            return said + f", once `{LIVE}` is `\"true\"`{in_file}."
        return said + ", unless its own `dry-run` input is true."
    if event == "workflow_dispatch" and isinstance(inputs, Mapping) and "dry-run" in inputs:
        said = (f"this run was a dry run because its \"Dry run\" box was checked: run the workflow again (Actions > "
                f"the workflow > Run workflow) with the box cleared to {what}.")
        if has_var:
            said += f" Its scheduled runs {what} once `{LIVE}` is `\"true\"`{in_file}."
        return said
    if has_var and environ.get(LIVE, "").strip() != "true":
        return (f"this workflow is a dry run until its `{LIVE}` is `\"true\"`: set `{LIVE}: \"true\"`{in_file} once "
                f"its summaries look right (each workflow has its own switch, so one can go live before another).")
    return (f"the step's `dry-run` input is true: set it to `false` (the Action's default) to {what}.")
