"""action.yml: valid against SchemaStore's github-action schema (in-repo copy), every input documented and passed
to the Python step, every output wired, and the Dockerfile runs the same entrypoint."""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "contract" / "schemas" / "github-action.json").read_text(encoding="utf-8"))
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))

INPUTS = {"github-token", "queue-label", "rubric", "labels", "templates", "dry-run", "max-issues", "issue-number"}
OUTPUTS = {"outcome", "labels-added", "sub-oncall", "modules", "plan"}


def _triage_step() -> dict:
    return next(step for step in ACTION["runs"]["steps"] if step.get("id") == "triage")


def test_action_validates_against_the_schema():
    errors = list(Draft7Validator(SCHEMA).iter_errors(ACTION))
    assert not errors, [e.message for e in errors]


def test_the_schema_check_is_not_vacuous():
    broken = dict(ACTION, runs={"using": "python3", "main": "entrypoint.py"})
    assert list(Draft7Validator(SCHEMA).iter_errors(broken))


def test_inputs_have_descriptions_and_defaults():
    assert set(ACTION["inputs"]) == INPUTS
    for name, spec in ACTION["inputs"].items():
        assert spec["description"].strip(), name
        assert "default" in spec, name
    assert ACTION["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert ACTION["inputs"]["dry-run"]["default"] == "false"


def test_every_input_is_passed_to_the_python_step_explicitly():
    # Composite actions get no INPUT_* variables from the runner; action.yml must map each one.
    env = _triage_step()["env"]
    for name in INPUTS:
        key = "INPUT_" + name.replace("-", "_").upper()
        assert env.get(key) == f"${{{{ inputs.{name} }}}}", key
    assert "entrypoint.py" in _triage_step()["run"]


def test_outputs_come_from_the_triage_step():
    assert set(ACTION["outputs"]) == OUTPUTS
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.triage.outputs.{name} }}}}"
        assert spec["description"].strip()


def test_composite_sets_up_python_with_pip_cache_and_installs_from_the_action_path():
    steps = ACTION["runs"]["steps"]
    setup = next(s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python@"))
    assert setup["with"]["cache"] == "pip"
    assert "github.action_path" in setup["with"]["cache-dependency-path"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}" and '"$ACTION_PATH"' in install["run"]
    assert steps.index(setup) < steps.index(install) < steps.index(_triage_step())
    assert ACTION["branding"]["icon"] and ACTION["branding"]["color"]


def test_no_expression_is_interpolated_into_a_script():
    # `${{ }}` inside `run:` is a script-injection risk; values go through `env:` instead.
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step


def test_dockerfile_installs_the_package_and_runs_the_same_entrypoint():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11", dockerfile, re.M)
    assert re.search(r"^COPY .*entrypoint\.py", dockerfile, re.M) and re.search(r"^COPY triage ", dockerfile, re.M)
    assert re.search(r"^RUN python -m pip install .*/action$", dockerfile, re.M)
    assert re.search(r'^ENTRYPOINT \["python", "/action/entrypoint.py"\]$', dockerfile, re.M)
    # Everything pyproject's wheel build force-includes must be copied into the image.
    for needed in ("queues", "README.md", "pyproject.toml"):
        assert needed in dockerfile, needed
