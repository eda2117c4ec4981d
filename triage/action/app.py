"""The Action's app: the feature routers composed into one (as bedevere's `__main__` does), and one event run
through it: find the route; let its cheap check answer from the payload alone; else read the configuration
(`build_context`) and let the route's second check answer from it; else build the planner and the triage service
(`with_planner`, for a route that plans) and call the handler. Each stage is an explicit call here, in order.

May import: the standard library, `triage.action.context`, `triage.action.report`, `triage.action.routing`,
`triage.action.settings`, `triage.action.routers.*`.
"""
from __future__ import annotations

from typing import Any, Mapping

from triage.action.context import Context, Event, Result, build_context, planner_for_settings, with_planner
from triage.action.report import Reporter
from triage.action.routers import command, labels_sync, queue_label, sweep
from triage.action.routing import Router
from triage.action.settings import Settings

router = Router(queue_label.router, command.router, sweep.router, labels_sync.router)


def run_event(settings: Settings, reporter: Reporter, payload: Mapping[str, Any], environ: Mapping[str, str],
              event: str, action: str | None, *, client: Any = None,
              planner: Any = None, precheck: Any = None) -> tuple[Result, Context | None]:
    """The event's result, and the context when one was built (None when the event was answered without it)."""
    if event == "workflow_dispatch" and settings.task:
        action = settings.task  # the task input picks the route: workflow_dispatch.labels-sync
    found = router.route(event, action)
    if isinstance(found, Result):
        return found, None
    seen = Event(event, action, settings, payload)
    early = found.check(seen) if found.check else None
    if early is not None:
        return early, None
    context = build_context(settings, reporter, payload, client=client, parsed=seen.parsed)
    early = found.configured(context) if found.configured else None
    if early is not None:
        return early, None
    if found.plans:
        planner = planner if planner is not None else planner_for_settings(settings, environ)
        context = with_planner(context, planner, precheck=precheck)
    return found.handler(context), context
