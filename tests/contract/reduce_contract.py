"""Refresh tests/contract/ from the shared github-contract folder (run by hand, not by pytest).

Usage: python tests/contract/reduce_contract.py [SHARED_GITHUB_CONTRACT_DIR] [--openapi API_GITHUB_COM_JSON]
Default source: $PTD_SHARED_DIR/github-contract, else ../shared/github-contract next to the repository.

`--openapi` points at `generated/api.github.com.json` of npm `@octokit/openapi@23.0.2` (the very file the shared
folder was extracted from; its sha256 is checked). The shared folder has 14 operations; the client needs a few more
(EXTRA_OPERATIONS), which are converted here the way the shared folder's were ($refs dereferenced, OpenAPI 3.0
`nullable` turned into a JSON Schema 2020-12 type list) and written to `rest/operations-extra.jsonschema.min.json`
and `rest/examples-extra.json`. Without `--openapi` those two files are left as they are.

Why a reduction: rest/operations.json (2 MB) and rest/operations.jsonschema.json (1.4 MB, indented) are more
than the tests need. We keep the JSON-Schema file whole but compact (no indentation, same content), and from
operations.json keep only the response examples (the REST-shaped objects the stand-in builds its state from).
Everything else is copied byte-for-byte. See SOURCES.md.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

COPIED = [
    "rest/rate-limits.json",
    "schemas/github-action.json",
    "schemas/github-workflow.json",
    "webhooks/schemas/issues.labeled.schema.json",
    "webhooks/schemas/issues.opened.schema.json",
    "webhooks/schemas/issue_comment.created.schema.json",
    "webhooks/schemas/workflow_dispatch.schema.json",
]


# Operations the client uses beyond the shared folder's 14 (see SOURCES.md).
EXTRA_OPERATIONS = [
    "GET /repos/{owner}/{repo}/contents/{path}",
    "GET /repos/{owner}/{repo}/labels/{name}",
    "PATCH /repos/{owner}/{repo}/labels/{name}",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/reactions",  # the comment claim (issue 20)
    # The claim taken over from a reaction nobody is using, and a duplicate comment of ours removed (issue 30).
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/reactions/{reaction_id}",
    "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}",
]
OPENAPI_SHA256 = "829b4bebb19a53133289f7b0bc819f4f1118115821db2ca9f25e9ee995a7da2a"  # @octokit/openapi@23.0.2
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _source_dir(argv: list[str]) -> Path:
    if len(argv) > 1:
        return Path(argv[1])
    shared = Path(os.environ.get("PTD_SHARED_DIR") or REPO.parent / "shared")
    return shared / "github-contract"


def _write_compact(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")


def _resolve(spec: dict, ref: str):
    node = spec
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _to_json_schema(spec: dict, node, seen: tuple[str, ...] = ()):
    """An OpenAPI 3.0 schema as JSON Schema 2020-12: `$ref`s inlined (tagged `x-component` like the shared copy),
    `nullable: true` folded into `type` (or into an `anyOf` with null when there is no `type`)."""
    if isinstance(node, list):
        return [_to_json_schema(spec, item, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            raise ValueError(f"cyclic $ref {ref}")
        resolved = _to_json_schema(spec, _resolve(spec, ref), seen + (ref,))
        if ref.startswith("#/components/schemas/") and isinstance(resolved, dict):
            resolved = dict(resolved, **{"x-component": ref.rsplit("/", 1)[1]})
        return resolved
    out = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs"):
            out[key] = {name: _to_json_schema(spec, sub, seen) for name, sub in value.items()}
        elif key == "x-github-breaking-changes":
            out[key] = copy.deepcopy(value)  # documentation of future changes, not a schema: kept verbatim
        elif key in ("nullable", "example", "deprecated"):
            continue  # OpenAPI annotations the shared conversion dropped too; they constrain nothing
        else:
            out[key] = _to_json_schema(spec, value, seen)
    if node.get("nullable") is True:
        if "type" in out:
            types = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = types + (["null"] if "null" not in types else [])
            if "enum" in out and None not in out["enum"]:
                out["enum"] = out["enum"] + [None]  # else the enum alone would still refuse null
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def _schema(spec: dict, node) -> dict | None:
    if node is None:
        return None
    return {"$schema": SCHEMA_DIALECT, **_to_json_schema(spec, node)}


def convert_operation(spec: dict, key: str) -> tuple[dict, dict]:
    """(the operation reduced to what validation needs, its application/json response examples) for one
    "METHOD /path" of the OpenAPI description, in the shape of the shared operations.jsonschema.json."""
    method, path = key.split(" ", 1)
    path_item = spec["paths"][path]
    op = path_item[method.lower()]
    params = []
    for param in path_item.get("parameters", []) + op.get("parameters", []):
        param = _resolve(spec, param["$ref"]) if "$ref" in param else param
        params.append({"name": param["name"], "in": param["in"], "required": bool(param.get("required")),
                       "schema": _to_json_schema(spec, param.get("schema", {}))})
    body = op.get("requestBody")
    if body is not None:
        body = _resolve(spec, body["$ref"]) if "$ref" in body else body
        body = {"required": bool(body.get("required")),
                "schema": _schema(spec, (body.get("content", {}).get("application/json") or {}).get("schema"))}
    responses, examples = {}, {}
    for status, response in op.get("responses", {}).items():
        response = _resolve(spec, response["$ref"]) if "$ref" in response else response
        content = (response.get("content") or {}).get("application/json") or {}
        responses[status] = {"description": response.get("description", ""),
                             "headers": list((response.get("headers") or {}).keys()),
                             "schema": _schema(spec, content.get("schema"))}
        named = {}
        for name, ex in (content.get("examples") or {}).items():
            while "$ref" in ex:  # a component example may itself point at another one
                ex = _resolve(spec, ex["$ref"])
            value = ex.get("value")
            while isinstance(value, dict) and set(value) == {"$ref"}:  # upstream quirk: a value that is a $ref
                value = _resolve(spec, value["$ref"]).get("value")
            if "value" in ex:
                named[name] = value
        if named:
            examples[status] = named
    return {"operationId": op["operationId"], "parameters": params, "requestBody": body,
            "responses": responses}, examples


def write_extra_operations(openapi_file: Path) -> None:
    raw = openapi_file.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != OPENAPI_SHA256:
        raise SystemExit(f"error: {openapi_file} has sha256 {digest}, not the @octokit/openapi@23.0.2 file "
                         f"({OPENAPI_SHA256}) the shared folder came from")
    spec = json.loads(raw)
    operations, examples = {}, {}
    for key in EXTRA_OPERATIONS:
        operations[key], found = convert_operation(spec, key)
        if found:
            examples[key] = found
    _write_compact(HERE / "rest/operations-extra.jsonschema.min.json", operations)
    _write_compact(HERE / "rest/examples-extra.json", examples)


def main(argv: list[str]) -> int:
    openapi = None
    if "--openapi" in argv:
        at = argv.index("--openapi")
        if at + 1 >= len(argv):
            print("error: --openapi needs the path of api.github.com.json", file=sys.stderr)
            return 2
        openapi = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    src = _source_dir(argv)
    if not (src / "MANIFEST.json").is_file():
        print(f"error: no github-contract folder at {src}", file=sys.stderr)
        return 2
    for rel in COPIED:
        (HERE / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, HERE / rel)
    for example in sorted((src / "webhooks/examples").glob("*.json")):
        (HERE / "webhooks/examples").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(example, HERE / "webhooks/examples" / example.name)

    _write_compact(HERE / "rest/operations.jsonschema.min.json",
                   json.loads((src / "rest/operations.jsonschema.json").read_text(encoding="utf-8")))

    operations = json.loads((src / "rest/operations.json").read_text(encoding="utf-8"))
    examples: dict[str, dict[str, dict]] = {}
    for key, op in operations.items():
        for status, response in op.get("responses", {}).items():
            named = (response.get("content") or {}).get("application/json", {}).get("examples") or {}
            values = {name: ex["value"] for name, ex in named.items() if "value" in ex}
            if values:
                examples.setdefault(key, {})[status] = values
    _write_compact(HERE / "rest/examples.json", examples)
    if openapi is not None:
        write_extra_operations(openapi)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
