"""Issue 40: `validate` warns when a queue's prompt or templates name another queue (a copied storage prompt in a
distributed fork still says "a storage system"), at the line, and still passes (exit 0: the text renders, it is
only not this queue's). Run as a user runs it: the CLI in a subprocess, on folders copied as the guide says."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from triage.config.bundle import read_sources
from triage.config.other_queues import EXAMPLES, identity_of, known_queues, other_queue_warnings

ROOT = Path(__file__).resolve().parents[1]
STORAGE = ROOT / "examples" / "queues" / "storage"
QUEUES = [ROOT / "queues" / "distributed", ROOT / "queues" / "pt2", STORAGE]


def sources(folder: Path):
    return read_sources(folder / "rubric.yaml", folder / "labels.json", folder / "templates")


def validate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage", "validate", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_the_examples_identity_is_what_its_files_say():
    (example,) = EXAMPLES
    data = yaml.safe_load((STORAGE / "rubric.yaml").read_text(encoding="utf-8"))
    labels = json.loads((STORAGE / "labels.json").read_text(encoding="utf-8"))
    assert identity_of(data, labels, example.describe) == example


@pytest.mark.parametrize("folder", QUEUES, ids=lambda p: p.name)
def test_every_shipped_queue_speaks_only_of_itself(folder):
    assert other_queue_warnings(sources(folder)) == []
    assert len(known_queues()) == 3


def test_a_distributed_fork_with_the_storage_prompt_is_warned_at_its_line(tmp_path):
    fork = tmp_path / "my-queue"
    shutil.copytree(ROOT / "queues" / "distributed", fork)
    shutil.copy(STORAGE / "prompt.md.j2", fork / "prompt.md.j2")
    run = validate("--config", str(fork))
    assert run.returncode == 0, run.stdout + run.stderr  # a warning, not a problem
    (line,) = [l for l in run.stdout.splitlines() if "warning:" in l]
    number = next(i for i, text in enumerate((fork / "prompt.md.j2").read_text().splitlines(), 1)
                  if "storage system" in text)
    assert line.startswith(f"{fork / 'prompt.md.j2'}:{number}: warning: the prompt names another queue: "
                           "'storage system', a word of the example storage queue")
    assert "('oncall: distributed')" in line and "1 warning" in run.stderr

    annotated = validate("--config", "my-queue", "--format", "github", cwd=tmp_path)
    (note,) = [l for l in annotated.stdout.splitlines() if l.startswith("::warning ")]
    assert note.startswith(f"::warning file=my-queue/prompt.md.j2,line={number},title=ptd-triage validate::")


def test_a_queue_copied_from_the_storage_example_is_warned_for_every_text_still_its(tmp_path):
    fork = tmp_path / "network"
    shutil.copytree(STORAGE, fork)
    labels = json.loads((fork / "labels.json").read_text(encoding="utf-8"))
    (fork / "labels.json").write_text(json.dumps(dict(labels, queue_label="sig: network")), encoding="utf-8")
    rubric = (fork / "rubric.yaml").read_text(encoding="utf-8")
    rubric = rubric.replace("queue: storage", "queue: network").replace("/storage-retriage", "/network-retriage")
    (fork / "rubric.yaml").write_text(rubric, encoding="utf-8")
    found = other_queue_warnings(sources(fork))
    named = {p.file.rsplit("/", 1)[-1] for p in found}
    assert named == {"prompt.md.j2", "needs_storage_performance_reproduction.md.j2",
                     "needs_storage_reproduction.md.j2", "not_storage.md.j2"}
    assert all("('sig: network')" in p.message and p.line for p in found)


def test_a_jinja_comment_about_another_queue_is_not_a_warning(tmp_path):
    fork = tmp_path / "q"
    shutil.copytree(ROOT / "queues" / "distributed", fork)
    template = fork / "templates" / "not_distributed.md.j2"
    template.write_text("{# adapted from the storage queue's template #}\n" + template.read_text(), encoding="utf-8")
    assert other_queue_warnings(sources(fork)) == []
    template.write_text(template.read_text() + "\nAsk in the sig: storage channel.\n", encoding="utf-8")
    (warning,) = other_queue_warnings(sources(fork))
    assert warning.line == len(template.read_text().splitlines()) and "'sig: storage'" in warning.message


def test_a_repository_configs_template_is_warned_at_its_line_in_the_file(tmp_path):
    config = tmp_path / "ptd-triage.yml"
    config.write_text("extends: pt2\ntemplates:\n  not_pt2: |\n    Hi, this is the triage bot.\n"
                      "    This does not look like a distributed problem.\n", encoding="utf-8")
    run = validate("--config", str(config))
    assert run.returncode == 0, run.stdout + run.stderr
    (line,) = [l for l in run.stdout.splitlines() if "warning:" in l]
    assert line.startswith(f"{config}:5: warning: the template 'not_pt2' names another queue: 'distributed problem'")
