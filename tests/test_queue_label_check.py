"""Issue 40: no fork silently watches the wrong queue.

A fork set up as docs/forking.md says (the storage example's queue folder in `.github/ptd-triage/`, its own queue
label `sig: storage`; the workflows copied from examples/workflows/ with their `config:` set and their filters' label
changed, nothing else) finds its queue's issues in label, sweep and shadow runs: the real entrypoint, with the inputs
each copied workflow hands it (its `with:` evaluated as GitHub does) and its `env:`, against the GitHub stand-in.
And a misspelt queue label is one clear line instead of "0 issues", exit 0: an `::error::` naming the repository's
labels and the closest for a sweep or a shadow run that finds nothing (one request more, only then), a warning for an
event whose label only nearly matches (no request), and the same from the CLI (`sweep`, `shadow`).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from ghexpr import interpolate, job_runs
from test_fork_queue import EXAMPLE, FOLDER, QUEUE, example_files, sample_issues
from test_workflow_dry_run import contexts
from test_workflow_filters import dispatch
from test_workflows import load_workflow

from actionrun import REPO, issues_payload, run_action, schedule_payload

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / "examples" / "workflows"
MISSPELT = "sig: storag"


def forked(name: str, config: str = FOLDER) -> dict:
    """The example workflow as a fork copies it: its queue's label in the filters, its configuration in `config:`."""
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    assert 'config: ""' in text
    text = text.replace("oncall: distributed", QUEUE).replace('config: ""', f'config: "{config}"')
    return load_workflow(text)


def handed(wf: dict, event_name: str, payload: dict) -> tuple[dict[str, str], dict[str, str]]:
    """(the Action's inputs, the workflow's env) as GitHub hands them to the Action's step, after checking that the
    event starts the job (a dispatch's form: its payload's inputs)."""
    ctx = contexts(wf, event_name, payload, given=payload.get("inputs") if event_name == "workflow_dispatch" else None)
    (job,) = wf["jobs"].values()
    assert job_runs(job.get("if", True), ctx), "the copied workflow's filter drops the fork's own event"
    (step,) = [s for s in job["steps"] if "ptd-triage@" in str(s.get("uses", ""))]
    inputs = {key: interpolate(str(value), ctx) for key, value in step["with"].items()}
    return {k: v for k, v in inputs.items() if not k.startswith("shadow-")}, dict(ctx["env"])


def put_queue(fake, *, queue_label: str = QUEUE) -> None:
    """The storage example in the repository's .github/ptd-triage/, its labels.json's queue_label as given."""
    for name, text in example_files().items():
        if name == "labels.json":
            data = json.loads(text)
            data["queue_label"] = queue_label
            text = json.dumps(data, indent=1)
        fake.add_file(REPO, FOLDER + name, text)
    for spec in json.loads((EXAMPLE / "labels.json").read_text(encoding="utf-8"))["labels"]:
        fake.add_label(REPO, spec["name"])


def queue_issues(fake, *numbers: int) -> tuple[str, str]:
    """The sample issues, each put in the queue by a person (a label event, as GitHub records it): the window they
    entered it in, (since, until)."""
    samples = sample_issues()
    stamps = []
    for number in numbers:
        fake.add_issue(REPO, number, title=samples[number]["title"], body=samples[number]["body"])
        fake.label_issue(REPO, number, QUEUE, actor="alice")
        stamps.append(fake.issue(REPO, number)["updated_at"])
    return min(stamps), max(stamps)


def errors(run) -> list[str]:
    return [line for line in run.stdout.splitlines() if line.startswith("::error::")]


def warnings(run) -> list[str]:
    return [line for line in run.stdout.splitlines() if line.startswith("::warning::")]


# ---- the fork that follows the docs ----------------------------------------------------------------------------


def test_a_fork_set_up_as_the_guide_says_finds_its_queue_in_label_sweep_and_shadow_runs(fake_github, tmp_path):
    put_queue(fake_github)
    since, until = queue_issues(fake_github, 101, 102, 103)

    labeled = issues_payload(fake_github, 101, "labeled", label=QUEUE)
    inputs, env = handed(forked("ptd-triage-labeled.yml"), "issues", labeled)
    assert inputs["config"] == FOLDER and "queue-label" not in inputs and inputs["dry-run"] == "true"
    label_run = run_action(fake_github, tmp_path, "issues", labeled, inputs=inputs, env=env)
    assert label_run.returncode == 0, label_run.stdout + label_run.stderr
    assert label_run.outputs["outcome"] == "classified" and label_run.outputs["sub-oncall"] == "team: block"
    assert label_run.writes == []  # a dry run until PTD_TRIAGE_LIVE is "true"

    inputs, env = handed(forked("ptd-triage-sweep.yml"), "schedule", schedule_payload())
    sweep = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs=inputs, env=env)
    assert sweep.returncode == 0, sweep.stdout + sweep.stderr
    assert "found 3, would triage 3" in sweep.stdout and sweep.outputs["triaged"] == "3"
    (search,) = [r for r in sweep.requests if r.path == "/search/issues"]
    assert f'label:"{QUEUE}"' in search.query["q"]

    inputs, env = handed(forked("ptd-triage-shadow.yml"), "workflow_dispatch", dispatch({"since": ""}))
    inputs.update({"shadow-since": since, "shadow-until": until, "shadow-file": str(tmp_path / "shadow.json")})
    shadow = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch({"since": ""}), inputs=inputs, env=env)
    assert shadow.returncode == 0, shadow.stdout + shadow.stderr
    assert json.loads((tmp_path / "shadow.json").read_text(encoding="utf-8"))["issues"] == 3
    for run in (label_run, sweep, shadow):
        assert not errors(run) and not warnings(run), run.stdout
        assert not any(r.path.startswith(f"/repos/{REPO}/labels") for r in run.requests)  # found: nothing asked


def test_the_examples_as_shipped_run_the_bundled_queue_under_its_own_label(fake_github, tmp_path):
    """The control: `config: ""` is the bundled distributed queue, and its label is what the run searches for."""
    inputs, env = handed(load_workflow((WORKFLOWS / "ptd-triage-sweep.yml").read_text(encoding="utf-8")),
                         "schedule", schedule_payload())
    fake_github.add_label(REPO, "oncall: distributed")
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs=inputs, env=env)
    assert run.returncode == 0, run.stdout
    (search,) = [r for r in run.requests if r.path == "/search/issues"]
    assert 'label:"oncall: distributed"' in search.query["q"]


# ---- a misspelt queue label: one clear line -------------------------------------------------------------------


def test_a_misspelt_queue_label_fails_a_sweep_in_one_line_naming_the_repositorys_labels(fake_github, tmp_path):
    put_queue(fake_github, queue_label=MISSPELT)
    queue_issues(fake_github, 101, 102)
    inputs, env = handed(forked("ptd-triage-sweep.yml"), "schedule", schedule_payload())
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={**inputs, "dry-run": "false"},
                     env=env)
    assert run.returncode == 1, run.stdout
    (line,) = errors(run)
    assert f"the queue label '{MISSPELT}' is not a label of {REPO}" in line
    assert f"the closest is '{QUEUE}'" in line and "the configuration's queue_label" in line
    assert "'team: block'" in line and "(all " in line  # the labels it found, and that it saw them all
    assert run.writes == [] and run.outputs["outcome"] == "error"
    asked = [unquote(r.path) for r in run.requests if r.path.startswith(f"/repos/{REPO}/labels")]
    assert asked == [f"/repos/{REPO}/labels/{MISSPELT}", f"/repos/{REPO}/labels"]  # the label, then one page


def test_a_misspelt_queue_label_input_is_named_as_the_input(fake_github, tmp_path):
    fake_github.add_issue(REPO, 1, title="FSDP hang", body="fully_shard hangs", labels=["oncall: distributed"])
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"queue-label": "oncall: distribted", "dry-run": "true"})
    assert run.returncode == 1
    (line,) = errors(run)
    assert "Set the queue-label input" in line and "the closest is 'oncall: distributed'" in line


def test_a_misspelt_queue_label_fails_a_shadow_run_and_writes_no_report(fake_github, tmp_path):
    put_queue(fake_github, queue_label=MISSPELT)
    since, until = queue_issues(fake_github, 101, 102)
    inputs, env = handed(forked("ptd-triage-shadow.yml"), "schedule", schedule_payload())
    report = tmp_path / "shadow.json"
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={**inputs, "shadow-since": since, "shadow-until": until, "shadow-file": str(report)},
                     env=env)
    assert run.returncode == 1, run.stdout
    (line,) = errors(run)
    assert f"'{MISSPELT}' is not a label of {REPO}" in line and f"the closest is '{QUEUE}'" in line
    assert not report.exists() and run.writes == []


def test_a_label_event_for_a_label_that_nearly_is_the_queue_label_warns_without_a_request(fake_github, tmp_path):
    put_queue(fake_github, queue_label=MISSPELT)
    queue_issues(fake_github, 101)
    payload = issues_payload(fake_github, 101, "labeled", label=QUEUE)
    inputs, env = handed(forked("ptd-triage-labeled.yml"), "issues", payload)
    run = run_action(fake_github, tmp_path, "issues", payload, inputs=inputs, env=env)
    assert run.returncode == 0 and run.outputs["outcome"] == "ignored"
    (line,) = warnings(run)
    assert f"this event added the label '{QUEUE}', which is nearly the queue label '{MISSPELT}'" in line
    assert not any(r.path.startswith(f"/repos/{REPO}/labels") for r in run.requests) and run.writes == []
    # An unrelated label is ignored as before, with no warning.
    fake_github.label_issue(REPO, 101, "bug", actor="alice")
    other = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 101, "labeled", label="bug"),
                       inputs={"config": FOLDER})
    assert other.outputs["outcome"] == "ignored" and not warnings(other)


def test_a_queue_label_that_differs_only_in_case_is_a_warning(fake_github, tmp_path):
    fake_github.add_label(REPO, "Oncall: Distributed")  # GitHub keeps one label per name whatever the case
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"dry-run": "true"})
    assert run.returncode == 0 and not errors(run)
    (line,) = warnings(run)
    assert "'oncall: distributed' is 'Oncall: Distributed' on" in line


def test_an_empty_queue_whose_label_exists_costs_one_request_and_says_nothing(fake_github, tmp_path):
    fake_github.add_label(REPO, "oncall: distributed")
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"dry-run": "true"})
    assert run.returncode == 0 and not errors(run) and not warnings(run)
    assert [unquote(r.path) for r in run.requests if r.path.startswith(f"/repos/{REPO}/labels")] == [
        f"/repos/{REPO}/labels/oncall: distributed"]


# ---- the CLI ---------------------------------------------------------------------------------------------------


def cli(fake, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
           "PTD_TRIAGE_MAX_BACKOFF": "0.05", "GITHUB_TOKEN": fake.token}
    return subprocess.run([sys.executable, "-m", "triage", *args, "--api-url", fake.url], env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_cli_sweep_with_a_misspelt_queue_label_says_so_in_one_line(fake_github):
    fake_github.add_issue(REPO, 1, title="FSDP hang", body="fully_shard hangs", labels=["oncall: distributed"])
    proc = cli(fake_github, "sweep", "--repo", REPO, "--dry-run", "--skip-recent", "0",
               "--queue-label", "oncall: distribted")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()[-1:]
    assert "'oncall: distribted' is not a label of" in line and "Set --queue-label" in line
    assert "the closest is 'oncall: distributed'" in line
    assert fake_github.writes() == []
    right = cli(fake_github, "sweep", "--repo", REPO, "--dry-run", "--skip-recent", "0")
    assert right.returncode == 0 and "found 1, planned 1" in right.stdout


def test_the_cli_shadow_with_a_misspelt_queue_label_says_so_in_one_line(fake_github, tmp_path):
    since, until = queue_issues(fake_github, 101, 102)
    queue = tmp_path / "my-queue"
    shutil.copytree(EXAMPLE, queue)
    labels = json.loads((queue / "labels.json").read_text(encoding="utf-8"))
    (queue / "labels.json").write_text(json.dumps(dict(labels, queue_label=MISSPELT)), encoding="utf-8")
    proc = cli(fake_github, "shadow", "--repo", REPO, "--config", str(queue), "--since", since, "--until", until)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"'{MISSPELT}' is not a label of {REPO}" in proc.stderr and f"the closest is '{QUEUE}'" in proc.stderr
    good = cli(fake_github, "shadow", "--repo", REPO, "--config", str(EXAMPLE), "--since", since, "--until", until)
    assert good.returncode == 0, good.stderr


# ---- the check itself ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, near", [("Sig: Storage", True), ("sig:storage", True), ("sig: storag", True),
                                        ("sig: network", False), ("bug", False), ("sig: storage", False)])
def test_near_miss(name, near):
    from triage.service.queue_check import near_miss

    assert (near_miss(QUEUE, ["bug", name]) == name) is near


def test_short_labels_a_digit_apart_are_other_labels_not_a_near_miss():
    from triage.service.queue_check import near_miss

    assert near_miss("oncall: pt2", ["oncall: pt3"]) is None


def test_a_read_that_fails_never_fails_the_run(fake_github, github_client):
    from triage.service.queue_check import check_queue_label

    fake_github.inject("GET", f"/repos/{REPO}/labels/.*", status=500, times=10)
    assert check_queue_label(github_client, REPO, "nothing") is None


def test_labels_sync_says_when_the_queue_label_names_no_label_of_the_repository(fake_github, tmp_path):
    """Before any sweep: a fork that syncs its labels (the sweep workflow's labels-sync, or the CLI) learns that
    its queue label is not a label of the repository. It does not create it: people add it."""
    put_queue(fake_github, queue_label=MISSPELT)
    fake_github.add_label(REPO, QUEUE)
    payload = dispatch({"command": "labels-sync", "dry-run": True, "issue-number": "", "max-issues": "50"})
    inputs, env = handed(forked("ptd-triage-sweep.yml"), "workflow_dispatch", payload)
    run = run_action(fake_github, tmp_path, "workflow_dispatch", payload, inputs=inputs, env=env)
    assert run.returncode == 0 and run.writes == []
    (line,) = warnings(run)
    assert f"the queue label '{MISSPELT}' is not a label of the repository" in line
    assert f"The queue label '{MISSPELT}' is not a label of the repository" in run.summary
    queue = tmp_path / "my-queue"
    shutil.copytree(EXAMPLE, queue)
    right = cli(fake_github, "labels", "sync", "--repo", REPO, "--config", str(queue))
    assert right.returncode == 0 and "warning" not in right.stderr
    labels = json.loads((queue / "labels.json").read_text(encoding="utf-8"))
    (queue / "labels.json").write_text(json.dumps(dict(labels, queue_label=MISSPELT)), encoding="utf-8")
    wrong = cli(fake_github, "labels", "sync", "--repo", REPO, "--config", str(queue))
    assert wrong.returncode == 0 and f"warning: the queue label '{MISSPELT}' is not a label" in wrong.stderr
