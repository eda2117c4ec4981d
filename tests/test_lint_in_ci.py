"""The ecosystem's habits (issue 36): `.ci/run` runs the README's lint and type-check command verbatim, so a ruff or
mypy violation fails CI, and both tools cover at least the core, the service and the planners (pyproject.toml).
Whether the code passes them is `.ci/run`'s to say (the tools are the `lint` extra, not the `test` extra)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCOPE = ("triage/core", "triage/service", "triage/planners")


def _readme_lint_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for block in re.findall(r"```sh\n(.*?)```", readme, re.S) for line in block.splitlines()
                if "ruff check" in line]
    assert len(commands) == 1, commands
    return commands[0]


def test_ci_runs_the_readmes_lint_command_and_fails_on_a_violation():
    command = _readme_lint_command()
    assert "ruff check" in command and "mypy" in command and "'.[lint]'" in command
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script  # a tool's non-zero exit ends the run with it
    lines = script.splitlines()
    assert command in lines and lines.index(command) < len(lines) - 1  # before the test command, which ends it


def test_both_tools_cover_the_core_the_service_and_the_planners():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    lint = config["project"]["optional-dependencies"]["lint"]
    assert any(d.startswith("ruff") for d in lint) and any(d.startswith("mypy") for d in lint)
    ruff, mypy = config["tool"]["ruff"], config["tool"]["mypy"]
    assert set(ruff["lint"]["select"]) >= {"E", "F"}
    for package in SCOPE:
        assert f"{package}/**/*.py" in ruff["include"], package
        assert package in mypy["files"], package
