"""labels.json `disabled` (issue 40): a type label the queue's people never use is turned off with one line, in a queue
folder or a repository's `.github/ptd-triage.yml`; step 4 still reads the issue and says so, the label is not added.
Anything but a listed type label is refused with its file and line."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTED = ROOT / "queues" / "distributed"
ENHANCEMENT = ("FSDP: make the all-gather prefetch depth configurable",
               "FSDP2 already prefetches the next all-gather and it works well. We would like an option to set how "
               "many layers ahead it prefetches, since the fixed depth of one leaves our network idle.\n")


def plan(issue: Path, *config: str) -> dict:
    run = subprocess.run([sys.executable, "-m", "triage", "plan", str(issue), "--format", "json", *config],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def validate(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage", "validate", "--config", str(config)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def _issue(tmp_path: Path) -> Path:
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"number": 7, "title": ENHANCEMENT[0], "body": ENHANCEMENT[1], "state": "open",
                                "labels": [{"name": "oncall: distributed"}], "comments": 0}), encoding="utf-8")
    return path


def test_a_type_label_turned_off_is_not_added_and_the_reason_says_why(tmp_path):
    issue = _issue(tmp_path)
    control = plan(issue)
    assert "enhancement" in control["add_labels"]  # the control: the bundled queue adds it
    folder = tmp_path / "queue"
    shutil.copytree(DISTRIBUTED, folder)
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    labels["disabled"] = ["enhancement"]
    (folder / "labels.json").write_text(json.dumps(labels, indent=2), encoding="utf-8")
    assert validate(folder).returncode == 0
    off = plan(issue, "--config", str(folder))
    assert "enhancement" not in off["add_labels"]
    assert [l for l in off["add_labels"] if l != "enhancement"] == [l for l in control["add_labels"]
                                                                     if l != "enhancement"]
    assert any(r.startswith("step 4: enhancement") for r in off["reasons"])  # step 4 still says what it read
    assert "policy: 'enhancement' is disabled (labels.json disabled): not added" in off["reasons"]

    # the same one line in a repository's configuration file
    repo_file = tmp_path / "ptd-triage.yml"
    repo_file.write_text("extends: distributed\nlabels:\n  disabled: [enhancement]\n", encoding="utf-8")
    assert validate(repo_file).returncode == 0
    assert plan(issue, "--config", str(repo_file))["add_labels"] == off["add_labels"]


def test_off_names_only_a_listed_type_label_at_its_line(tmp_path):
    for name, words in (("triage review", "a label of role 'review'"), ("module: fsdp", "a label of role 'module'"),
                        ("enhancment", "not a listed label")):
        repo_file = tmp_path / "ptd-triage.yml"
        repo_file.write_text(f'extends: distributed\nlabels:\n  disabled:\n    - "{name}"\n', encoding="utf-8")
        run = validate(repo_file)
        assert run.returncode == 1, name
        assert run.stdout.strip() == (f"{repo_file}:4: disabled names '{name}', {words}: only a type label (role "
                                      "'type') can be disabled"), run.stdout
