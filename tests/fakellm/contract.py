"""The LLM providers' contracts, from the in-repo copies in tests/contract/llm/ (see SOURCES.md there).

OpenAI: the request body, the 200 body and the error body from OpenAI's published OpenAPI description (reduced to
JSON Schema 2020-12), the documented statuses (200, 429) and the 429 `Retry-After` header. Anthropic and Bedrock:
hand-written JSON Schemas of the documented shapes, the documented status of each error type, and Bedrock's
error header. Imports: the standard library and jsonschema.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

CONTRACT_DIR = Path(__file__).resolve().parents[1] / "contract" / "llm"
FILES = {"openai": "openai-chat-completions.schema.json", "anthropic": "anthropic-messages.schema.json",
         "bedrock": "bedrock-converse.schema.json"}


@functools.cache
def document(provider: str) -> dict:
    return json.loads((CONTRACT_DIR / FILES[provider]).read_text(encoding="utf-8"))


@functools.cache
def validator(provider: str, definition: str) -> Draft202012Validator:
    doc = document(provider)
    if definition not in doc["$defs"]:
        raise KeyError(f"{provider} contract has no $defs/{definition}")
    return Draft202012Validator({"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"})


def errors(provider: str, definition: str, instance: Any, limit: int = 5) -> list[str]:
    """Where `instance` disagrees with `$defs/definition` ([] when it agrees), one line each."""
    found = []
    for err in validator(provider, definition).iter_errors(instance):
        found.append(f"{'/'.join(map(str, err.absolute_path)) or '<root>'}: {err.message[:200]}")
        if len(found) >= limit:
            break
    return found


# ---- OpenAI -----------------------------------------------------------------------------------------------------

def openai_request_errors(body: Any) -> list[str]:
    return errors("openai", "CreateChatCompletionRequest", body)


def openai_response_errors(status: int, headers: dict[str, str], body: Any) -> list[str]:
    """200 -> the chat completion object; 429 -> the error body and an integer Retry-After >= 1 when present;
    any other status (401, 400, 500, 503 exist in practice but are not described) -> the error body."""
    op = document("openai")["operation"]
    if status == 200:
        return errors("openai", "CreateChatCompletionResponse", body)
    if 200 < status < 400:
        return [f"status {status} is not a documented response of {op['operationId']}"]
    problems = errors("openai", "ErrorResponse", body)
    if status == 429:
        value = {k.lower(): v for k, v in headers.items()}.get("retry-after")
        if value is not None:
            schema = op["responses"]["429"]["headers"]["Retry-After"]["schema"]
            parsed: Any = int(value) if value.strip().isdigit() else value
            problems += [f"Retry-After {value!r}: {e.message}"
                         for e in Draft202012Validator(schema).iter_errors(parsed)]
    return problems


def openai_strict_schema_errors(schema: Any, where: str = "()") -> list[str]:
    """What OpenAI's strict structured output refuses: a root that is not an object, and any object without
    `additionalProperties: false` or with a property missing from `required`."""
    problems: list[str] = []
    if where == "()" and (not isinstance(schema, dict) or schema.get("type") != "object"):
        return ["In context=(), schema must be a JSON Schema of 'type: \"object\"'"]

    def walk(node: Any, path: str) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{path}, {i}")
            return
        if not isinstance(node, dict):
            return
        types = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
        if "object" in types or "properties" in node:
            if node.get("additionalProperties") is not False:
                problems.append(f"In context=({path}), 'additionalProperties' is required to be supplied and to be "
                                "false.")
            props = list((node.get("properties") or {}).keys())
            missing = [p for p in props if p not in (node.get("required") or [])]
            if missing:
                problems.append(f"In context=({path}), 'required' is required to be supplied and to be an array "
                                f"including every key in properties. Missing '{missing[0]}'.")
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions"):
                for name, sub in (value or {}).items():
                    walk(sub, f"{path}, '{key}', '{name}'" if path else f"'{key}', '{name}'")
            elif key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
                walk(value, f"{path}, '{key}'" if path else f"'{key}'")

    walk(schema, "")
    return problems


# ---- Anthropic --------------------------------------------------------------------------------------------------

def anthropic_request_errors(body: Any) -> list[str]:
    return errors("anthropic", "MessagesRequest", body)


def anthropic_response_errors(status: int, body: Any) -> list[str]:
    if status == 200:
        return errors("anthropic", "Message", body)
    problems = errors("anthropic", "ErrorResponse", body)
    expected = document("anthropic")["operation"]["errorTypes"].get(str(status))
    actual = (body.get("error") or {}).get("type") if isinstance(body, dict) else None
    if expected and actual != expected:
        problems.append(f"status {status} is documented with error type {expected!r}, got {actual!r}")
    if not 400 <= status < 600:
        problems.append(f"status {status} is not a documented response")
    return problems


# ---- Bedrock ----------------------------------------------------------------------------------------------------

def bedrock_request_errors(body: Any) -> list[str]:
    return errors("bedrock", "ConverseRequest", body)


def bedrock_response_errors(status: int, headers: dict[str, str], body: Any) -> list[str]:
    if status == 200:
        return errors("bedrock", "ConverseResponse", body)
    op = document("bedrock")["operation"]
    problems = errors("bedrock", "ErrorBody", body)
    raw = {k.lower(): v for k, v in headers.items()}.get(op["errorHeader"].lower())
    if not raw:
        return problems + [f"error response without an {op['errorHeader']} header"]
    name = raw.split(":", 1)[0]
    if name not in op["errors"]:
        problems.append(f"{name!r} is not a documented Converse error")
    elif op["errors"][name] != status:
        problems.append(f"{name} is documented with status {op['errors'][name]}, sent {status}")
    return problems
