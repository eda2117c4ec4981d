"""The Action's plan/apply split (issue 8), and the model planners for the one-job form.

- `mode: plan`: read-only token plus the model's credentials. Plans the event's issue (or sweeps the queue) as a
  dry run with the configured planner and writes the plans to `plans-file` (JSON, `triage.planners.replay`'s
  format) and to the `plans` output. Nothing is written to GitHub.
- `mode: apply`: `issues: write` and no model credentials (a key given to it is refused in settings). Reads the
  plans file, re-reads each issue and passes its saved plan through the triage service with a `ReplayPlanner`, so
  `enforce` checks it against the issue as it is now, then writes.
- `mode: triage` (the default): the one-job form; with `planner: rubric` it is exactly `triage.action.main`.

May import: the standard library, `triage.action.*`, and lazily `triage.planners`, `triage.service`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from triage.action.handlers import Result, Run, router
from triage.action.report import Reporter
from triage.action.settings import ActionError, Settings, read_payload, settings_from_environ

DEFAULT_PLANS_FILE = "ptd-triage-plans.json"


def planner_for_settings(settings: Settings, environ: Mapping[str, str]):
    """The planner the inputs name, with the llm-* inputs; ActionError (one line) when it cannot be built."""
    from triage.planners import UnknownPlanner, get_planner

    if settings.planner == "rubric":
        return get_planner("rubric")
    from triage.llm.errors import LLMError

    try:
        return get_planner(settings.planner, provider=settings.llm_provider, model=settings.llm_model,
                           base_url=settings.llm_base_url or None, api_key=settings.llm_api_key or None,
                           max_calls=settings.llm_max_calls, timeout=settings.llm_timeout, environ=environ)
    except UnknownPlanner as exc:
        raise ActionError(f"input planner: {exc}") from None
    except LLMError as exc:
        raise ActionError(f"input planner {settings.planner}: {exc}") from None


class PlannerRun(Run):
    """A Run whose triage service uses the configured planner (and, for apply, the saved plans)."""

    def __init__(self, settings: Settings, reporter: Reporter, *, planner: Any, **kwargs):
        super().__init__(settings, reporter, **kwargs)
        self._planner = planner

    @property
    def triager(self):
        if self._triager is None:
            from triage.service.triager import Triager

            s = self.settings
            self._triager = Triager(self.client, self.bundle, repo=s.repo, queue_label=self.queue_label,
                                    planner=self._planner, dry_run=s.dry_run, own_logins=(s.bot_login,),
                                    issue_seconds=s.issue_seconds)
        return self._triager


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
    run = PlannerRun(settings, reporter, planner=planner, payload=payload, client=client)
    result = router.dispatch(event, action, run)
    forced = result.kind == "issue" and bool(getattr(result.issue, "forced", False))
    document = plans_document(settings, result, forced=forced)
    path = plans_path(settings, environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
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
    run = PlannerRun(settings, reporter, planner=ReplayPlanner(saved["plans"]), client=client)
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


def main(environ: Mapping[str, str] | None = None, *, client: Any = None) -> int:
    """Entry for every mode (the one-job `triage` mode with the rubric is the same as `triage.action.main`)."""
    from triage.action.main import fail, report_result

    env = os.environ if environ is None else environ
    reporter = Reporter(env)
    try:
        event = env.get("GITHUB_EVENT_NAME", "").strip()
        if not event:
            raise ActionError("GITHUB_EVENT_NAME is not set: run inside GitHub Actions")
        settings = settings_from_environ(env)
        if settings.mode == "apply":
            path = plans_path(settings, env)
            result = run_apply(settings, reporter, path, client=client)
            return report_result(result, reporter, f"{event} (apply)")
        payload = read_payload(env)
        action = payload.get("action")
        if action is not None and not isinstance(action, str):
            raise ActionError("malformed event payload: 'action' must be a string")
        title = f"{event}.{action}" if action else event
        if settings.mode == "plan":
            result, count = run_plan(settings, env, reporter, payload, event, action, client=client)
            status = report_result(result, reporter, f"{title} (plan)")
            path = plans_path(settings, env)
            reporter.set_outputs({"plans-file": str(path), "plans": path.read_text(encoding="utf-8").strip(),
                                  "planned": str(count)})
            return status
        planner = planner_for_settings(settings, env)
        run = PlannerRun(settings, reporter, planner=planner, payload=payload, client=client)
        return report_result(router.dispatch(event, action, run), reporter, title)
    except ActionError as exc:
        return fail(reporter, str(exc))
    except Exception as exc:  # noqa: BLE001 - the last line of defence still says one clear thing
        from triage.http.errors import HTTPError

        if isinstance(exc, HTTPError):
            return fail(reporter, str(exc))
        return fail(reporter, f"internal error: {type(exc).__name__}: {exc}")


if __name__ == "__main__":
    import sys

    sys.exit(main())
