"""The Action's entry point: read the runner's environment, route the event, report, and choose the exit status.

Exit status: 0 when the run did what it should (including "not for us"), 1 on bad input (one `::error::` line,
nothing written), on an event type the Action is not built for, when any issue failed to triage, or when the
configured model failed on an issue (its rubric plan was used; one `::error::` per issue says why).

May import: the standard library, `triage.action.*` (which defer everything heavy), `triage.service.summary`,
and inside functions `triage.http.errors`.
"""

from __future__ import annotations

import json
import os
from typing import Mapping

from triage.action.app import run_event
from triage.action.context import Result, model_note
from triage.action.golive import how_to_go_live
from triage.action.planmode import plans_path, run_apply, run_plan
from triage.action.limits import OUTPUT_CAP, SUMMARY_CAP, nbytes
from triage.action.report import (Reporter, capped_document, error_outputs, ignored_outputs, issue_outputs,
                                  plan_dict, sweep_outputs)
from triage.action.summary import summary_markdown
from triage.service.summary import count_gap, line_for
from triage.action.settings import ActionError, read_payload, settings_from_environ


def report_result(result: Result, reporter: Reporter, title: str, *, rest_in: str = "", go_live: str = "") -> int:
    """Log lines, outputs, the step summary and annotations for a run's result; the exit status. `rest_in`: a file
    that already holds every plan (plan mode's plans file), named where the summary or an output had to be cut.
    `go_live`: how this run's workflow writes (triage.action.golive), said at the end of a dry run's summary."""
    if result.kind == "ignored":
        reporter.info(f"ptd-triage: nothing to do: {result.why}")
        if result.warning:
            reporter.warning(result.warning)
        reporter.set_outputs(ignored_outputs())
        reporter.write_summary(summary_markdown(title, [], [f"Ignored: {result.why}"]))
        return 0
    if result.kind == "task":  # a maintenance run (labels sync): no issue triaged, and it says what it did
        reporter.info(f"ptd-triage: {result.why}")
        reporter.set_outputs(ignored_outputs())
        reporter.write_summary(summary_markdown(f"{title}, labels sync", [], result.notes, dry_run=result.dry_run,
                                                task=result.task, go_live=go_live))
        if result.dry_run and go_live:
            reporter.info(f"ptd-triage: a dry run: to go live, {go_live}")
        return 0
    for note in result.notes:
        reporter.info(f"ptd-triage: {note}")
    fallbacks = model_fallbacks(result.results)
    model_failed = [item for item, _, failure in fallbacks if failure]
    if model_failed:  # in the summary too: a person reading it must not take the rubric's plans for the model's
        result.notes.append(_model_failed_line(model_failed) + "; the rubric's plan was applied to each")
    if result.kind == "issue":
        reporter.info(line_for(result.issue))
        reporter.set_outputs(issue_outputs(result.issue))
    else:
        set_sweep_outputs(result.sweep, reporter, rest_in)
    write_summary(result, reporter, title, rest_in, go_live)
    dry = result.sweep.dry_run if result.sweep is not None else any(r.dry_run for r in result.results)
    if go_live and dry:
        reporter.info(f"ptd-triage: a dry run: to go live, {go_live}")
    failed = result.failed
    for item in failed:
        reporter.error(f"#{item.number}: {item.error}" if item.number else item.error)
    report_model_fallbacks(fallbacks, reporter)
    if result.kind == "sweep":
        sweep = result.sweep
        did = "would triage" if sweep.dry_run else "triaged"
        reporter.info(f"ptd-triage: found {sweep.found}, {did} {len(sweep.triaged)}, failed {len(failed)}, "
                      f"skipped {sum(sweep.skipped.values())}, left {sweep.left}")
        gap = count_gap(sweep)
        if gap:
            reporter.warning(f"sweep: {gap}")
        if failed:
            reporter.error(f"sweep: {len(failed)} of {len(sweep.results)} issue(s) failed; re-run to complete them")
    return 1 if failed or model_failed else 0


def set_sweep_outputs(sweep, reporter: Reporter, rest_in: str = "") -> None:
    """The sweep's outputs; a `plan` list too large for GitHub's limit holds the first plans, and every plan is
    written to `plan-file` (a warning says how many were left out and where they are)."""
    plans = [plan_dict(r) for r in sweep.results]
    outputs, kept = sweep_outputs(sweep, plans)
    if kept < len(plans):
        path = reporter.write_aside("ptd-triage-plan.json", json.dumps(plans, sort_keys=True) + "\n") or rest_in
        outputs["plan-file"] = path or ""
        where = f"; every plan is in {path}" if path else ""
        reporter.warning(f"the plan output holds {kept} of {len(plans)} plans (GitHub's 1 MB limit per output){where}")
    reporter.set_outputs(outputs)


def write_summary(result: Result, reporter: Reporter, title: str, rest_in: str = "", go_live: str = "") -> None:
    """The step summary; over the cap (GitHub drops a summary over 1 MiB), the whole one is written to
    `summary-file` and the step summary is cut section by section, each cut saying what it left out."""
    if not reporter.summary_path:
        return
    args = (title, result.results, result.notes)
    sweep = result.sweep if result.kind == "sweep" else None
    whole = summary_markdown(*args, sweep=sweep, cap=None, go_live=go_live)
    if nbytes(whole) <= SUMMARY_CAP:
        reporter.write_summary(whole)
        return
    path = reporter.write_aside("ptd-triage-summary.md", whole) or rest_in
    reporter.set_outputs({"summary-file": path or ""})
    reporter.write_summary(summary_markdown(*args, sweep=sweep, cap=SUMMARY_CAP, rest_in=path or "",
                                            go_live=go_live))
    reporter.warning("the step summary was cut to stay under GitHub's 1 MiB limit"
                     + (f"; the whole summary is in {path}" if path else ""))


def model_fallbacks(results) -> list[tuple]:
    """(item, reason, failure) for each issue whose model plan was not used (the rubric's plan stands), from the
    plan's typed fallback (`triage.core.plan.ModelFallback`). A model that failed (stalled, refused, too large, too
    deep, quota, auth, ...) is a failure that fails the run (exit 1): a user who configured a model must not get
    the rubric silently. Only the configured call budget (llm-max-calls) is not: a limit the user set."""
    found = []
    for item in results:
        fallback = item.plan.fallback if item.plan is not None and not item.error else None
        if fallback is not None:
            found.append((item, fallback.reason, fallback.failed))
    return found


def _numbers(items) -> str:
    return ", ".join(f"#{i.number}" for i in items[:20]) + (", ..." if len(items) > 20 else "")


def _model_failed_line(failures) -> str:
    return f"the model failed on {len(failures)} issue(s) ({_numbers(failures)})"


def report_model_fallbacks(fallbacks, reporter: Reporter) -> None:
    """An error annotation per issue whose model failed, with the reason, then one line naming them all; the call
    budget is one warning for the whole run. Once it is spent every later issue of a sweep falls back for the same
    reason: one warning each was up to max-issues identical lines."""
    for item, reason, failure in fallbacks:
        if failure:
            reporter.error(f"#{item.number}: the model's plan was not used, the rubric's plan stands: {reason}")
    spent = [(item, reason) for item, reason, failure in fallbacks if not failure]
    if spent:
        items = [item for item, _ in spent]
        reporter.warning(f"the model's budget was spent ({spent[0][1]}): the rubric planned {len(items)} issue(s) "
                         f"without it ({_numbers(items)})")
    failures = [item for item, _, failure in fallbacks if failure]
    if failures:
        reporter.error(_model_failed_line(failures) + ": see the reasons above")


def main(environ: Mapping[str, str] | None = None) -> int:
    env = os.environ if environ is None else environ
    reporter = Reporter(env)
    try:
        event = env.get("GITHUB_EVENT_NAME", "").strip()
        if not event:
            raise ActionError("GITHUB_EVENT_NAME is not set: run inside GitHub Actions")
        settings = settings_from_environ(env)
        payload = read_payload(env)
        action = payload.get("action")
        if action is not None and not isinstance(action, str):
            raise ActionError("malformed event payload: 'action' must be a string")
        title = f"{event}.{action}" if action else event
        how = how_to_go_live(env, event, payload, what="create them" if settings.task else "write",
                             mode=settings.mode)
        if settings.mode == "apply":  # issues: write, no model credentials: its own event decides, plans propose
            result = run_apply(settings, reporter, plans_path(settings, env), event, action, payload)
            return report_result(result, reporter, f"{title} (apply)", go_live=how)
        if settings.mode == "shadow":  # read-only: the queue's history against its people, nothing written
            from triage.action.shadowmode import run_shadow

            return run_shadow(settings, env, reporter, event)
        if settings.mode == "plan":  # read-only: plan with the configured planner, save the plans, write nothing
            result, count = run_plan(settings, env, reporter, payload, event, action)
            path = plans_path(settings, env)
            status = report_result(result, reporter, f"{title} (plan)", rest_in=str(path), go_live=how)
            text = path.read_text(encoding="utf-8").strip()
            if nbytes(text) > OUTPUT_CAP:  # the plans file keeps them all; the output says where they are
                text, kept = capped_document(json.loads(text), rest_in=str(path))
                reporter.warning(f"the plans output holds {kept} of {count} plans (GitHub's 1 MB limit per output); "
                                 f"every plan is in the plans file, {path}")
            reporter.set_outputs({"plans-file": str(path), "plans": text, "planned": str(count)})
            return status
        result, context = run_event(settings, reporter, payload, env, event, action)
        if context is not None and context.queue_source and result.kind != "ignored":  # which queue ran
            reporter.notice(f"ptd-triage: {context.queue_source}")
            result.notes.insert(0, context.queue_source)
        note = model_note(context.planner) if context is not None else None
        result.notes.extend([note] if note else [])
        return report_result(result, reporter, title, go_live=how)
    except ActionError as exc:
        return fail(reporter, str(exc))
    except Exception as exc:  # noqa: BLE001 - the last line of defence still says one clear thing
        from triage.http.errors import HTTPError

        if isinstance(exc, HTTPError):
            return fail(reporter, str(exc))
        if env.get("RUNNER_DEBUG") == "1":
            import sys
            import traceback

            # Through the scrubber like every other line: an exception's message may carry a secret.
            print(reporter.scrub(traceback.format_exc()), file=sys.stderr, flush=True)
        return fail(reporter, f"internal error: {type(exc).__name__}: {exc}")


def fail(reporter: Reporter, message: str) -> int:
    reporter.error(message)
    try:
        reporter.set_outputs(error_outputs())
    except OSError:
        pass  # the error line above is what matters
    return 1
