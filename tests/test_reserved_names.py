"""Reserved label names compared as GitHub compares them, without regard to case (issue 37).

GitHub keeps one label per repository whatever its spelling: adding `High Priority` to an issue adds the
repository's `high priority`. So a queue that names its review label `High Priority`, or renames a module label
`HIGH PRIORITY`, gives the bot the label the procedure reserves for people. Through the real entrypoint.py with the
queue read from the repository (the storage example's folder, its labels.json edited), each such configuration
fails closed: one `::error::` line, exit 1, nothing written; `ptd-triage validate` names the line. The controls: a
`forbidden` list that keeps the reserved name in another spelling is the floor kept, and the queue runs; and a
plan that asks for the reserved label in any spelling is refused by the policy and by the last gate before the
network.
"""
from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from actionrun import REPO
from test_fork_queue import EXAMPLE, FOLDER, MARKER, example_files, seed, triage

from triage.config.bundle import load_bundle
from triage.core.plan import Plan
from triage.core.policy import enforce
from triage.core.snapshot import snapshot_from_json
from triage.core.effects import UnsafeWrite, plan_effects

LABELS = json.loads((EXAMPLE / "labels.json").read_text(encoding="utf-8"))


def _renamed(role: str, name: str) -> dict:
    """The example's labels.json with the first label of `role` renamed (and `_rename`: old -> new, for the rubric,
    which names module labels)."""
    data = json.loads(json.dumps(LABELS))
    spec = next(s for s in data["labels"] if s["role"] == role)
    data["_rename"] = [spec["name"], name]
    spec["name"] = name
    return data


CASES = {
    "review label 'High Priority'": _renamed("review", "High Priority"),
    "module label 'HIGH PRIORITY'": _renamed("module", "HIGH PRIORITY"),
    "reproduction label 'High priority'": _renamed("reproduction", "High priority"),
    "marker 'hIGH pRIORITY'": _renamed("marker", "hIGH pRIORITY"),
    "forbidden list without it": {**LABELS, "forbidden": ["wontfix"]},
}


def _files(labels: dict) -> dict[str, str]:
    """The example queue's files with these labels; a module label renamed is renamed in the rubric too."""
    labels = dict(labels)
    old, new = labels.pop("_rename", (None, None))
    files = dict(example_files(), **{"labels.json": json.dumps(labels, indent=2)})
    if old:
        files["rubric.yaml"] = files["rubric.yaml"].replace(f"'{old}'", f"'{new}'").replace(f'"{old}"', f'"{new}"') \
            .replace(f"label: {old}\n", f"label: '{new}'\n")
    return files


def _put(fake, labels: dict) -> None:
    for name, text in _files(labels).items():
        fake.add_file(REPO, FOLDER + name, text)


@pytest.mark.parametrize("name", list(CASES))
def test_a_queue_that_gives_the_bot_a_reserved_label_in_any_spelling_fails_closed(fake_github, tmp_path, name):
    _put(fake_github, CASES[name])
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, FOLDER)
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert run.returncode == 1 and len(errors) == 1, run.stdout + run.stderr
    assert "high priority" in errors[0].lower() and "labels.json" in errors[0], errors[0]
    assert not run.writes, [f"{r.method} {r.path}" for r in run.writes]
    assert all(label.casefold() != "high priority" for label in fake_github.issue_labels(REPO, 101))


def test_the_floor_kept_in_another_spelling_is_kept(fake_github, tmp_path):
    _put(fake_github, {**LABELS, "forbidden": ["High Priority", "wontfix"]})
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, FOLDER)
    assert run.returncode == 0, run.stdout + run.stderr
    assert MARKER in fake_github.issue_labels(REPO, 101)


@pytest.mark.parametrize("name", list(CASES))
def test_validate_names_the_line(tmp_path, name):
    folder = tmp_path / "queue"
    for relative, text in _files(CASES[name]).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "triage", "validate", "--config", str(folder)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{folder / 'labels.json'}:" in run.stdout and "high priority" in run.stdout.lower(), run.stdout


def test_two_labels_that_differ_only_in_case_are_one_label(tmp_path):
    data = json.loads(json.dumps(LABELS))
    twin = dict(next(s for s in data["labels"] if s["role"] == "module"))
    twin["name"] = twin["name"].upper()
    data["labels"].append(twin)
    from triage.config.labels import LabelsError, parse_labels

    with pytest.raises(LabelsError, match="listed twice"):
        parse_labels(data, "labels.json")


BUNDLE = load_bundle()


@pytest.mark.parametrize("spelling", ["high priority", "High Priority", "HIGH PRIORITY", "hIgH pRiOrItY"])
def test_no_plan_adds_the_reserved_label_in_any_spelling(spelling):
    snapshot = snapshot_from_json({"number": 5, "title": "t", "body": "", "labels": [{"name": "oncall: distributed"}]})
    plan = enforce(Plan(issue=5, add_labels=(spelling, BUNDLE.labels.marker), outcome="routed"), snapshot, BUNDLE)
    assert all(label.casefold() != "high priority" for label in plan.add_labels)
    with pytest.raises(UnsafeWrite):  # the last gate, whatever the allowlist it is handed says
        loose = SimpleNamespace(labels=SimpleNamespace(names=frozenset({spelling})), templates=None)
        plan_effects(5, Plan(issue=5, add_labels=(spelling,)), bundle=loose)
