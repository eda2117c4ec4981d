"""action.yml: valid against SchemaStore's github-action schema (in-repo copy), every input documented and passed
to the Python step, every output wired, the fast start (the runner's Python; a ready environment restored from
the Actions cache, built with uv only on a miss), and the Dockerfile runs the same entrypoint.

The composite's steps are also run for real, in order, as the runner would (expressions evaluated with
tests/ghexpr.py, shell steps with bash and the runner's flags, the Actions cache and setup-uv stood in for): a
first job that builds and saves the environment, a next one that restores it with no uv at all, a broken entry
that is rebuilt, each triaging against the GitHub stand-in. The build needs `uv` (the test extra installs it)
and reaches PyPI when uv's own cache is empty.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import ghexpr
import pytest
import yaml
from actionrun import (FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, QUEUE, REPO, issues_payload, parse_output_file,
                       seed_issue)
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "contract" / "schemas" / "github-action.json").read_text(encoding="utf-8"))
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))

INPUTS = {"github-token", "queue-label", "rubric", "labels", "templates", "dry-run", "max-issues", "issue-number",
          "force", "config", "command", "bot-login", "issue-timeout", "sweep-timeout", "not-before", "not-before-mode",
          "mode", "plans-file", "planner", "llm-provider", "llm-model", "llm-base-url", "llm-api-key",
          "llm-max-calls", "llm-timeout", "llm-output-mode", "llm-price-input", "llm-price-output",
          "llm-price-cached-input", "llm-prompt-cache",
          "shadow-since", "shadow-until", "shadow-file", "shadow-cache"}
OUTPUTS = {"outcome", "labels-added", "sub-oncall", "modules", "plan", "triaged", "flagged", "failed", "left",
           "plans", "plans-file", "planned", "plan-file", "summary-file", "shadow-file"}


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


def _step(step_id: str) -> dict:
    return next(step for step in ACTION["runs"]["steps"] if step.get("id") == step_id)


def _uses(prefix: str) -> dict:
    return next(step for step in ACTION["runs"]["steps"] if str(step.get("uses", "")).startswith(prefix))


def test_steps_find_python_restore_or_build_the_environment_then_triage():
    steps = ACTION["runs"]["steps"]
    order = [_step("python"), _uses("actions/setup-python@"), _step("venv"), _uses("actions/cache/restore@"),
             _step("check"), _uses("astral-sh/setup-uv@"), _step("install"), _uses("actions/cache/save@"),
             _triage_step()]
    assert [steps.index(s) for s in order] == list(range(len(steps)))
    assert ACTION["branding"]["icon"] and ACTION["branding"]["color"]


def test_every_action_used_is_pinned_to_a_release_tag():
    for step in ACTION["runs"]["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@v\d+(\.\d+){0,2}", step["uses"]), step["uses"]


def test_setup_python_only_when_the_runner_has_no_recent_python():
    setup = _uses("actions/setup-python@")
    assert setup["if"] == "steps.python.outputs.path == ''"
    assert setup["with"]["update-environment"] is False  # the job's own Python stays as the workflow set it
    assert re.fullmatch(r"3\.1[1-9]", setup["with"]["python-version"])


def test_the_environment_is_restored_and_saved_under_one_key_and_built_only_on_a_miss():
    restore, save = _uses("actions/cache/restore@"), _uses("actions/cache/save@")
    assert restore["with"] == save["with"] == {"path": "${{ steps.venv.outputs.dir }}",
                                               "key": "${{ steps.venv.outputs.key }}"}
    assert _step("check")["if"] == "steps.restore.outputs.cache-hit == 'true'"
    for step in (_uses("astral-sh/setup-uv@"), _step("install"), save):
        assert step["if"] == "steps.check.outputs.ok != 'true'", step.get("name")
    uv = _uses("astral-sh/setup-uv@")["with"]
    assert uv["enable-cache"] is False  # one cache: the environment itself
    assert re.fullmatch(r"\d+\.\d+\.\d+", uv["version"])  # an exact uv: nothing to resolve at run time


def test_build_compiles_the_package_into_its_own_venv_and_triage_runs_it():
    install = _step("install")
    assert install["env"]["BASE_PYTHON"] == \
        "${{ steps.python.outputs.path || steps.setup-python.outputs.python-path }}"
    assert _step("venv")["env"]["VENV"].startswith("${{ runner.temp }}/")
    assert "uv pip install --quiet --compile-bytecode" in install["run"]
    assert "pip install" not in install["run"].replace("uv pip install", "")
    triage = _triage_step()
    assert triage["env"]["PTD_PYTHON"] == "${{ steps.venv.outputs.python }}"
    assert triage["run"] == '"$PTD_PYTHON" -P "$ACTION_PATH/entrypoint.py"'


def test_outputs_include_every_one_the_report_writes():
    from triage.action.report import OUTPUT_NAMES

    assert set(OUTPUT_NAMES) <= set(ACTION["outputs"])


# ---- the composite's shell steps, run for real ------------------------------------------------------------------

_SHELL = [shutil.which("bash") or "/bin/bash", "--noprofile", "--norc", "-eo", "pipefail"]  # `shell: bash`


def _run_step(step: dict, env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    output = tmp_path / f"output-{step.get('id', 'step')}-{len(list(tmp_path.glob('output-*')))}.txt"
    output.touch()
    script = tmp_path / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    proc = subprocess.run([*_SHELL, str(script)], env={**env, "GITHUB_OUTPUT": str(output)}, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return parse_output_file(output.read_text(encoding="utf-8")) | {"__stdout__": proc.stdout}


def test_find_python_step_uses_the_runners_python_when_recent_enough(tmp_path):
    out = _run_step(_step("python"), {"PATH": os.environ["PATH"]}, tmp_path)
    found = subprocess.run([out["path"], "-c", "import sys; print(sys.version_info[:2] >= (3, 11))"],
                           capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "True"


def test_find_python_step_asks_for_setup_python_when_the_runner_has_an_old_one(tmp_path):
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for name in ("python3", "python"):  # a Python 3.10: the version check exits 1
        (fake_bin / name).write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        (fake_bin / name).chmod(0o755)
    out = _run_step(_step("python"), {"PATH": str(fake_bin)}, tmp_path)
    assert out["path"] == ""
    assert ghexpr.job_runs(_uses("actions/setup-python@")["if"], {"steps": {"python": {"outputs": out}}})


def _venv_step(tmp_path: Path, action_path: Path, planner: str = "rubric", provider: str = "openai") -> dict:
    return _run_step(_step("venv"), {"PATH": os.environ["PATH"], "ACTION_PATH": str(action_path),
                                     "BASE_PYTHON": sys.executable, "VENV": str(tmp_path / "venv"),
                                     "PLANNER": planner, "LLM_PROVIDER": provider, "RUNNER_OS": "Linux",
                                     "RUNNER_ARCH": "X64"}, tmp_path)


def test_the_key_names_the_interpreter_the_code_and_the_extras(tmp_path):
    import platform

    copy = tmp_path / "action"
    copy.mkdir()
    for name in ("pyproject.toml", "entrypoint.py", "triage", "queues"):
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, copy / name)
    first = _venv_step(tmp_path, copy)
    assert first["key"].startswith(f"ptd-triage-venv-1-Linux-X64-py{platform.python_version()}-")
    assert first["dir"] == str(tmp_path / "venv") and first["python"] == str(tmp_path / "venv" / "bin" / "python")
    assert _venv_step(tmp_path, copy)["key"] == first["key"]  # stable
    (copy / "triage" / "__pycache__").mkdir(exist_ok=True)
    (copy / "triage" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert _venv_step(tmp_path, copy)["key"] == first["key"]  # bytecode left by a run is not the code
    rubric = copy / "queues" / "distributed" / "rubric.yaml"
    rubric.write_text(rubric.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    changed = _venv_step(tmp_path, copy)["key"]
    assert changed != first["key"]  # a moving tag with new code gets a new environment
    bedrock = _venv_step(tmp_path, copy, planner="hybrid", provider="bedrock")
    assert bedrock["extras"] == "bedrock" and bedrock["key"].endswith("-bedrock") and changed.endswith("-base")


@pytest.mark.parametrize("planner,provider,extras", [("rubric", "bedrock", ""), ("", "bedrock", ""),
                                                     ("hybrid", "openai", ""), ("llm", "bedrock", "bedrock"),
                                                     ("hybrid", "bedrock", "bedrock")])
def test_botocore_is_installed_only_for_a_model_on_bedrock(tmp_path, planner, provider, extras):
    assert _venv_step(tmp_path, ROOT, planner, provider)["extras"] == extras


class _ActionsCache:
    """Stands in for actions/cache/restore and /save: archives by exact key (tar keeps symlinks and mtimes,
    as the real one does)."""

    def __init__(self, root: Path):
        self.root, self.saved, self.refused = root, [], []
        root.mkdir()

    def restore(self, path: str, key: str) -> dict[str, str]:
        archive = self.root / f"{hashlib.sha256(key.encode()).hexdigest()}.tar"
        if not archive.exists():
            return {"cache-hit": "false"}
        with tarfile.open(archive) as tar:
            tar.extractall(Path(path).parent, filter="tar")
        return {"cache-hit": "true", "cache-matched-key": key}

    def save(self, path: str, key: str) -> dict[str, str]:
        archive = self.root / f"{hashlib.sha256(key.encode()).hexdigest()}.tar"
        if archive.exists():  # GitHub keeps the first entry under a key; saving again only warns
            self.refused.append(key)
            return {}
        with tarfile.open(archive, "w") as tar:
            tar.add(path, arcname=Path(path).name)
        self.saved.append(key)
        return {}


def _composite_contexts(temp: Path, inputs: dict[str, str], steps: dict) -> dict:
    defaults = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    return {"github": {"action_path": str(ROOT), "token": inputs.get("github-token", "")},
            "inputs": {**{k: v for k, v in defaults.items() if "${{" not in v}, **inputs},
            "runner": {"temp": str(temp), "os": "Linux"}, "steps": steps}


def run_composite(tmp_path: Path, fake, event_name: str, payload: dict, uv_dir: str | None,
                  cache: _ActionsCache) -> tuple[dict[str, str], dict]:
    """The composite's steps in order, as the runner runs them: `if:` and `env:` expressions evaluated, shell steps
    run with bash, outputs collected. `uses:` steps are stood in for: setup-python must be skipped here (this
    machine's Python is recent enough), setup-uv's part is the `uv` on PATH (None: no uv at all), and the
    Actions cache is `cache`. Returns the triage step's outputs and every step's outcome."""
    # One runner: RUNNER_TEMP is the same path in every job and empty when a job starts.
    temp = tmp_path.parent / "runner-temp"
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir()
    tmp_path.mkdir()
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    summary = tmp_path / "summary.md"
    summary.touch()
    steps: dict[str, dict] = {}
    # The machine's own environment (a runner's has its proxy and CA settings too), without anything that
    # would look like another run's GitHub or Action variables.
    own = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "PTD_", "UV_"))}
    own["PATH"] = os.pathsep.join(p for p in own.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "uv").exists())  # no uv unless setup-uv puts it there
    base = {**own, "LANG": "C.UTF-8", "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": fake.url, "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(temp), "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "PTD_TRIAGE_MAX_BACKOFF": "0.05"}
    outputs: dict[str, str] = {}
    for step in ACTION["runs"]["steps"]:
        contexts = _composite_contexts(temp, {"github-token": fake.token}, steps)
        name = step.get("id") or step.get("uses") or step["name"]
        if not ghexpr.job_runs(step.get("if"), contexts):
            steps[name] = {"outputs": {}, "outcome": "skipped"}
            continue
        if "uses" in step:
            given = {k: ghexpr.interpolate(str(v), contexts) for k, v in (step.get("with") or {}).items()}
            if step["uses"].startswith("actions/cache/restore@"):
                result = cache.restore(given["path"], given["key"])
            elif step["uses"].startswith("actions/cache/save@"):
                result = cache.save(given["path"], given["key"])
            elif step["uses"].startswith("astral-sh/setup-uv@") and uv_dir is not None:
                base["PATH"] = uv_dir + os.pathsep + base["PATH"]
                result = {}
            else:
                raise AssertionError(f"{step['uses']} would have to run on this machine")
            steps[name] = {"outputs": result, "outcome": "success"}
            continue
        env = {**base, **{k: ghexpr.interpolate(str(v), contexts) for k, v in (step.get("env") or {}).items()}}
        outputs = _run_step(step, env, tmp_path)
        steps[name] = {"outputs": outputs, "outcome": "success"}
    assert steps["setup-python"]["outcome"] == "skipped"
    return outputs, steps


def _uv_dir() -> str:
    """The directory of the `uv` that stands in for setup-uv's: on PATH, or beside this interpreter (the test
    extra installs it into the venv, which need not be activated)."""
    found = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("uv is not installed (`pip install uv`); action.yml's build step needs it")
    return str(Path(found).parent)


def test_the_composite_builds_once_then_restores_and_triages(tmp_path, fake_github):
    """The first job builds the environment with uv and saves it; the next jobs restore it, need no uv, and run
    the package from it (compiled): an ignored event and a queue issue."""
    uv_dir, cache = _uv_dir(), _ActionsCache(tmp_path / "actions-cache")
    seed_issue(fake_github, 5, NEEDS_REPRO, labels=("bug", QUEUE))
    seed_issue(fake_github, 6, FSDP_WITH_REPRO)

    first, steps = run_composite(tmp_path / "job1", fake_github, "issues",
                                 issues_payload(fake_github, 5, "labeled", label="bug"), uv_dir, cache)
    assert steps["restore"]["outputs"]["cache-hit"] == "false" and steps["install"]["outcome"] == "success"
    assert first["outcome"] == "ignored" and fake_github.requests == []  # decided from the payload alone
    assert len(cache.saved) == 1

    # The next job: a fresh runner temp (the venv is gone) and no uv on PATH at all.
    second, steps = run_composite(tmp_path / "job2", fake_github, "issues",
                                  issues_payload(fake_github, 6, "labeled", label=QUEUE), None, cache)
    assert steps["restore"]["outputs"]["cache-hit"] == "true" and steps["check"]["outputs"]["ok"] == "true"
    assert steps["install"]["outcome"] == "skipped" and len(cache.saved) == 1
    assert second["outcome"] not in ("ignored", "error"), second["__stdout__"]
    assert MARKER in fake_github.issue_labels(REPO, 6)

    venv_python = tmp_path / "runner-temp" / "ptd-triage-venv" / "bin" / "python"
    probe = subprocess.run([str(venv_python), "-P", "-c",
                            "import importlib.metadata as m, triage; print(triage.__file__); "
                            "print(sorted(d.metadata['Name'].lower() for d in m.distributions()))"],
                           capture_output=True, text=True, check=True, cwd=ROOT).stdout
    where, listed = probe.splitlines()
    assert "site-packages" in where  # the run used the installed, compiled package, not the checkout
    assert list(Path(where).parent.glob("__pycache__/*.pyc"))
    # No actions-toolkit with its PyGithub, cryptography and PyNaCl; no botocore without a model on Bedrock.
    for heavy in ("actions-toolkit", "pygithub", "cryptography", "pynacl", "botocore"):
        assert f"'{heavy}'" not in listed, heavy
    assert "'jinja2'" in listed and "'ptd-triage'" in listed
    # The bundled queues were compiled into the environment when it was built (triage.config.compiled), so the
    # restored one starts warm: one compiled form per bundled queue.
    assert len(list((venv_python.parent.parent / "ptd-triage-cache").glob("queue-*.json"))) == 2


def test_a_restored_environment_that_does_not_work_is_built_again(tmp_path, fake_github):
    uv_dir, cache = _uv_dir(), _ActionsCache(tmp_path / "actions-cache")
    seed_issue(fake_github, 5, NEEDS_REPRO, labels=("bug", QUEUE))
    payload = issues_payload(fake_github, 5, "labeled", label="bug")
    run_composite(tmp_path / "job1", fake_github, "issues", payload, uv_dir, cache)
    # Break the saved entry the way a changed runner image would: its interpreter link points nowhere.
    archive = next((tmp_path / "actions-cache").glob("*.tar"))
    broken = tmp_path / "broken"
    with tarfile.open(archive) as tar:
        tar.extractall(broken, filter="tar")
    link = broken / "ptd-triage-venv" / "bin" / "python"
    link.unlink()
    link.symlink_to("/nonexistent/python3")
    with tarfile.open(archive, "w") as tar:
        tar.add(broken / "ptd-triage-venv", arcname="ptd-triage-venv")
    out, steps = run_composite(tmp_path / "job2", fake_github, "issues", payload, uv_dir, cache)
    assert steps["restore"]["outputs"]["cache-hit"] == "true" and steps["check"]["outputs"]["ok"] == "false"
    assert steps["install"]["outcome"] == "success" and out["outcome"] == "ignored"
    assert len(cache.refused) == 1  # the key is taken: the next job rebuilds too, until the Action's code changes


def test_no_expression_is_interpolated_into_a_script():
    # `${{ }}` inside `run:` is a script-injection risk; values go through `env:` instead.
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step


def test_dockerfile_installs_the_package_and_runs_the_same_entrypoint():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11", dockerfile, re.M)
    assert re.search(r"^COPY .*entrypoint\.py", dockerfile, re.M) and re.search(r"^COPY triage ", dockerfile, re.M)
    assert re.search(r"^RUN python -m pip install .*/action$", dockerfile, re.M)
    assert re.search(r"^RUN python -P -m triage.config.precompile$", dockerfile, re.M)  # the queues compiled once
    assert re.search(r'^ENTRYPOINT \["python", "/action/entrypoint.py"\]$', dockerfile, re.M)
    # Everything pyproject's wheel build force-includes must be copied into the image.
    for needed in ("queues", "README.md", "pyproject.toml"):
        assert needed in dockerfile, needed
