"""`labels sync` against the GitHub stand-in: creates only what is missing, updates only with --update, never
deletes or renames; dry run by default. Run as a user would (the CLI in a subprocess) and from the Action
(workflow_dispatch with `command: labels-sync`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from actionrun import dispatch_payload, run_action

ROOT = Path(__file__).resolve().parents[1]
PT2 = ROOT / "queues" / "pt2"
REPO = "octo-org/octo-repo"


def wanted() -> list[dict]:
    return json.loads((PT2 / "labels.json").read_text(encoding="utf-8"))["labels"]


def sync(fake, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GITHUB_TOKEN": fake.token}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run([sys.executable, "-m", "triage", "labels", "sync", "--repo", REPO, "--api-url", fake.url,
                           "--config", str(PT2), *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)


def seed(fake) -> None:
    fake.add_label(REPO, "bug", color="d73a4a", description="Something is not working")  # not ours: left alone
    fake.add_label(REPO, "module: dynamo", color="000000", description="someone else's wording")
    fake.add_label(REPO, "Triage Review", color="d93f0b", description="A human should look at this before it is worked on.")


def test_dry_run_writes_nothing_and_prints_a_table(fake_github):
    seed(fake_github)
    before = len(fake_github.requests)
    run = sync(fake_github)
    assert run.returncode == 0, run.stderr
    assert all(r.method == "GET" for r in fake_github.requests[before:])
    assert "would create" in run.stdout and "dry run" in run.stdout
    assert f"{len(wanted()) - 2} to create" in run.stdout


def test_apply_creates_only_the_missing_labels_and_never_deletes(fake_github):
    seed(fake_github)
    before = len(fake_github.requests)
    run = sync(fake_github, "--apply")
    assert run.returncode == 0, run.stderr
    writes = [r for r in fake_github.requests[before:] if r.method != "GET"]
    assert {r.method for r in writes} == {"POST"}  # no PATCH without --update, never DELETE
    assert len(writes) == len(wanted()) - 2  # module: dynamo and (case-insensitively) triage review exist
    names = {n.lower() for n in fake_github.repo_labels(REPO)}
    assert {w["name"].lower() for w in wanted()} <= names and "bug" in names
    assert "Triage Review" in fake_github.repo_labels(REPO)  # not renamed to the configuration's capitalisation
    again = sync(fake_github, "--apply")
    assert "0 to create" in again.stdout


def test_update_changes_colour_and_description_only_when_asked(fake_github):
    seed(fake_github)
    before = len(fake_github.requests)
    run = sync(fake_github, "--apply", "--update")
    assert run.returncode == 0, run.stderr
    patches = [r for r in fake_github.requests[before:] if r.method == "PATCH"]
    assert [r.path.rsplit("/", 1)[-1] for r in patches] == ["module%3A%20dynamo"]
    assert "new_name" not in (patches[0].body or {})


def test_the_action_syncs_labels_on_workflow_dispatch(fake_github, tmp_path):
    fake_github.add_file(REPO, ".github/ptd-triage.yml", "queue: pt2\n")
    fake_github.add_label(REPO, "bug")
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                     inputs={"command": "labels-sync", "config": ".github/ptd-triage.yml", "queue-label": ""})
    assert run.returncode == 0, run.stdout + run.stderr
    created = [r for r in run.writes if r.method == "POST"]
    assert len(created) == len(wanted()) and len(run.writes) == len(created)
    assert "bug" in fake_github.repo_labels(REPO)
