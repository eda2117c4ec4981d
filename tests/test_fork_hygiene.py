"""What a fork sees of its own configuration (issue 31): JSON read as JSON, every configuration error on its file
and line (`extends:` included), no error that points a fork at PyTorch's bundled queue, the queue's own words in
its reports (never "distributed" or "sub-oncall" in a storage queue's summary or plan text), one-file messages
that name the file once, and docs/forking.md's request counts and inputs as the Action and workflows have them.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from actionrun import REPO, dispatch_payload, run_action, schedule_payload
from test_fork_queue import EXAMPLE, FOLDER, QUEUE, example_files, put_folder, sample_issues, seed, single_file
from test_workflows import load_workflow

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_LABELS = ROOT / "queues" / "distributed" / "labels.json"


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


# ---- JSON is JSON ------------------------------------------------------------------------------------------------


def test_a_labels_file_from_pythons_json_dump_with_escaped_emoji_validates(tmp_path):
    data = json.loads(BUNDLED_LABELS.read_text(encoding="utf-8"))
    data["labels"][0]["description"] = "Bugs 🐛 in the parallelisms sub-team's code."
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")  # ensure_ascii: "\ud83d\udc1b"
    assert "\\ud83d\\udc1b" in path.read_text(encoding="utf-8")
    proc = cli("validate", "--labels", path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    from triage.config.bundle import load_bundle

    labels = load_bundle(labels=path).labels
    assert "🐛" in labels.specs[0].description


def test_a_problem_in_such_a_file_still_names_its_line(tmp_path):
    data = json.loads(BUNDLED_LABELS.read_text(encoding="utf-8"))
    data["labels"][0]["description"] = "🐛"
    data["labels"][4]["role"] = "bogus"
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"bogus"' in text)
    proc = cli("validate", "--labels", path)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{path}:{line}: invalid labels at labels/4/role"), proc.stdout


def test_what_json_refuses_is_refused_with_its_line(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text('{"queue_label": "x",\n "labels": [1,,]}\n', encoding="utf-8")  # YAML would read `labels: [1]`
    proc = cli("validate", "--labels", path)
    assert proc.returncode == 1 and f"{path}:2: not valid JSON" in proc.stdout, proc.stdout


# ---- errors name file and line, and never point at another queue ------------------------------------------------


@pytest.mark.parametrize("text,line", [("extends: sprase\n", 1), ("# our queue\n\nqueue: sprase\n", 3)])
def test_extends_of_no_queue_names_the_file_and_line(tmp_path, text, line):
    path = tmp_path / "ptd-triage.yml"
    path.write_text(text, encoding="utf-8")
    proc = cli("validate", "--config", path)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{path}:{line}: "), proc.stdout
    assert "no bundled queue 'sprase'" in proc.stdout


@pytest.mark.parametrize("files", [{}, {".github/ptd-triage.yml": "# nothing yet\n"},
                                   {".github/ptd-triage.yml": "extends: sprase\n"}],
                         ids=["missing", "empty", "no-such-queue"])
def test_no_fail_closed_error_suggests_the_bundled_distributed_queue(fake_github, tmp_path, files):
    for path, text in files.items():
        fake_github.add_file(REPO, path, text)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"config": ".github/ptd-triage.yml", "queue-label": ""})
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert run.returncode == 1 and len(errors) == 1, run.stdout
    assert "ptd-triage.yml" in errors[0]
    # It may list the bundled queues' names when `extends:` names none of them; it never offers one to run.
    for advice in ("distributed queue", "config` to empty", "run the bundled"):
        assert advice not in errors[0], errors[0]
    assert run.writes == []


# ---- the queue's own words -----------------------------------------------------------------------------------------


def _no_other_queue(text: str) -> None:
    lowered = text.lower()
    for word in ("distributed", "sub-oncall", "sub_oncall"):
        assert word not in lowered, (word, [line for line in text.splitlines() if word in line.lower()][:5])


def test_a_forks_plan_text_says_neither_distributed_nor_sub_oncall():
    proc = cli("plan", "--config", EXAMPLE, "--format", "text", EXAMPLE / "sample-issues.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert "  team:" in proc.stdout and "no module or team label yet" in proc.stdout
    _no_other_queue(proc.stdout + proc.stderr)


def test_a_forks_summary_says_neither_distributed_nor_sub_oncall(fake_github, tmp_path):
    put_folder(fake_github)
    seed(fake_github, *sample_issues())
    sweep = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                       inputs={"config": FOLDER, "queue-label": "", "dry-run": "true"})
    assert sweep.returncode == 0, sweep.stdout + sweep.stderr
    assert f"label:\"{QUEUE}\"" in sweep.summary and "not_storage" in sweep.summary
    one = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                     inputs={"config": FOLDER, "queue-label": "", "dry-run": "true", "issue-number": "101"})
    assert one.returncode == 0, one.stdout + one.stderr
    assert "Team" in one.summary
    for run in (sweep, one):
        _no_other_queue(run.summary + run.stdout)


def test_the_bundled_queues_keep_their_own_word():
    proc = cli("plan", "--format", "text", ROOT / "examples" / "issues" / "ddp-slow-no-repro.json")
    assert "  sub-oncall:" in proc.stdout and "no module or sub-oncall label yet" in proc.stdout


# ---- one file --------------------------------------------------------------------------------------------------


def test_a_one_file_queue_is_named_once_and_a_missing_template_is_said_in_its_terms(tmp_path):
    path = tmp_path / "ptd-triage.yml"
    path.write_text(single_file(), encoding="utf-8")
    proc = cli("validate", "--config", path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == f"ok: {path}"
    broken = single_file().replace("needs_reproduction: needs_storage_reproduction",
                                   "needs_reproduction: needs_storage_steps")
    path.write_text(broken, encoding="utf-8")
    proc = cli("validate", "--config", path)
    line = next(i for i, text in enumerate(broken.splitlines(), 1) if "needs_storage_steps" in text)
    assert proc.returncode == 1
    assert proc.stdout.strip() == (f"{path}:{line}: comments.needs_reproduction names template "
                                   "'needs_storage_steps', which `templates:` does not define")


# ---- docs/forking.md is true --------------------------------------------------------------------------------------


def _forking() -> str:
    return (ROOT / "docs" / "forking.md").read_text(encoding="utf-8")


def test_the_folders_request_count_in_the_guide_is_what_a_run_costs(fake_github, tmp_path):
    row = next(line for line in _forking().splitlines() if line.startswith("| `.github/ptd-triage/`"))
    found = re.search(r"\| (\d+) \+ one per template the rubric names \(\+1 for a prompt\); at most (\d+) for a "
                      r"queue, its `extends:` included \|$", row)
    assert found, row
    put_folder(fake_github)
    seed(fake_github, 101)
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                     inputs={"config": FOLDER, "queue-label": "", "dry-run": "true", "issue-number": "101"})
    assert run.returncode == 0, run.stdout + run.stderr
    templates = [name for name in example_files() if name.startswith("templates/")]
    prompt = 1 if "prompt.md.j2" in example_files() else 0
    reads = [c for c in run.calls() if "/contents/" in c]
    assert len(reads) == int(found.group(1)) + len(templates) + prompt, reads  # every template here is named
    assert len(reads) <= int(found.group(2)), reads


def test_the_guides_labels_sync_input_is_in_the_shipped_sweep_workflow():
    assert "`command: labels-sync`" in _forking()
    sweep = load_workflow((ROOT / "examples" / "workflows" / "ptd-triage-sweep.yml").read_text(encoding="utf-8"))
    command = sweep["on"]["workflow_dispatch"]["inputs"]["command"]
    assert "labels-sync" in command["options"]
    step = sweep["jobs"]["sweep"]["steps"][0]
    assert "inputs.command" in step["with"]["command"]


def test_the_dispatched_labels_sync_is_a_dry_run_by_default_and_creates_with_the_box_cleared(fake_github, tmp_path):
    """The sweep workflow's "Run workflow" form with `command: labels-sync`, as GitHub hands it to the Action."""
    from test_workflow_dry_run import step_inputs

    fake_github.add_label(REPO, "bug")  # a repository with labels of its own
    defaults = step_inputs("ptd-triage-sweep.yml", "workflow_dispatch", {"command": "labels-sync"})
    assert defaults["command"] == "labels-sync" and defaults["dry-run"] == "true"
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(), inputs=defaults)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.writes == [] and "would create" in run.summary
    # Reported as what it did: a table of the labels, not a run "ignored" for want of an issue (issue 31).
    from summaryhtml import read

    blocks, _ = read(run.summary)
    assert "Ignored" not in run.summary and "--apply" not in run.summary + run.stdout
    assert blocks[0].text.startswith("ptd-triage — dry run, nothing written") and "labels sync" in blocks[0].text
    assert blocks[1].text.startswith("Would create 26 label(s)")
    (table,) = [b for b in blocks if b.tag == "table"]
    assert table.header[:3] == ["Label", "Colour", "Description (configured)"] and len(table.rows) == 26
    assert ["ptd-bot-skip", "would create"] == [table.rows[-1][0], table.rows[-1][3]]
    cleared = step_inputs("ptd-triage-sweep.yml", "workflow_dispatch", {"command": "labels-sync", "dry-run": False})
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(), inputs=cleared)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ptd-bot-skip" in fake_github.repo_labels(REPO)
    assert "created" in run.summary and "--apply" not in run.summary


# ---- the configuration checked on pull requests ---------------------------------------------------------------


def _validate_step() -> tuple[dict, str]:
    wf = load_workflow((ROOT / "examples" / "workflows" / "ptd-triage-validate.yml").read_text(encoding="utf-8"))
    (job,) = wf["jobs"].values()
    step = next(s for s in job["steps"] if s.get("name") == "Validate")
    return {k: str(v) for k, v in wf["env"].items()}, step["run"]


def _checkout(tmp_path: Path, text: str) -> Path:
    repo = tmp_path / "checkout"
    (repo / ".github").mkdir(parents=True)
    (repo / ".github" / "ptd-triage.yml").write_text(text, encoding="utf-8")
    return repo


def _run_step(repo: Path) -> subprocess.CompletedProcess:
    import os

    env, script = _validate_step()
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(["bash", "-e", "-c", script], cwd=repo, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env, "PATH": path, "GITHUB_ACTIONS": "true"})


def test_the_validate_workflow_annotates_the_broken_line(tmp_path):
    broken = "extends: pt2\nrubric:\n  modules:\n    medium: 9\n    high: 3\n"  # medium above high
    proc = _run_step(_checkout(tmp_path, broken))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (annotation,) = [line for line in proc.stdout.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error file=.github/ptd-triage.yml,line=4,title=ptd-triage validate::")
    assert "modules.medium must not exceed modules.high" in annotation


def test_the_validate_workflow_passes_a_good_configuration(tmp_path):
    proc = _run_step(_checkout(tmp_path, "extends: pt2\ncommand: /compile-retriage\n"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "::error" not in proc.stdout and proc.stdout.startswith("ok: ")


def test_an_unreadable_file_is_annotated_on_its_line_too(tmp_path):
    proc = _run_step(_checkout(tmp_path, "extends: pt2\nrubric: [unclosed\n"))
    (annotation,) = [line for line in proc.stdout.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error file=.github/ptd-triage.yml,line="), annotation
