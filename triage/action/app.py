"""The Action's app: the feature routers composed into one (as bedevere's `__main__` does), and one event run
through it: find the route; let its cheap check answer from the payload alone; else read the configuration
(`build_context`) and let the route's second check answer from it; else let the route's third check answer (may
the sender ask this: a refused command is answered there); else build the planner and the triage service
(`with_planner`, for a route that plans: only now, so an event that is not ours, or a refused command, never
builds a model client) and call the handler. Each stage is an explicit call here, in order.

May import: the standard library, `triage.action.context`, `triage.action.report`, `triage.action.routing`,
`triage.action.settings`, `triage.action.routers.*`, `triage.planners.base` (a type only).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from triage.action.context import Context, Event, Result, build_context, planner_for_settings, with_planner
from triage.action.report import Reporter
from triage.action.routers import command, labels_sync, queue_label, sweep
from triage.action.routing import Router
from triage.action.settings import Settings

if TYPE_CHECKING:
    from triage.planners.base import Planner

router = Router(queue_label.router, command.router, sweep.router, labels_sync.router)


def run_event(settings: Settings, reporter: Reporter, payload: Mapping[str, Any], environ: Mapping[str, str],
              event: str, action: str | None, *, client: Any = None,
              planner: Planner | None = None, make_planner: Callable[[], Planner] | None = None,
              precheck: Callable | None = None) -> tuple[Result, Context | None]:
    """The event's result, and the context when one was built (None when the event was answered without it).
    The planner is `planner`, or `make_planner()`, or the one the inputs name: built only for a route that plans,
    once every check has let the event through."""
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
    early = found.allowed(context) if found.allowed else None
    if early is not None:
        return early, context
    if found.plans:
        built = planner if planner is not None else make_planner() if make_planner is not None else \
            planner_for_settings(settings, environ)
        context = with_planner(context, built, precheck=precheck)
    return found.handler(context), context
