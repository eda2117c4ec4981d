"""A configuration read from a repository's checkout stays in that checkout (issue 37).

`ptd-triage validate` runs on pull requests (examples/workflows/ptd-triage-validate.yml), over files the pull
request wrote. A symbolic link among them (`.github/ptd-triage.yml -> /home/runner/.credentials`) would make it
read a file outside the checkout and echo its lines into the run's annotations. So before anything is read, every
path given and everything inside a folder given must resolve inside the checkout the path was named in; one that
does not is refused in one line that names the link, never its target or what it holds.

The checkout: `GITHUB_WORKSPACE` when the path was named inside it (the Actions runner's checkout); else the nearest
folder at or above the path that holds `.git`; else the folder the path was named in.

May import: the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_ENTRIES = 2000  # a queue folder holds a handful of files; a folder with more is read no further than this


def checkout_of(path: Path) -> Path:
    """The checkout `path` was named in (links not followed: where it was named, not where it points)."""
    here = Path(os.path.abspath(path))
    workspace = os.environ.get("GITHUB_WORKSPACE", "").strip()
    if workspace and here.is_relative_to(os.path.abspath(workspace)):
        return Path(os.path.abspath(workspace))
    start = here if here.is_dir() and not here.is_symlink() else here.parent
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def outside_problem(path: str | Path) -> str | None:
    """One line saying which link under `path` leads out of its checkout; None when none does."""
    path = Path(path)
    root = checkout_of(path).resolve()
    for entry in _entries(path):
        try:
            real = entry.resolve()
        except (OSError, RuntimeError):  # a loop of links
            real = None
        if real is None or not real.is_relative_to(root):
            return (f"{entry}: a link to outside the repository's checkout ({root}): refused, not read (a "
                    "configuration is read from the checkout only)")
    return None


def _entries(path: Path):
    """The path, and when it is a folder (itself not a link), everything in it, links not followed."""
    yield path
    if path.is_symlink() or not path.is_dir():
        return
    count = 0
    for folder, dirs, files in os.walk(path, followlinks=False):
        for name in dirs + files:
            count += 1
            if count > MAX_ENTRIES:
                return
            yield Path(folder) / name


__all__ = ["checkout_of", "outside_problem"]
