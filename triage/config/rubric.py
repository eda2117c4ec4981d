"""Loading the rubric: YAML, checked against `rubric.schema.json`, compiled into matchers.

All of the triage knowledge (which words point at which module, which phrasing suggests a
regression, how much a traceback frame counts) is data in the YAML. This module only checks its
shape, compiles its regular expressions, and reports the first problem in one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator

from triage.text.matching import Signal, compile_signal

ROUTES = ("parallelisms", "infra", "checkpointing")


class RubricError(ValueError):
    """The rubric file is unreadable or invalid; the message is one line naming the file."""


@dataclass(frozen=True)
class Topic:
    name: str
    label: str | None
    route: str
    signals: tuple[Signal, ...]


@dataclass(frozen=True)
class Gate:
    """A yes/no decision: the signals' total must reach `min_score`."""

    min_score: float
    signals: tuple[Signal, ...]


@dataclass(frozen=True)
class RouteRule:
    label: str
    min_score: float
    min_ratio: float
    signals: tuple[Signal, ...]


@dataclass(frozen=True)
class Rubric:
    path: str
    environment_heading: re.Pattern[str]
    comment_separator: re.Pattern[str] | None
    locations: dict[str, float]
    topics: tuple[Topic, ...]
    default_route: str
    precedence: tuple[str, ...]
    existing_module_weight: float
    routes: dict[str, RouteRule]
    stop_after: tuple[str, ...]
    checks_on_every_route: tuple[str, ...]
    not_distributed: Gate
    max_distributed_score: float
    module_high: float
    module_medium: float
    module_min_share: float
    feature: Gate
    enhancement: Gate
    performance: Gate
    high_priority: Gate
    reproduction: Gate

    def route_label(self, route: str) -> str:
        return self.routes[route].label

    def route_of_label(self, label: str) -> str | None:
        for route, rule in self.routes.items():
            if rule.label == label:
                return route
        return None


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    schema = json.loads((Path(__file__).with_name("rubric.schema.json")).read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def _where(error) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def _regex(source: str, path: str, what: str) -> re.Pattern[str]:
    try:
        return re.compile(source, re.MULTILINE)
    except re.error as exc:
        raise RubricError(f"{path}: {what} is not a valid regular expression ({exc})") from None


def compile_rubric(data: object, path: str) -> Rubric:
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        raise RubricError(f"{path}: invalid rubric at {_where(first)}: {first.message}")
    assert isinstance(data, dict)
    seen: set[str] = set()

    def signals(raw: list[dict], where: str) -> tuple[Signal, ...]:
        out = []
        for item in raw:
            if item["id"] in seen:
                raise RubricError(f"{path}: signal id '{item['id']}' is used twice (ids must be unique)")
            seen.add(item["id"])
            try:
                out.append(compile_signal(item, where=f"{path}: {where}"))
            except ValueError as exc:
                raise RubricError(str(exc)) from None
        return tuple(out)

    def gate(raw: dict, where: str) -> Gate:
        return Gate(float(raw["min_score"]), signals(raw["signals"], where))

    topics = tuple(
        Topic(name, spec.get("label"), spec["route"], signals(spec["signals"], f"topics/{name}"))
        for name, spec in data["topics"].items()
    )
    routing = data["routing"]
    routes = {
        name: RouteRule(
            label=spec["label"],
            min_score=float(spec.get("min_score", 0)),
            min_ratio=float(spec.get("min_ratio", 0)),
            signals=signals(spec.get("signals", []), f"routing/routes/{name}"),
        )
        for name, spec in routing["routes"].items()
    }
    text = data["text"]
    nd = data["not_distributed"]
    mods = data["modules"]
    if mods["medium"] > mods["high"]:
        raise RubricError(f"{path}: modules.medium must not exceed modules.high")
    return Rubric(
        path=path,
        environment_heading=_regex(text["environment_heading"], path, "text.environment_heading"),
        comment_separator=_regex(text["comment_separator"], path, "text.comment_separator")
        if text.get("comment_separator")
        else None,
        locations={k: float(v) for k, v in data["locations"].items()},
        topics=topics,
        default_route=routing["default"],
        precedence=tuple(routing["precedence"]),
        existing_module_weight=float(routing["existing_module_weight"]),
        routes=routes,
        stop_after=tuple(routing.get("stop_after", ["infra", "checkpointing"])),
        checks_on_every_route=tuple(routing.get("checks_on_every_route", [])),
        not_distributed=Gate(float(nd["min_trap_score"]), signals(nd["signals"], "not_distributed")),
        max_distributed_score=float(nd["max_distributed_score"]),
        module_high=float(mods["high"]),
        module_medium=float(mods["medium"]),
        module_min_share=float(mods["min_share"]),
        feature=gate(data["types"]["feature"], "types/feature"),
        enhancement=gate(data["types"]["enhancement"], "types/enhancement"),
        performance=gate(data["types"]["performance"], "types/performance"),
        high_priority=gate(data["high_priority"], "high_priority"),
        reproduction=gate(data["reproduction"], "reproduction"),
    )


def load_rubric(path: str | Path) -> Rubric:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RubricError(f"{path}: cannot read rubric ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise RubricError(f"{path}: not valid YAML{where}: {problem}") from None
    return compile_rubric(data, str(path))
