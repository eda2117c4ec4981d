"""The README's "Before you go live" commands run as written (issue 32), against the GitHub stand-in: the first
reads the last 90 days into the cache, the second, with an edited copy of the queue, reads no issue again."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from fakegithub import FakeGitHub
from shadow_world import build_window

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/widgets"


def _section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Before you go live")
    return readme[start:readme.index("\n## ", start + 1)]


def test_the_readme_before_you_go_live_commands_run(tmp_path):
    section = _section()
    commands = [line for block in re.findall(r"```sh\n(.*?)```", section, re.S) for line in block.splitlines()
                if line.strip()]
    assert len(commands) == 2 and all("ptd-triage shadow" in c for c in commands), commands
    (copy_queue,) = [" ".join(c.split()) for c in re.findall(r"`(cp -r [^`]+)`", section)]
    # `gh auth token` prints the stand-in's token; the package's `ptd-triage` comes first on PATH
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "queues").symlink_to(ROOT / "queues")
    with FakeGitHub(epoch=datetime.now(timezone.utc) - timedelta(days=30)) as gh:
        world = build_window(gh, 30, repo=REPO)
        (bin_dir / "gh").write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'auth token' ] && echo {gh.token}\n")
        (bin_dir / "gh").chmod(0o755)
        env = {**os.environ, "GITHUB_API_URL": gh.url,
               "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]])}
        env.pop("GITHUB_ACTIONS", None)

        def sh(command: str) -> subprocess.CompletedProcess:
            return subprocess.run(["bash", "-c", command.replace("OWNER/REPO", REPO)], cwd=tmp_path / "work",
                                  env=env, capture_output=True, text=True, timeout=300)

        first = sh(commands[0])
        assert first.returncode == 0, first.stderr
        report = (tmp_path / "work" / "shadow.md").read_text(encoding="utf-8")
        # the last 90 days hold every issue of this world: those of its window, before it and after it
        queued = len(world.truths) + len(world.outside) + 2
        assert f"- {queued} issues entered the queue between" in report and "### Disagreements" in report
        assert len([r for r in gh.requests if r.path.endswith("/timeline")]) == queued
        assert sh(copy_queue).returncode == 0
        rubric = tmp_path / "work" / "my-queue" / "rubric.yaml"
        assert rubric.is_file()
        start = len(gh.requests)
        second = sh(commands[1])
        assert second.returncode == 0, second.stderr
        assert {r.path for r in gh.requests[start:]} == {"/search/issues"}  # from the cache: no issue read
        assert "0 read from the cache" not in (tmp_path / "work" / "shadow.md").read_text(encoding="utf-8")
        assert not gh.violations and gh.writes() == []
