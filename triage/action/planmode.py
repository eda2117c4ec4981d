"""The Action's plan/apply split (issue 8), and the model planners for the one-job form.

- `mode: plan`: read-only token plus the model's credentials. Plans the event's issue (or sweeps the queue) as a
  dry run with the configured planner and writes the plans to `plans-file` (JSON, `triage.planners.replay`'s
  format) and to the `plans` output. Nothing is written to GitHub.
- `mode: apply`: `issues: write` and no model credentials (a key given to it is refused in settings). Reads the
  plans file, re-reads each issue and passes its saved plan through the triage service with a `ReplayPlanner`, so
  `enforce` checks it against the issue as it is now, then writes.
- `mode: triage` (the default): the one-job form, with whichever planner the inputs name.

`triage.action.main` chooses the mode; this module holds what the two split modes do.

May import: the standard library, `triage.action.*`, and lazily `triage.planners`, `triage.service`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from triage.action.handlers import Result, Run, router
from triage.action.report import Reporter
from triage.action.settings import ActionError, Settings

DEFAULT_PLANS_FILE = "ptd-triage-plans.json"


def planner_for_settings(settings: Settings, environ: Mapping[str, str]):
    """The planner the inputs name, with the llm-* inputs; ActionError (one line) when it cannot be built."""
    from triage.planners import UnknownPlanner, get_planner

    if settings.planner == "rubric":
        return get_planner("rubric")
    from triage.llm.errors import LLMError

    try:
        if settings.planner not in ("llm", "hybrid"):
            return get_planner(settings.planner)  # raises UnknownPlanner, or a fork's own planner
        return get_planner(settings.planner, client=model_client(settings, environ))
    except UnknownPlanner as exc:
        raise ActionError(f"input planner: {exc}") from None
    except LLMError as exc:
        raise ActionError(f"input planner {settings.planner}: {exc}") from None


def model_client(settings: Settings, environ: Mapping[str, str]):
    """The model client the llm-* inputs describe (LLMError when they do not make one)."""
    from triage.llm.client import LLMClient, config_from_environ
    from triage.llm.pricing import Prices

    config = config_from_environ(
        environ, provider=settings.llm_provider, model=settings.llm_model, base_url=settings.llm_base_url or None,
        api_key=settings.llm_api_key or None, max_calls=settings.llm_max_calls, timeout=settings.llm_timeout,
        output_mode=settings.llm_output_mode, prices=Prices(*settings.llm_prices) if settings.llm_prices else None)
    return LLMClient(config, environ=environ)


def model_note(planner) -> str | None:
    """One line for the summary when a model planner ran: calls, tokens, and the estimated cost when both
    llm-price-* inputs are given (else says how to get one)."""
    consultant = getattr(planner, "consultant", None)
    if consultant is None or not consultant.issues_asked:
        return None
    from triage.llm.pricing import format_usd

    t = consultant.usage_totals()
    cost = (f"estimated cost {format_usd(t['cost_usd'])}" if t["cost_usd"] is not None
            else "no cost estimate (set llm-price-input and llm-price-output)")
    return (f"model: asked on {t['issues_asked']} issue(s), {t['calls']} call(s), {t['input_tokens']} input + "
            f"{t['output_tokens']} output tokens, {cost}; fell back to the rubric on {t['fallbacks']}")


def plans_path(settings: Settings, environ: Mapping[str, str]) -> Path:
    if settings.plans_file:
        return Path(settings.plans_file)
    return Path(environ.get("RUNNER_TEMP") or ".") / DEFAULT_PLANS_FILE


def plans_document(settings: Settings, result: Result, *, forced: bool) -> dict:
    plans = []
    for item in result.results:
        if item.plan is None or item.error:
            continue
        plans.append({**item.plan.to_dict(), "forced": forced})
    return {"version": 1, "repo": settings.repo, "plans": plans}


def run_plan(settings: Settings, environ: Mapping[str, str], reporter: Reporter, payload: dict, event: str,
             action: str | None, client: Any = None) -> tuple[Result, int]:
    from dataclasses import replace

    planner = planner_for_settings(settings, environ)
    settings = replace(settings, dry_run=True)  # the plan job never writes to GitHub, whatever its token may do
    run = Run(settings, reporter, planner=planner, payload=payload, client=client, environ=environ)
    result = router.dispatch(event, action, run)
    note = model_note(planner)
    if note:
        result.notes.append(note)
    forced = result.kind == "issue" and bool(getattr(result.issue, "forced", False))
    document = plans_document(settings, result, forced=forced)
    path = plans_path(settings, environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    reporter.write_file(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")  # scrubbed of secrets
    result.notes.append(f"plan mode: {len(document['plans'])} plan(s) saved to {path}; nothing written to GitHub")
    return result, len(document["plans"])


def run_apply(settings: Settings, reporter: Reporter, path: Path, client: Any = None) -> Result:
    from triage.planners.replay import PlansFileError, ReplayPlanner, read_plans
    from triage.service.triager import SweepResult

    try:
        saved = read_plans(path)
    except PlansFileError as exc:
        raise ActionError(str(exc)) from None
    if saved["repo"] and saved["repo"] != settings.repo:
        raise ActionError(f"{path}: the plans are for {saved['repo']}, not {settings.repo}")
    run = Run(settings, reporter, planner=ReplayPlanner(saved["plans"]), client=client)
    sweep = SweepResult(query=f"apply the saved plans in {path}", found=len(saved["plans"]))
    for number in saved["plans"]:
        forced = saved["forced"][number]
        item = run.triager.triage(number, force=forced, require_queue=not forced)
        sweep.results.append(item)
        if item.fatal:
            sweep.left = len(saved["plans"]) - len(sweep.results)
            sweep.stopped = f"GitHub refused in a way that would fail every issue: {item.error}"
            break
    return Result("sweep", sweep=sweep, notes=[f"apply mode: {len(saved['plans'])} saved plan(s) from {path}"])
