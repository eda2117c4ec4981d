"""The repository as a maintained Action (issue 21 item 6): the version written in one place and shown by
`ptd-triage --version`, a changelog in Keep a Changelog's format, and a release step that moves the major-version
tag users pin (`@v1`). The CI workflow itself is checked in test_workflows.py."""
from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import triage

ROOT = Path(__file__).resolve().parents[1]
SEMVER = re.compile(r"^\d+\.\d+\.\d+$")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_version_is_written_once():
    project = _pyproject()
    assert "version" not in project["project"], "pyproject.toml must read the version, not repeat it"
    assert project["project"]["dynamic"] == ["version"]
    source = ROOT / project["tool"]["hatch"]["version"]["path"]
    assert source == ROOT / "triage" / "__init__.py"
    written = re.findall(r'^__version__ = "([^"]+)"$', source.read_text(encoding="utf-8"), re.M)
    assert written == [triage.__version__] and SEMVER.match(triage.__version__)
    # No other file of the package or the Action spells the version out.
    others = [p for p in [*(ROOT / "triage").rglob("*.py"), ROOT / "action.yml", ROOT / "entrypoint.py",
                          ROOT / "Dockerfile"]
              if p != source and f'"{triage.__version__}"' in p.read_text(encoding="utf-8")]
    assert not others, others


def test_the_installed_metadata_carries_that_version():
    # Read from triage/__init__.py by hatchling when the package was installed (re-install after a bump).
    assert importlib.metadata.version("ptd-triage") == triage.__version__


def test_ptd_triage_version_shows_it():
    proc = subprocess.run([sys.executable, "-m", "triage", "--version"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"ptd-triage {triage.__version__}\n"


def test_the_api_user_agent_names_the_version():
    from triage.github.client import GitHubClient
    import inspect
    default = inspect.signature(GitHubClient.__init__).parameters["user_agent"].default
    assert default == f"ptd-triage/{triage.__version__}"


# ---- CHANGELOG.md ------------------------------------------------------------------------------------------------

_RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$")
_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def _changelog() -> list[str]:
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()


def test_changelog_is_keep_a_changelog():
    lines = _changelog()
    assert lines[0] == "# Changelog"
    assert any("keepachangelog.com" in line for line in lines[:10])
    releases = [line for line in lines if line.startswith("## ")]
    assert releases[0] == "## [Unreleased]", "the newest section is Unreleased"
    assert all(_RELEASE.match(line) for line in releases[1:]), releases
    for line in lines:
        if line.startswith("### "):
            assert line[4:] in _KINDS, line
    # The Unreleased section says something, under Keep a Changelog's headings.
    end = next((i for i, line in enumerate(lines) if i > lines.index("## [Unreleased]") and line.startswith("## ")),
               len(lines))
    unreleased = lines[lines.index("## [Unreleased]"):end]
    assert any(line.startswith("### ") for line in unreleased)
    assert sum(line.startswith("- ") for line in unreleased) >= 5


def test_released_versions_are_in_order_and_not_ahead_of_the_package():
    versions = [tuple(map(int, m.group(1).split("."))) for m in map(_RELEASE.match, _changelog()) if m]
    assert versions == sorted(versions, reverse=True)
    current = tuple(map(int, triage.__version__.split(".")))
    # The package's version is the newest release, or the one being prepared (above every release).
    assert not versions or current >= versions[0]


# ---- docs/releasing.md -------------------------------------------------------------------------------------------

def test_the_release_step_is_documented():
    text = (ROOT / "docs" / "releasing.md").read_text(encoding="utf-8")
    # Where the version lives, the changelog, the exact tag and the moving major tag users pin.
    for needed in ("triage/__init__.py", "CHANGELOG.md", "## [Unreleased]", "git tag -a vX.Y.Z",
                   "git tag -fa vX", "git push origin vX.Y.Z", "git push --force origin vX", "@v1", ".ci/run"):
        assert needed in text, needed
    # The README links to it, so a maintainer finds it.
    assert "docs/releasing.md" in (ROOT / "README.md").read_text(encoding="utf-8")
