"""Dry run unless said otherwise, everywhere (issue 31): every shipped workflow (examples/workflows/*.yml and the
README's copies), started by each of its triggers with the defaults GitHub fills in (a "Run workflow" form's
default inputs), hands the Action `dry-run: true`; only the documented switches make it write: the workflow's
`PTD_TRIAGE_LIVE: "true"`, or a dispatch whose "Dry run" box is cleared.

The `with:` values are evaluated as GitHub does, by tests/ghexpr.py, and every `dry-run:` expression evaluated here
is evaluated again by GitHub's own @actions/expressions (when installed, which .ci/run does).
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from ghexpr import evaluate, interpolate, truthy
from test_workflow_filters import (COMMAND, QUEUE, comment, contexts_for, dispatch, labeled, reference_evaluate,
                                   _reference_truthy, schedule, triggered, issues_event)
from test_workflows import load_workflow

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def readme_workflows() -> list[tuple[str, dict]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "ptd-triage@" in b]
    assert blocks, "the README shows no workflow"
    return [(f"README.md block {i}", load_workflow(b)) for i, b in enumerate(blocks, 1)]


def shipped() -> list[tuple[str, dict]]:
    return [(p.name, load_workflow(p.read_text(encoding="utf-8"))) for p in WORKFLOWS] + readme_workflows()


def form_defaults(wf: dict) -> dict:
    """The "Run workflow" form as GitHub fills it in: each input's default, typed (a boolean is a boolean)."""
    inputs = ((wf["on"].get("workflow_dispatch") or {}).get("inputs")) or {}
    out = {}
    for name, spec in inputs.items():
        default = spec.get("default", False if spec.get("type") == "boolean" else "")
        out[name] = bool(default) if spec.get("type") == "boolean" else str(default)
    return out


def events(wf: dict) -> list[tuple[str, dict]]:
    """One representative event per trigger, each one that starts the job."""
    out = []
    for trigger in wf["on"]:
        if trigger == "issues":
            out += [("issues", labeled(QUEUE)), ("issues", issues_event("reopened", ["bug", QUEUE]))]
        elif trigger == "issue_comment":
            out.append(("issue_comment", comment(COMMAND)))
        elif trigger == "schedule":
            out.append(("schedule", schedule()))
        elif trigger == "workflow_dispatch":
            out.append(("workflow_dispatch", dispatch({})))
        elif trigger == "pull_request":
            continue  # the validate workflow: no Action step (below)
        else:
            raise AssertionError(f"no event for trigger {trigger!r}: add one here")
    return [(name, payload) for name, payload in out if triggered(wf, name, payload)]


def contexts(wf: dict, event_name: str, payload: dict, *, given: dict | None = None, env: dict | None = None):
    ctx = contexts_for(event_name, payload)
    ctx["inputs"] = {**form_defaults(wf), **(given or {})} if event_name == "workflow_dispatch" else {}
    ctx["env"] = {**{k: str(v) for k, v in (wf.get("env") or {}).items()}, **(env or {})}
    ctx["runner"] = {"temp": "/home/runner/work/_temp"}
    ctx["secrets"] = {}
    return ctx


def action_steps(wf: dict):
    """(job id, the Action's step) for every job that can write: the plan job of a plan/apply pair cannot, and
    neither can a shadow job (issue 32: read-only, it writes only its report)."""
    for job_id, job in wf["jobs"].items():
        for step in job.get("steps", []):
            if "ptd-triage@" in str(step.get("uses", "")) and (step.get("with") or {}).get("mode") not in ("plan", "shadow"):
                yield job_id, step


def dry_run_expression(step: dict) -> str:
    value = str((step.get("with") or {}).get("dry-run", ""))
    found = EXPR.fullmatch(value.strip())
    assert found, f"the Action's step must pass dry-run as an expression, got {value!r}"
    return found.group(1)


def step_inputs(name: str, event_name: str, given: dict | None = None, env: dict | None = None) -> dict[str, str]:
    """The `with:` of the sweep-like workflow `name`'s Action step, evaluated as GitHub hands it to the Action."""
    wf = load_workflow((ROOT / "examples" / "workflows" / name).read_text(encoding="utf-8"))
    payload = dict(dispatch({}), inputs={}) if event_name == "workflow_dispatch" else dict(events(wf))[event_name]
    ctx = contexts(wf, event_name, payload, given=given, env=env)
    (_, step), = list(action_steps(wf))
    return {key: interpolate(str(value), ctx) for key, value in (step.get("with") or {}).items()}


# (what, the expression, its contexts, whether it must be a dry run), for the reference check.
CASES: list[tuple[str, str, dict, bool]] = []
for _name, _wf in shipped():
    for _event, _payload in events(_wf):
        for _job, _step in action_steps(_wf):
            _expr = dry_run_expression(_step)
            _what = f"{_name} {_event}/{_job}"
            CASES.append((f"{_what}, as shipped", _expr, contexts(_wf, _event, _payload), True))
            CASES.append((f"{_what}, PTD_TRIAGE_LIVE true", _expr,
                          contexts(_wf, _event, _payload, env={"PTD_TRIAGE_LIVE": "true"}),
                          _event == "workflow_dispatch"))  # a dispatch still follows its box, checked by default
            if _event == "workflow_dispatch":
                CASES.append((f"{_what}, box cleared", _expr,
                              contexts(_wf, _event, _payload, given={"dry-run": False}), False))


def test_every_shipped_workflow_that_writes_is_covered():
    covered = {what.split(" ")[0] for what, *_ in CASES}
    writers = {p.name for p in WORKFLOWS if list(action_steps(load_workflow(p.read_text(encoding="utf-8"))))}
    assert writers <= covered and len(writers) == 5, (writers, covered)
    assert any(what.startswith("README.md") for what, *_ in CASES)
    assert {"issues", "issue_comment", "schedule", "workflow_dispatch"} <= {
        what.split(" ")[-3].split("/")[0] for what, *_ in CASES if what.endswith("as shipped")}


@pytest.mark.parametrize("what,expression,ctx,dry", CASES, ids=[c[0] for c in CASES])
def test_a_dry_run_unless_a_documented_switch_says_otherwise(what, expression, ctx, dry):
    assert truthy(evaluate(expression, copy.deepcopy(ctx))) is dry, (what, expression)


def test_githubs_own_evaluator_agrees(tmp_path):
    reference = reference_evaluate([(expr, ctx) for _, expr, ctx, _ in CASES], tmp_path)
    wrong = [what for (what, _, _, dry), ref in zip(CASES, reference) if _reference_truthy(ref) is not dry]
    assert not wrong, wrong


def test_the_switches_are_documented():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'PTD_TRIAGE_LIVE: "true"' in readme
    for path in WORKFLOWS:
        wf = load_workflow(path.read_text(encoding="utf-8"))
        if list(action_steps(wf)):
            assert wf["env"]["PTD_TRIAGE_LIVE"] == "false", path.name
            lines = path.read_text(encoding="utf-8").splitlines()
            at = next(i for i, line in enumerate(lines) if line.strip().startswith("PTD_TRIAGE_LIVE:"))
            assert "Going live" in lines[at - 1], path.name  # the switch says what it is where it is set


def test_a_fresh_run_workflow_with_the_defaults_hands_the_action_a_dry_run():
    sweep = step_inputs("ptd-triage-sweep.yml", "workflow_dispatch")
    assert sweep["dry-run"] == "true" and sweep["command"] == "" and sweep["max-issues"] == "50"
    assert step_inputs("ptd-triage-sweep.yml", "schedule")["dry-run"] == "true"
    assert step_inputs("ptd-triage-sweep.yml", "schedule", env={"PTD_TRIAGE_LIVE": "true"})["dry-run"] == "false"
