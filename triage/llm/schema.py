"""The closed plan schema the model must answer with, built from the configuration, and the one check of an
answer against it.

Closed means: every object has `additionalProperties: false` and lists every property in `required` (what
OpenAI's strict structured output demands, and what Anthropic and Bedrock accept), and every choice is an enum
built from the configured routes and module labels, so a model cannot even name a label, a route or a template
the configuration does not have. Comments are not in the schema: a step's decision picks the template the
rubric's `comments:` section maps it to, and the policy renders it.

May import: the standard library, `triage.config` (types). The check is hand-written (no jsonschema) because it
runs on every reply and must explain itself in one line for the repair prompt.
"""
from __future__ import annotations

from typing import Any

from triage.config.bundle import Bundle

SCHEMA_NAME = "ptd_triage_plan"
MAX_REASON = 300  # characters: "a short reason"
MAX_QUOTE = 200
STEP_KEYS = ("not_distributed", "route", "modules", "type", "high_priority", "reproduction")
STEP_NUMBER = {"not_distributed": 1, "route": 2, "modules": 3, "type": 4, "high_priority": 5, "reproduction": 6}
DECISIONS = {
    "not_distributed": ("distributed", "not_distributed"),
    # not_applicable: the route's own team classifies (a route that stops after routing) or the issue is not
    # the queue's: no confidence is claimed, and "low" keeps its one meaning (vague: a person should look).
    "modules": ("high", "medium", "low", "not_applicable"),
    "type": ("none", "feature", "enhancement"),
    "high_priority": ("no_flag", "flag"),
    "reproduction": ("has_reproduction", "needs_reproduction"),
}
# Why a high-priority flag the rubric raised may be taken back (hybrid): reasons the procedure itself gives, never
# "it does not look severe" (a flag asks a person to look; it is not a severity verdict). `none`: no such reason.
REMOVAL_REASONS = ("none", "not_a_bug_report", "evidence_not_the_reporters_bug")
REMOVAL_REASON_TEXT = {
    "not_a_bug_report": "not a bug report (a request, a question, documentation or a test-infrastructure report): "
                        "step 5's criteria are about bugs",
    "evidence_not_the_reporters_bug": "the words the rubric matched are not the reporter's account of this bug "
                                      "(quoted from a template, another issue, a log line it explains, or negated)",
}


def _step(decisions: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {
        "decision": {"type": "string", "enum": decisions},
        "reason": {"type": "string", "description": f"One short sentence, at most {MAX_REASON} characters."},
        "quote": {"type": "string",
                  "description": f"Words copied from the issue that support the decision (at most {MAX_QUOTE} "
                                 "characters); empty when nothing in the issue supports it."},
    }
    props.update(extra or {})
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def module_labels(bundle: Bundle) -> list[str]:
    return [s.name for s in bundle.labels.specs if s.role == "module"]


def criteria_names(bundle: Bundle) -> list[str]:
    """Step 5's criteria, as the queue's rubric names them (the prompt describes each)."""
    high = getattr(bundle.rubric, "high_priority", None)
    names = [c.name for c in getattr(high, "criteria", ())]
    return names or ["other"]


def plan_schema(bundle: Bundle) -> dict[str, Any]:
    """The JSON Schema of a model's answer for this configuration."""
    routes = list(bundle.rubric.routes)
    props = {
        "not_distributed": _step(list(DECISIONS["not_distributed"])),
        "route": _step(routes),
        "modules": _step(list(DECISIONS["modules"]), {
            "labels": {"type": "array", "items": {"type": "string", "enum": module_labels(bundle)},
                       "description": "Module labels of the chosen route; empty when confidence is low or "
                                      "not_applicable."}}),
        "type": _step(list(DECISIONS["type"]), {
            "performance": {"type": "boolean", "description": "An enhancement about speed or memory."}}),
        "high_priority": _step(list(DECISIONS["high_priority"]), {
            "criteria": {"type": "array", "items": {"type": "string", "enum": criteria_names(bundle)},
                         "description": "The step-5 criteria the issue plausibly meets (flag when any); [] for none."},
            "removal_reason": {"type": "string", "enum": list(REMOVAL_REASONS),
                               "description": "Only when answering no_flag although the rubric's hints flag it: the "
                                              "procedural reason; otherwise none."}}),
        "reproduction": _step(list(DECISIONS["reproduction"])),
    }
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


def schema_problems(value: Any, schema: dict[str, Any], where: str = "") -> list[str]:
    """What is wrong with `value` against the subset of JSON Schema `plan_schema` uses (object, array, string,
    boolean, enum, required, additionalProperties: false); [] when it conforms."""
    here = where or "the answer"
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{here} must be an object"]
        problems = []
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{here} lacks '{key}'")
        for key, item in value.items():
            if key not in props:
                problems.append(f"{here} has an unknown key {str(key)[:40]!r}")
            else:
                problems.extend(schema_problems(item, props[key], f"{where}.{key}" if where else key))
        return problems
    if kind == "array":
        if not isinstance(value, list):
            return [f"{here} must be an array"]
        return [p for i, item in enumerate(value) for p in schema_problems(item, schema["items"], f"{here}[{i}]")]
    if kind == "string" and not isinstance(value, str):
        return [f"{here} must be a string"]
    if kind == "boolean" and not isinstance(value, bool):
        return [f"{here} must be true or false"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{here} is {str(value)[:40]!r}, not one of {', '.join(map(str, schema['enum']))}"]
    return []


__all__ = ["DECISIONS", "MAX_QUOTE", "MAX_REASON", "REMOVAL_REASONS", "REMOVAL_REASON_TEXT", "SCHEMA_NAME",
           "STEP_KEYS", "STEP_NUMBER", "criteria_names", "module_labels", "plan_schema", "schema_problems"]
