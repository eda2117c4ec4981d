"""GitHub's REST contract for the operations the stand-in serves (from the in-repo copy in tests/contract/).

Routes, request-body schemas and response schemas come straight from the OpenAPI-derived JSON Schemas, so the
stand-in cannot drift from GitHub: every response it sends is validated against them. The 14 operations of the
shared copy are joined by the few extra ones `reduce_contract.py` converted from the same OpenAPI file
(`rest/operations-extra.jsonschema.min.json`, see SOURCES.md).
"""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from jsonschema import Draft202012Validator

CONTRACT_DIR = Path(__file__).resolve().parents[1] / "contract"
REST_DIR = CONTRACT_DIR / "rest"

# Error statuses the stand-in may send for any operation even where the OpenAPI description does not list them
# (e.g. 401 for bad credentials); their bodies must still have GitHub's basic-error shape.
BASIC_ERROR_SCHEMA = {
    "type": "object",
    "required": ["message"],
    "properties": {"message": {"type": "string"}, "documentation_url": {"type": "string"}},
}


# Path parameters whose value may itself contain slashes (a file path in the repository).
MULTI_SEGMENT_PARAMS = frozenset({"path"})


def _load(name: str) -> dict:
    return json.loads((REST_DIR / name).read_text(encoding="utf-8"))


@functools.cache
def operations() -> dict[str, dict]:
    return {**_load("operations.jsonschema.min.json"), **_load("operations-extra.jsonschema.min.json")}


@functools.cache
def examples() -> dict[str, dict]:
    return {**_load("examples.json"), **_load("examples-extra.json")}


def example(op_key: str, status: str = "200", name: str = "default"):
    return json.loads(json.dumps(examples()[op_key][status][name]))  # a fresh deep copy


@functools.cache
def routes() -> list[tuple[str, re.Pattern, str]]:
    """(method, compiled path regex with named groups, operation key) for every contract operation."""
    table = []
    for key in operations():
        method, template = key.split(" ", 1)
        pattern = re.sub(r"\{(\w+)\}", lambda m: f"(?P<{m[1]}>{'.+' if m[1] in MULTI_SEGMENT_PARAMS else '[^/]+'})",
                         template)
        table.append((method, re.compile(pattern + "$"), key))
    return table


def match_route(method: str, path: str) -> tuple[str, dict[str, str]] | None:
    for route_method, regex, key in routes():
        found = regex.match(path)
        if found and route_method == method:
            return key, {name: unquote(value) for name, value in found.groupdict().items()}
    return None


@functools.cache
def _validator(op_key: str, part: str, status: str | None = None) -> Draft202012Validator | None:
    op = operations()[op_key]
    if part == "request":
        schema = (op.get("requestBody") or {}).get("schema")
    else:
        response = op["responses"].get(status)
        if response is None:
            schema = BASIC_ERROR_SCHEMA if int(status) >= 400 else None
            if schema is None:
                raise KeyError(status)
        else:
            schema = response.get("schema")
    return Draft202012Validator(schema) if schema is not None else None


def _errors(validator: Draft202012Validator, instance) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:200]}"
            for e in validator.iter_errors(instance)]


def request_body_errors(op_key: str, body) -> list[str]:
    validator = _validator(op_key, "request")
    if validator is None:
        return []
    if body is None:
        required = (operations()[op_key].get("requestBody") or {}).get("required")
        return ["request body is required"] if required else []
    return _errors(validator, body)


@functools.cache
def rate_limit_facts() -> dict:
    return _load("rate-limits.json")


_LINK_RE = re.compile(r'<([^>]+)>; rel="(next|prev|first|last)"')


def header_errors(op_key: str | None, status: int, headers: dict[str, str], path: str) -> list[str]:
    """Contract violations of a response's headers, [] when they agree:
    - the `x-ratelimit-*` headers (GitHub Docs, rate-limits.json): when any is sent, all five are, the numbers are
      integers with remaining = limit - used, and the resource is one of GET /rate_limit's resources;
    - `Link` (documented on the paged operations): only on an operation that documents it, each part
      `<URL>; rel="next|prev|first|last"`, every URL the request's own path with a `page` parameter."""
    found: list[str] = []
    lower = {name.lower(): value for name, value in headers.items()}
    names = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset",
             "x-ratelimit-resource")
    if any(name in lower for name in names):
        missing = [name for name in names if name not in lower]
        if missing:
            found.append(f"rate-limit headers without {', '.join(missing)}")
        else:
            numbers = {name: lower[name] for name in names[:4]}
            if not all(value.isdigit() for value in numbers.values()):
                found.append(f"rate-limit headers that are not integers: {numbers}")
            elif int(numbers["x-ratelimit-remaining"]) != int(numbers["x-ratelimit-limit"]) - int(
                    numbers["x-ratelimit-used"]):
                found.append(f"x-ratelimit-remaining is not limit - used: {numbers}")
            if lower["x-ratelimit-resource"] not in rate_limit_facts()["rate_limit_resources_in_GET_rate_limit_schema"]:
                found.append(f"unknown x-ratelimit-resource {lower['x-ratelimit-resource']!r}")
    if "link" in lower:
        documented = op_key is not None and "Link" in (operations()[op_key]["responses"].get(str(status)) or {}).get(
            "headers", [])
        if not documented and path != "/search/issues":  # the search pages too; its description omits it
            found.append(f"a Link header on {op_key or path}, which documents none")
        parts = [part.strip() for part in lower["link"].split(",")]
        for part in parts:
            match = _LINK_RE.fullmatch(part)
            if not match:
                found.append(f"malformed Link part {part!r}")
            elif urlsplit(match[1]).path != path or "page=" not in urlsplit(match[1]).query:
                found.append(f"Link {match[2]} points elsewhere: {match[1]}")
    return found


def response_errors(op_key: str, status: int, body) -> list[str]:
    """Contract violations of a response, [] when it agrees. A success status the contract does not list for the
    operation is itself a violation."""
    try:
        validator = _validator(op_key, "response", str(status))
    except KeyError:
        return [f"status {status} is not a documented response of {op_key}"]
    if validator is None:
        return [] if body is None else [f"status {status} of {op_key} has no JSON body in the contract"]
    return _errors(validator, body)
