"""The closed plan schema the model must answer with, built from the configuration, and the one check of an
answer against it.

Closed means: every object has `additionalProperties: false` and lists every property in `required` (what
OpenAI's strict structured output demands, and what Anthropic and Bedrock accept), and every choice is an enum
built from the configured routes and module labels and from the procedure's own decision words
(`triage.core.vocab`), so a model cannot even name a label, a route or a template the configuration does not have.
Comments are not in the schema: a step's decision picks the template the rubric's `comments:` section maps it to,
and the policy renders it.

May import: the standard library, `triage.config` (types), `triage.core.vocab`. The check is hand-written (no
jsonschema) because it runs on every reply and must explain itself in one line for the repair prompt.
"""
from __future__ import annotations

from typing import Any

from triage.config.bundle import Bundle
from triage.core.vocab import Confidence, Flag, InQueue, Reproduction, Role, TypeKind

SCHEMA_NAME = "ptd_triage_plan"
MAX_REASON = 300  # characters: "a short reason"
MAX_QUOTE = 200
# The answer's part for each judgement step (step 0 is a fact about labels, never asked).
PARTS = {1: "not_distributed", 2: "route", 3: "modules", 4: "type", 5: "high_priority", 6: "reproduction"}
# Step 3's answer when no confidence is claimed: the route's own team classifies (a route that stops after
# routing) or the issue is not the queue's; "low" keeps its one meaning (vague: a person should look).
NOT_APPLICABLE = "not_applicable"
# Each step's answer words, the procedure's decisions (the order is the schema's, as models have been asked).
DECISIONS: dict[str, tuple[str, ...]] = {
    "not_distributed": (InQueue.YES, InQueue.NO),
    "modules": (Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW, NOT_APPLICABLE),
    "type": (TypeKind.NONE, TypeKind.FEATURE, TypeKind.ENHANCEMENT),
    "high_priority": (Flag.NO_FLAG, Flag.FLAG),
    "reproduction": (Reproduction.HAS, Reproduction.NEEDS),  # `request` is the procedure's, never the model's
}
# Step 5: why an issue is not flagged. Every `no_flag` answer names one (and quotes the issue for it), so a reading
# that clears a rubric's flag is a reason the procedure gives, checkable against the issue, never "it does not look
# severe" (a flag asks a person to look; it is not a severity verdict). The values cover what the procedure means
# by "not high priority". `none` is a flag's value. The names and this order are the schema's (a stand-in's minimal
# answer takes the first); the texts are the procedure's words for a queue whose rubric gives none of its own
# (`high_priority.no_flag_reasons`, in the queue's words and order: `no_flag_reasons`).
NO_FLAG_REASONS: dict[str, str] = {
    "no_criterion_met": "a bug report that, read as stated, meets none of the criteria: an ordinary error or "
                        "exception with its message, a failure while starting or configuring; or a criterion's "
                        "words that are not this bug's (negated, as in \"no crash\"; quoted from a template, "
                        "another issue or a log line it explains)",
    "not_met_where_it_runs": "it would meet a criterion only where the criterion says it happens, and the issue "
                             "shows it does not happen there",
    "third_party_code": "the failure is in the reporter's own code or in software they bring (their scripts, "
                        "plugins or extensions, another project), not in the code this queue triages",
    "reporter_setup_or_misuse": "the reporter's own setup or misuse causes it, as the issue shows (a wrong "
                                "configuration or environment variable, a network, driver or installation problem "
                                "on their machines)",
    "docs_or_test_report": "a documentation problem or a test-infrastructure report (a DISABLED or flaky test, a "
                           "CI job), whatever its log shows: not a bug in what users run",
    str(InQueue.NO): "step 1 found the issue is not this queue's at all",
    "not_a_bug_report": "not a bug report: a feature or enhancement request (a performance one included), or a "
                        "usage question",
}
# When several fit, the first in this order is the answer: what the issue is (not the queue's, not a bug report, a
# docs or test report) before whose code or setup fails, and "no criterion met" last, when nothing else says why.
NO_FLAG_ORDER = (str(InQueue.NO), "not_a_bug_report", "docs_or_test_report", "third_party_code",
                 "reporter_setup_or_misuse", "not_met_where_it_runs", "no_criterion_met")
NO_FLAG_NONE = "none"
NO_FLAG_VALUES = (*NO_FLAG_REASONS, NO_FLAG_NONE)


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


def no_flag_reasons(bundle: Bundle) -> dict[str, str]:
    """The no_flag reasons as this queue states them, in the order the first that fits is taken: the rubric's
    `high_priority.no_flag_reasons` (its order first), the procedure's words for any it does not state."""
    own = dict(getattr(getattr(bundle.rubric, "high_priority", None), "no_flag_reasons", None) or {})
    order = [name for name in own if name in NO_FLAG_REASONS] + [n for n in NO_FLAG_ORDER if n not in own]
    return {name: own.get(name) or NO_FLAG_REASONS[name] for name in order}


def no_flag_reason_text(value: Any) -> str:
    """What a `no_flag_reason` answer means, in words ("" for none, or for a word the list does not have)."""
    return NO_FLAG_REASONS.get(str(value or NO_FLAG_NONE), "")


def module_labels(bundle: Bundle) -> list[str]:
    return [s.name for s in bundle.labels.specs if s.role == Role.MODULE]


def criteria_names(bundle: Bundle) -> list[str]:
    """Step 5's criteria, as the queue's rubric names them (the prompt describes each)."""
    high = getattr(bundle.rubric, "high_priority", None)
    names = [c.name for c in getattr(high, "criteria", ())]
    return names or ["other"]


def plan_schema(bundle: Bundle) -> dict[str, Any]:
    """The JSON Schema of a model's answer for this configuration: one part per judgement step (`PARTS`)."""
    extra: dict[str, dict[str, Any]] = {
        "modules": {"labels": {"type": "array", "items": {"type": "string", "enum": module_labels(bundle)},
                               "description": "Module labels of the chosen route; empty when confidence is low or "
                                              "not_applicable."}},
        "type": {"performance": {"type": "boolean", "description": "An enhancement about speed or memory."}},
        "high_priority": {
            "criteria": {"type": "array", "items": {"type": "string", "enum": criteria_names(bundle)},
                         "description": "flag: every step-5 criterion the issue plausibly meets (at least one); "
                                        "no_flag: []."},
            "no_flag_reason": {"type": "string", "enum": list(NO_FLAG_VALUES),
                               "description": "no_flag: why no criterion is met, the first of these that fits: "
                               + "; ".join(f"{name}: {text}" for name, text in no_flag_reasons(bundle).items())
                               + ". flag: none. The step's quote supports it."}},
    }
    decisions = dict(DECISIONS, route=tuple(bundle.rubric.routes))
    props = {part: _step([str(d) for d in decisions[part]], extra.get(part)) for part in PARTS.values()}
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


__all__ = ["DECISIONS", "MAX_QUOTE", "MAX_REASON", "NOT_APPLICABLE", "NO_FLAG_NONE", "NO_FLAG_ORDER",
           "NO_FLAG_REASONS", "NO_FLAG_VALUES", "PARTS", "SCHEMA_NAME", "criteria_names", "module_labels",
           "no_flag_reason_text", "no_flag_reasons", "plan_schema", "schema_problems"]
