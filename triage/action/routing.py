"""Routers in the style of gidgethub's `routing.Router` (and bedevere): each feature has its own small router, and
`triage.action.app` composes them into one. A route is an "event.action" key (or the event alone), a cheap check
that may answer from the payload and settings alone (most events a workflow receives are not for us: they must
cost no request and no heavy import), a second check that may answer once the configuration is read (the queue
label, the command word), a third that may answer before anything is planned (`allowed`: may the event's sender
ask this at all; a refused command is answered there, so no planner, and no model client, is ever built for it),
whether the route plans (so needs a planner), and the handler, which gets a complete
`triage.action.context.Context`.

May import: the standard library, `triage.action.context`, `triage.action.settings`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from triage.action.context import Context, Event, Result, ignored
from triage.action.settings import ActionError

Handler = Callable[[Context], Result]
Check = Callable[[Event], "Result | None"]
ConfiguredCheck = Callable[[Context], "Result | None"]


@dataclass(frozen=True)
class Route:
    key: str
    handler: Handler
    check: Check | None = None
    configured: ConfiguredCheck | None = None
    allowed: ConfiguredCheck | None = None
    plans: bool = True


class Router:
    """`Router(a, b, ...)` composes the routes of other routers; a key registered twice is a programming error."""

    def __init__(self, *others: Router) -> None:
        self._routes: dict[str, Route] = {}
        for other in others:
            for route in other._routes.values():
                self._add(route)

    def _add(self, route: Route) -> None:
        if route.key in self._routes:
            raise ValueError(f"two handlers for {route.key!r}")
        self._routes[route.key] = route

    def on(self, *keys: str, check: Check | None = None, configured: ConfiguredCheck | None = None,
           allowed: ConfiguredCheck | None = None, plans: bool = True) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for key in keys:
                self._add(Route(key, handler, check, configured, allowed, plans))
            return handler

        return register

    @property
    def events(self) -> list[str]:
        return sorted({key.split(".")[0] for key in self._routes})

    def route(self, event: str, action: str | None) -> Route | Result:
        """The route for the event, or the `ignored` result for an action no route takes; ActionError for an
        event no route knows (the workflow triggers us on something we are not built for)."""
        if event not in self.events:
            raise ActionError(
                f"event '{event}' is not handled by ptd-triage; trigger it on: {', '.join(self.events)}")
        key = f"{event}.{action}" if action else event
        found = self._routes.get(key) or self._routes.get(event)
        if found is None:
            return ignored(f"'{key}' is not an event ptd-triage acts on")
        return found
