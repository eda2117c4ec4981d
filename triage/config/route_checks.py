"""The routing section's own consistency: routes, precedence, default, stop_after and the topics' routes must agree
(a rubric is refused at load, and `validate` names each problem's line).

May import: the standard library.
"""
from __future__ import annotations


def route_problems(data: dict) -> list[tuple[tuple, str]]:
    """Routes, precedence, default, stop_after and topics must agree. Each problem is (where in the document,
    message); `where` is a key path, so `triage.config.validate` can turn it into a line number."""
    problems: list[tuple[tuple, str]] = []
    routing = data["routing"]
    routes = list(routing["routes"])
    precedence = list(routing["precedence"])
    for name in routes:
        if name not in precedence:
            problems.append((("routing", "precedence"), f"route '{name}' is missing from routing.precedence"))
    for i, name in enumerate(precedence):
        if name not in routes:
            problems.append((("routing", "precedence", i), f"routing.precedence names '{name}', which routing.routes does not define"))
    if routing["default"] not in routes:
        problems.append((("routing", "default"), f"routing.default '{routing['default']}' is not in routing.routes"))
    for i, name in enumerate(routing.get("stop_after", [])):
        if name not in routes:
            problems.append((("routing", "stop_after", i), f"routing.stop_after names '{name}', which routing.routes does not define"))
    unlabelled = [name for name, spec in routing["routes"].items() if spec.get("label") is None]
    for name in unlabelled[1:]:
        problems.append((("routing", "routes", name, "label"),
                         f"route '{name}' adds no label, and so does '{unlabelled[0]}': at most one route may"))
    for name, spec in data["topics"].items():
        if spec.get("route") is not None and spec["route"] not in routes:
            problems.append((("topics", name, "route"), f"topic '{name}' points at route '{spec['route']}', which routing.routes does not define"))
    return problems


def route_problem(data: dict) -> tuple[tuple, str] | None:
    found = route_problems(data)
    return found[0] if found else None
