"""Two smaller findings of issue 37's red team, through the real entrypoint and CLI:

- a plans file "refused unread" was read whole first (428 MB resident for a 200 MB file): it is now refused by its
  size before it is read, in mode apply (the entrypoint: one error line, nothing written) and wherever
  `read_plans` reads one (at most the limit + 1 bytes are ever read, whatever the file: measured with
  tracemalloc, on a sparse file and on a pipe, which has no size to read first);
- `ptd-triage validate` followed a symbolic link out of the checkout and echoed what it found into an annotation: a
  configuration that leads out of the repository's checkout is refused in one line that names the link, never its
  target or its contents; a link inside the checkout, and a plain file, still validate.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest
from actionrun import FSDP_WITH_REPRO, QUEUE, issues_payload, run_action, seed_issue

from triage.planners.replay import MAX_PLANS_BYTES, PlansFileError, read_plans

ROOT = Path(__file__).resolve().parents[1]


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)  # no disk blocks: the file system says its size, reading it gives zeros
    return path


def test_a_200_mb_plans_file_is_refused_by_its_size_in_mode_apply(fake_github, tmp_path):
    seed_issue(fake_github, 7, FSDP_WITH_REPRO)
    big = _sparse(tmp_path / "plans.json", 200 * 1024 * 1024)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 7, "labeled", label=QUEUE),
                     inputs={"mode": "apply", "plans-file": str(big)})
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert run.returncode == 1 and len(errors) == 1, run.stdout + run.stderr
    assert f"larger than {MAX_PLANS_BYTES:,} bytes; refused unread" in errors[0]
    assert not run.writes


def _pipe(path: Path, size: int) -> threading.Thread:
    """A named pipe that gives `size` bytes to whoever opens it (a pipe has no size: only reading tells)."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "wb") as out:
            try:
                for _ in range(size // 65536):
                    out.write(b" " * 65536)
            except BrokenPipeError:  # the reader stopped at its limit
                pass

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("source", ["a 200 MB file", "a pipe of 40 MB"])
def test_refusing_a_plans_file_reads_no_more_than_the_limit(tmp_path, source):
    path = tmp_path / "plans.json"
    if source == "a pipe of 40 MB":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes here")
        feeder = _pipe(path, 40 * 1024 * 1024)
    else:
        _sparse(path, 200 * 1024 * 1024)
    tracemalloc.start()
    try:
        with pytest.raises(PlansFileError, match="refused unread"):
            read_plans(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * MAX_PLANS_BYTES + 1_000_000, f"{peak:,} bytes allocated to refuse it"
    if source == "a pipe of 40 MB":
        feeder.join(timeout=60)


def test_a_plans_file_within_the_limit_is_still_read(tmp_path):
    path = tmp_path / "plans.json"
    path.write_text('{"version": 1, "repo": "", "plans": []}', encoding="utf-8")
    assert read_plans(path)["plans"] == {}


# ---- validate and links out of the checkout -----------------------------------------------------------------------

SECRET = "ghp_SECRETTOKENxyz0123456789abcdefABCDEF"


def _checkout(tmp_path) -> tuple[Path, Path]:
    """A checkout (it holds .git) and, outside it, a file a runner might have (a token)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".github").mkdir()
    outside = tmp_path / "runner-home" / "credentials"
    outside.parent.mkdir()
    outside.write_text(SECRET + "\n", encoding="utf-8")
    return repo, outside


def _validate(repo: Path, *args: str, workspace: bool = False):
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_WORKSPACE", "GITHUB_ACTIONS")}
    if workspace:
        env.update(GITHUB_WORKSPACE=str(repo), GITHUB_ACTIONS="true")
    return subprocess.run([sys.executable, "-m", "triage", "validate", *args], capture_output=True, text=True,
                          cwd=repo, env={**env, "PYTHONPATH": str(ROOT)}, timeout=60)


@pytest.mark.parametrize("workspace", [False, True])
def test_validate_refuses_a_configuration_file_linked_out_of_the_checkout(tmp_path, workspace):
    repo, outside = _checkout(tmp_path)
    (repo / ".github" / "ptd-triage.yml").symlink_to(outside)
    run = _validate(repo, "--config", ".github/ptd-triage.yml", "--format", "github", workspace=workspace)
    said = run.stdout + run.stderr
    assert run.returncode == 2 and SECRET not in said and str(outside) not in said, said
    lines = [line for line in run.stderr.splitlines() if line.startswith("ptd-triage: error:")]
    assert len(lines) == 1 and ".github/ptd-triage.yml: a link to outside the repository's checkout" in lines[0]


def test_validate_refuses_a_queue_folder_with_a_template_linked_out(tmp_path):
    repo, outside = _checkout(tmp_path)
    folder = repo / ".github" / "ptd-triage"
    for queue_file in (ROOT / "examples" / "queues" / "storage").rglob("*"):
        if queue_file.is_file() and queue_file.suffix != ".jsonl":
            target = folder / queue_file.relative_to(ROOT / "examples" / "queues" / "storage")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(queue_file.read_text(encoding="utf-8"), encoding="utf-8")
    template = next((folder / "templates").glob("*.md.j2"))
    template.unlink()
    template.symlink_to(outside)
    run = _validate(repo, "--config", ".github/ptd-triage/")
    said = run.stdout + run.stderr
    assert run.returncode == 2 and SECRET not in said and "a link to outside the repository's checkout" in said
    template.unlink()
    template.symlink_to(repo / ".github" / "ptd-triage" / "templates" / next(
        p.name for p in (folder / "templates").glob("*.md.j2")))  # a link inside the checkout: fine
    run = _validate(repo, "--config", ".github/ptd-triage/")
    assert "outside the repository's checkout" not in run.stdout + run.stderr


def test_a_plain_configuration_in_the_checkout_still_validates(tmp_path):
    repo, _ = _checkout(tmp_path)
    (repo / ".github" / "ptd-triage.yml").write_text("queue: pt2\n", encoding="utf-8")
    run = _validate(repo, "--config", ".github/ptd-triage.yml")
    assert run.returncode == 0, run.stdout + run.stderr
