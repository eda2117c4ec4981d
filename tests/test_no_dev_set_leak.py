"""The rubrics and the code must not know the eval sets: no issue number, no issue title of any of them.

Tuning a rule to one record is overfitting that the held-out sets punish, so this guards it mechanically, for every
eval set a queue is tuned on: the distributed queue's dev.jsonl and dev2.jsonl, and the pt2 queue's pt2-dev.jsonl.
Numbers are checked against sha256 hashes kept in tests/data/ (so a fresh clone without ../shared is still
guarded); titles need the set itself and are checked only when it is present.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
# eval set (under ../shared/eval/) -> the hash list of its issue numbers
SETS = {
    "dev.jsonl": DATA / "dev_issue_number_hashes.txt",
    "dev2.jsonl": DATA / "dev2_issue_number_hashes.txt",
    "pt2-dev.jsonl": DATA / "pt2_dev_issue_number_hashes.txt",
}
HASHES = SETS["dev.jsonl"]
SCANNED = ["triage", "queues", "entrypoint.py", "action.yml"]
MIN_TITLE = 20
# Whole tokens of 4+ digits: smaller numbers are common ints, and dev issue numbers all have more digits.
# A digit run glued to letters or dots (hex digests, versions like 2.5.1) is not an issue number.
NUMBER = re.compile(r"(?<![\w.])\d{4,}(?!\w|\.\d)")


def _dev_set(name: str = "dev.jsonl") -> Path | None:
    shared = Path(os.environ.get("PTD_SHARED_DIR") or ROOT.parent / "shared")
    path = shared / "eval" / name
    return path if path.is_file() else None


def _digest(number: str) -> str:
    return hashlib.sha256(number.encode()).hexdigest()


def _hashes(path: Path = HASHES) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(p for p in sorted(path.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)
    return files


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def leaked_numbers(files: list[Path], hashes: set[str], root: Path = ROOT) -> list[str]:
    found = []
    for path in files:
        for match in NUMBER.finditer(_text(path)):
            if _digest(match.group().lstrip("0") or "0") in hashes:
                found.append(f"{path.relative_to(root)}: {match.group()}")
    return found


def test_the_scan_covers_the_rubric_and_code():
    names = {p.relative_to(ROOT).as_posix() for p in _scanned_files()}
    assert "queues/distributed/labels.json" in names
    assert "queues/pt2/rubric.yaml" in names
    assert any(n.startswith("triage/") and n.endswith(".py") for n in names)
    for path in SETS.values():
        assert len(_hashes(path)) >= 100, path  # the hash list is the set's, not an empty file


@pytest.mark.parametrize("name", sorted(SETS))
def test_no_dev_issue_number_in_rubric_or_code(name):
    leaks = leaked_numbers(_scanned_files(), _hashes(SETS[name]))
    assert not leaks, f"{name} issue numbers found (tune rules to patterns, not records): " + "; ".join(leaks)


def test_number_scan_catches_a_planted_number(tmp_path):
    planted = tmp_path / "rule.yaml"
    planted.write_text(
        "skip: [issue 123457]  # see #123457.\nversion: 2.123457.1\nsha: ab123457 123457cd 123457.5 1234570\n"
    )
    hits = leaked_numbers([planted], {_digest("123457")}, root=tmp_path)
    # the two whole tokens only: not a version part, a hex digest, a decimal or a longer number
    assert hits == ["rule.yaml: 123457", "rule.yaml: 123457"]


@pytest.mark.parametrize("name", sorted(SETS))
def test_hash_list_matches_the_dev_set(name):
    dev = _dev_set(name)
    if dev is None:
        pytest.skip(f"{name} absent (fresh clone): the stored hashes are used as they are")
    numbers = {json.loads(line)["issue"]["number"] for line in dev.read_text().splitlines() if line.strip()}
    assert {_digest(str(n)) for n in numbers} == _hashes(SETS[name]), f"regenerate {SETS[name].relative_to(ROOT)}"


@pytest.mark.parametrize("name", sorted(SETS))
def test_no_dev_issue_title_in_rubric_or_code(name):
    dev = _dev_set(name)
    if dev is None:
        pytest.skip(f"{name} absent: titles cannot be checked without it")
    titles = {
        json.loads(line)["issue"]["title"].strip().lower()
        for line in dev.read_text().splitlines()
        if line.strip()
    }
    titles = {t for t in titles if len(t) >= MIN_TITLE}
    assert titles
    leaks = []
    for path in _scanned_files():
        text = " ".join(_text(path).lower().split())
        leaks += [f"{path.relative_to(ROOT)}: {t!r}" for t in titles if " ".join(t.split()) in text]
    assert not leaks, f"{name} titles found in rubric or code: " + "; ".join(leaks)


# The invented sets the rubric was tuned on (issues 28-29) ship with the repository: their numbers and titles are
# checked from the files themselves.
INVENTED = sorted((ROOT / "examples" / "invented-sets").glob("*/issues.jsonl"))


def test_the_invented_sets_are_there():
    assert {p.parent.name for p in INVENTED} >= {"set6", "set7", "set8", "set9", "set10", "everyday20"}


@pytest.mark.parametrize("path", INVENTED, ids=lambda p: p.parent.name)
def test_no_invented_issue_number_or_title_in_rubric_or_code(path):
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    hashes = {_digest(str(row["issue"]["number"])) for row in rows}
    leaks = leaked_numbers(_scanned_files(), hashes)
    titles = {" ".join(row["issue"]["title"].strip().lower().split()) for row in rows}
    titles = {t for t in titles if len(t) >= MIN_TITLE}
    for file in _scanned_files():
        text = " ".join(_text(file).lower().split())
        leaks += [f"{file.relative_to(ROOT)}: {t!r}" for t in titles if t in text]
    assert not leaks, f"{path.parent.name}: issue numbers or titles found in rubric or code: " + "; ".join(leaks)
