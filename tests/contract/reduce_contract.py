"""Refresh tests/contract/ from the shared github-contract folder (run by hand, not by pytest).

Usage: python tests/contract/reduce_contract.py [SHARED_GITHUB_CONTRACT_DIR]
Default source: $PTD_SHARED_DIR/github-contract, else ../shared/github-contract next to the repository.

Why a reduction: rest/operations.json (2 MB) and rest/operations.jsonschema.json (1.4 MB, indented) are more
than the tests need. We keep the JSON-Schema file whole but compact (no indentation, same content), and from
operations.json keep only the response examples (the REST-shaped objects the stand-in builds its state from).
Everything else is copied byte-for-byte. See SOURCES.md.
"""
from __future__ import annotations

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


def _source_dir(argv: list[str]) -> Path:
    if len(argv) > 1:
        return Path(argv[1])
    shared = Path(os.environ.get("PTD_SHARED_DIR") or REPO.parent / "shared")
    return shared / "github-contract"


def _write_compact(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
