"""The Action's plan/apply split (issue 8), and the model planners for the one-job form.

- `mode: plan`: read-only token plus the model's credentials. Plans the event's issue (or sweeps the queue) as a
  dry run with the configured planner and writes the plans to `plans-file` (JSON, `triage.planners.replay`'s
  format) and to the `plans` output. Nothing is written to GitHub.
- `mode: apply`: `issues: write` and no model credentials (a key given to it is refused in settings). The plans
  file is hostile input (anyone who can edit it between the jobs): it supplies proposals and nothing else. Every
  permission comes from GitHub and the apply run itself (issue 20): the run routes its OWN event as a triage run
  would (the queue label, the command and its author's role, the dispatch inputs), so it touches only that
  event's issue and forces only when its own event or inputs do; a sweep event is the sweep itself over the saved
  plans' issues (triage.service.sweep), with its rules (in the queue, open, not processed, not waiting for a
  person, not updated in the last minutes, not-before) and its budgets (max-issues, sweep-timeout, the API reserve,
  the write pacing). Each issue is read again and the policy checks the proposal against it as it is now; a plan
  made before the issue last changed (its `updated_at` differs from the one the plan job read) is dropped, with a
  note, and the next run plans it again.
- `mode: triage` (the default): the one-job form, with whichever planner the inputs name.

`triage.action.main` chooses the mode; this module holds what the two split modes do.

May import: the standard library, `triage.action.*`, and inside functions `triage.planners.replay`,
`triage.service.sweep`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from triage.action.app import run_event
from triage.action.context import Context, Result, build_context, model_note, planner_for_settings, with_planner
from triage.action.report import Reporter
from triage.action.routers.sweep import sweep
from triage.action.settings import ActionError, Settings

DEFAULT_PLANS_FILE = "ptd-triage-plans.json"


def plans_path(settings: Settings, environ: Mapping[str, str]) -> Path:
    if settings.plans_file:
        return Path(settings.plans_file)
    return Path(environ.get("RUNNER_TEMP") or ".") / DEFAULT_PLANS_FILE


def plans_document(settings: Settings, result: Result) -> dict:
    """The plans, each with the issue's `updated_at` as this job read it (apply drops a plan older than the issue).
    No "forced": the apply run decides that from its own event."""
    plans = []
    for item in result.results:
        if item.plan is None or item.error or item.left:
            continue
        plans.append({**item.plan.to_dict(), "issue_updated_at": item.updated_at})
    return {"version": 1, "repo": settings.repo, "plans": plans}


def run_plan(settings: Settings, environ: Mapping[str, str], reporter: Reporter, payload: dict, event: str,
             action: str | None, client: Any = None) -> tuple[Result, int]:
    """The plan job: the event routed as a dry run (the plan job never writes to GitHub, whatever its token may do:
    its executor writes nothing and its client refuses any write); the planner the inputs name is built only for
    an event that is ours, as in a triage run."""
    from dataclasses import replace

    settings = replace(settings, dry_run=True)
    result, context = run_event(settings, reporter, payload, environ, event, action, client=client,
                                make_planner=lambda: planner_for_settings(settings, environ))
    note = model_note(context.planner) if context is not None else None
    if note:
        result.notes.append(note)
    document = plans_document(settings, result)
    path = plans_path(settings, environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    reporter.write_file(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")  # scrubbed of secrets
    result.notes.append(f"plan mode: {len(document['plans'])} plan(s) saved to {path}; nothing written to GitHub")
    return result, len(document["plans"])


def is_sweep_event(event: str, settings: Settings) -> bool:
    return event == "schedule" or (event == "workflow_dispatch" and settings.issue_number is None
                                   and not settings.task)


def stale_check(updated_at: Mapping[int, str]):
    """The apply run's precheck (triage.service.triager): a plan made before the issue last changed is dropped."""
    def check(number: int, issue: Mapping[str, Any]) -> str | None:
        if number not in updated_at:
            return None  # no saved plan: the replay planner proposes nothing
        planned, now = updated_at[number], issue.get("updated_at")
        if not planned:
            return "the plan does not say when the issue was read: not applied (plan it again)"
        if planned != now:
            return (f"changed since the plan was made (planned on the issue as of {planned}, now {now}): the plan "
                    "is dropped, not applied; the next run plans it again")
        return None
    return check


def run_apply(settings: Settings, reporter: Reporter, path: Path, event: str, action: str | None,
              payload: Mapping[str, Any], client: Any = None) -> Result:
    from triage.planners.replay import PlansFileError, ReplayPlanner, read_plans

    try:
        saved = read_plans(path)
    except PlansFileError as exc:
        raise ActionError(str(exc)) from None
    if saved["repo"] and saved["repo"] != settings.repo:
        raise ActionError(f"{path}: the plans are for {saved['repo']}, not {settings.repo}")
    plans = saved["plans"]
    precheck = stale_check(saved["updated_at"])
    note = f"apply mode: {len(plans)} saved plan(s) from {path}"
    if is_sweep_event(event, settings):
        context = with_planner(build_context(settings, reporter, payload, client=client), ReplayPlanner(plans),
                               precheck=precheck)
        return _apply_as_sweep(context, plans, note)
    # the event decides the issue and whether it is forced
    result, _ = run_event(settings, reporter, payload, {}, event, action, client=client,
                          make_planner=lambda: ReplayPlanner(plans), precheck=precheck)
    touched = {item.number for item in result.results}
    others = sorted(set(plans) - touched)
    if others:
        shown = ", ".join(f"#{n}" for n in others[:20]) + (" ..." if len(others) > 20 else "")
        note += (f"; {len(others)} plan(s) for other issues than this event's not applied ({shown}): an apply run "
                 "writes only its own event's issue")
    result.notes.insert(0, note)
    return result


def _apply_as_sweep(run: Context, plans: Mapping[int, Any], note: str) -> Result:
    """A sweep's apply run: the saved plans' issues through the sweep itself (triage.service.sweep), so under its
    own rules (never forced; in the queue, open, not processed, not waiting for a person, not updated in the last
    minutes, not-before in both modes) and within its budgets (max-issues, sweep-timeout, the API reserve left to
    the event runs, the write pacing), stopping cleanly when one runs out."""
    from triage.service.sweep import ListedIssues

    return sweep(run, ListedIssues(plans, f"apply the saved plans ({note})"))
