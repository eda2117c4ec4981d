"""The gold answer of a dataset row, and how it is derived from the labels people gave an issue.

`gold` = {route, modules, high_priority, type, not_distributed, labels}. `route` is a route of the queue's rubric,
`either` (the issue's module labels point at several of the routes labels.json `gold.either` names: each of them
is right), or null (not scored). `derive_gold` is the dataset README's derivation, used by `replay` to build rows
from a live repository; everything it knows about the queue comes from the configuration:
- `route`: the route of the issue's sub-oncall label when it has exactly one; else the one route its module labels
  point at (labels.json `route`, and `gold.module_routes` for module labels outside the allowlist); `either` when
  they point at several routes that `gold.either` names together; else, with no route pointed at, the route whose
  team adds no label (if the queue has one); else null;
- `modules`: its module labels in the allowlist; `type`: the kind of its type label (feature or enhancement).

May import: the standard library, `triage.config`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from triage.config.labels import Role
from triage.config.names import RESERVED_LABELS

EITHER = "either"  # gold for an issue whose module labels point at several routes: each is right
GOLD_TYPES = ("feature", "enhancement")  # step 4's request kinds, as the dataset's `gold.type` names them

# The label a person gives to confirm high priority: the reserved one the bot may never add.
(HIGH_PRIORITY_LABEL,) = RESERVED_LABELS


@dataclass(frozen=True)
class Gold:
    route: str | None
    modules: tuple[str, ...]
    high_priority: bool
    type: str | None
    not_distributed: bool
    labels: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "modules": list(self.modules),
            "high_priority": self.high_priority,
            "type": self.type,
            "not_distributed": self.not_distributed,
            "labels": list(self.labels),
        }


def _one_of(obj: dict, key: str, allowed: tuple[str, ...]) -> str | None:
    value = obj.get(key)
    if value is not None and value not in allowed:
        raise ValueError(f"gold.{key} must be one of {', '.join(allowed)} or null, not {value!r}")
    return value


def _names(obj: dict, key: str) -> tuple[str, ...]:
    value = obj.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"gold.{key} must be a list of label names")
    return tuple(value)


def gold_from_json(obj: Any) -> Gold:
    """Validate and parse a `gold` object; raises ValueError with a short message."""
    if not isinstance(obj, dict):
        raise ValueError("'gold' must be a JSON object")
    for key in ("high_priority", "not_distributed"):
        if not isinstance(obj.get(key, False), bool):
            raise ValueError(f"gold.{key} must be true or false")
    route = obj.get("route")
    if route is not None and (not isinstance(route, str) or not route):
        raise ValueError(f"gold.route must be a route name or null, not {route!r}")
    return Gold(
        route=route,  # checked against the configuration's routes by `dataset.check_routes`
        modules=_names(obj, "modules"),
        high_priority=obj.get("high_priority", False),
        type=_one_of(obj, "type", GOLD_TYPES),
        not_distributed=obj.get("not_distributed", False),
        labels=_names(obj, "labels"),
    )


def gold_routes(bundle) -> tuple[str, ...]:
    """The values a gold route may take with this configuration: its routes, and `either` when it declares one."""
    return (*bundle.rubric.precedence, *((EITHER,) if bundle.labels.either_routes else ()))


def module_routes(bundle) -> dict[str, str]:
    """Module label -> the route it points at: labels.json modules with a `route`, and its `gold.module_routes`."""
    routes = dict(bundle.labels.gold_module_routes)
    routes.update({spec.name: spec.route for spec in bundle.labels.specs if spec.role == Role.MODULE and spec.route})
    return routes


def derive_gold(labels_today: Iterable[str], bundle) -> Gold:
    """The dataset README's derivation of `gold` from the labels people gave (see the module doc)."""
    labels, rubric = bundle.labels, bundle.rubric
    names = list(dict.fromkeys(labels_today))
    chosen = [route for route in map(rubric.route_of_label, names) if route is not None]
    pointed = {route for name, route in module_routes(bundle).items() if name in names}
    if len(chosen) == 1:
        route: str | None = chosen[0]
    elif len(pointed) == 1:
        route = pointed.pop()
    elif len(pointed) > 1:
        # Several teams' modules: `either` when the queue says those routes overlap; otherwise the procedure gives
        # no precedence to go by, and the issue is not scored.
        route = EITHER if pointed <= set(labels.either_routes) else None
    else:
        route = rubric.unlabelled_route if not chosen else None
    allowed_modules = set(labels.with_role(Role.MODULE))
    return Gold(
        route=route,
        modules=tuple(name for name in names if name in allowed_modules),
        high_priority=HIGH_PRIORITY_LABEL in names,
        type=next((kind for kind in GOLD_TYPES if kind_label(labels, kind) in names), None),
        # People mark a mis-queued issue by moving it elsewhere; replay cannot tell that apart, so never claims it.
        not_distributed=False,
        labels=tuple(names),
    )


def kind_label(labels, kind: str) -> str | None:
    """The label of a type kind (feature, enhancement, performance), or None when the label set has none."""
    try:
        return getattr(labels, kind)
    except KeyError:
        return None
