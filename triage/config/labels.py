"""The label allowlist (labels.json): which labels the bot may add, and the role each plays."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from jsonschema import Draft202012Validator

ROLES = ("sub-oncall", "module", "type", "marker", "review", "reproduction")

_SCHEMA = {
    "type": "object",
    "required": ["queue_label", "labels"],
    "properties": {
        "queue_label": {"type": "string", "minLength": 1},
        "labels": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "role", "description", "color"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 50},
                    "role": {"enum": list(ROLES)},
                    "route": {"enum": ["parallelisms", "infra", "checkpointing", None]},
                    "description": {"type": "string", "maxLength": 100},
                    "color": {"type": "string", "pattern": "^[0-9a-fA-F]{6}$"},
                },
            },
        },
    },
}


class LabelsError(ValueError):
    """labels.json is unreadable or invalid; one line naming the file."""


@dataclass(frozen=True)
class LabelSpec:
    name: str
    role: str
    route: str | None
    description: str
    color: str


@dataclass(frozen=True)
class LabelSet:
    queue_label: str
    specs: tuple[LabelSpec, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.specs)

    def role(self, name: str) -> str | None:
        for spec in self.specs:
            if spec.name == name:
                return spec.role
        return None

    def route(self, name: str) -> str | None:
        for spec in self.specs:
            if spec.name == name:
                return spec.route
        return None

    def with_role(self, role: str) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs if s.role == role)

    def _single(self, role: str) -> str:
        return self.with_role(role)[0]

    @property
    def marker(self) -> str:
        return self._single("marker")

    @property
    def review(self) -> str:
        return self._single("review")

    @property
    def reproduction(self) -> str:
        return self._single("reproduction")

    @property
    def sub_oncalls(self) -> tuple[str, ...]:
        return self.with_role("sub-oncall")


def parse_labels(data: object, path: str) -> LabelSet:
    errors = sorted(Draft202012Validator(_SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise LabelsError(f"{path}: invalid labels file at {where}: {errors[0].message}")
    assert isinstance(data, dict)
    specs = tuple(
        LabelSpec(i["name"], i["role"], i.get("route"), i["description"], i["color"]) for i in data["labels"]
    )
    names = [s.name for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise LabelsError(f"{path}: label '{duplicates[0]}' is listed twice")
    if data["queue_label"] in names:
        raise LabelsError(f"{path}: the queue label '{data['queue_label']}' must not be in the allowlist")
    for role in ("marker", "review", "reproduction"):
        count = sum(1 for s in specs if s.role == role)
        if count != 1:
            raise LabelsError(f"{path}: exactly one label must have role '{role}' (found {count})")
    if not any(s.role == "sub-oncall" for s in specs):
        raise LabelsError(f"{path}: at least one label must have role 'sub-oncall'")
    return LabelSet(queue_label=data["queue_label"], specs=specs)


def load_labels(path: str | Path) -> LabelSet:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LabelsError(f"{path}: cannot read labels ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise LabelsError(f"{path}: not valid JSON at line {exc.lineno}: {exc.msg}") from None
    return parse_labels(data, str(path))
