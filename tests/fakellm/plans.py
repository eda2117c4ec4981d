"""What the stand-in "model" answers: the provider-neutral view of a request (`Prompt`), the default plan, a
minimal instance of any requested JSON Schema, and the check that an answer matches the requested schema.
Imports: the standard library and jsonschema.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

# Answered when a request asks for no schema at all.
DEFAULT_PLAN: dict[str, Any] = {"summary": "A stand-in plan.", "steps": []}


@dataclass(frozen=True)
class Prompt:
    """What a request asked, whatever the provider: the system and user texts, the requested JSON Schema and its
    name (None when none), how it was requested (`json_schema`, `tool`, `output_config`, or `none`), and whether
    it marks its system prompt as a prompt-cache point (Anthropic's `cache_control`, Bedrock's `cachePoint`)."""

    system: str
    user: str
    schema: dict[str, Any] | None
    schema_name: str | None
    mode: str
    cache_point: bool = False  # the request marks the end of its system prompt as a prompt-cache point


def example_from_schema(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """A small instance of `schema`: every required property, the first enum value, the minimum number, the
    shortest string and array allowed. Handles local `$ref`s, `const`, `anyOf`/`oneOf`/`allOf` and type lists."""
    root = schema if root is None else root
    if depth > 40 or not isinstance(schema, dict):
        return None
    if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith("#/"):
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return example_from_schema(target, root, depth + 1)
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None] or schema["enum"]
        return copy.deepcopy(values[0])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if not (isinstance(o, dict) and o.get("type") == "null")]
            return example_from_schema((options or schema[key])[0], root, depth + 1)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example_from_schema(part, root, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        return {name: example_from_schema(props.get(name, {}), root, depth + 1) for name in required}
    if kind == "array":
        item = schema.get("items") or {}
        return [example_from_schema(item, root, depth + 1) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        if "minimum" in schema:
            return schema["minimum"]
        if "exclusiveMinimum" in schema:
            return schema["exclusiveMinimum"] + 1
        return 0
    if kind == "boolean":
        return False
    return None


def default_plan(prompt: Prompt) -> dict[str, Any]:
    """The stand-in's fixed answer for a prompt: a minimal instance of the requested schema, else DEFAULT_PLAN."""
    if prompt.schema:
        value = example_from_schema(prompt.schema)
        if isinstance(value, dict):
            return value
    return copy.deepcopy(DEFAULT_PLAN)


def plan_errors(schema: dict[str, Any] | None, plan: Any) -> list[str]:
    """Where `plan` disagrees with the requested schema ([] when it agrees or no schema was requested)."""
    if not schema:
        return []
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:200]}"
            for e in Draft202012Validator(schema).iter_errors(plan)][:5]
