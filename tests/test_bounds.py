"""Issue 20: a configuration (or a plans file) cannot exhaust the runner, and cannot lower the procedure's floor.

Each hostile file goes through the real CLI (`python -m triage validate`) and the real `entrypoint.py` (the file
read through the contents API of the GitHub stand-in), in a subprocess whose peak memory is measured by a parent
that waits for it (`resource.getrusage(RUSAGE_CHILDREN)` counts only its own children). Each must end in one clear
error line, within 2 s and 200 MB, and write nothing.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import actionrun
from actionrun import FSDP_WITH_REPRO, QUEUE, REPO, issues_payload, run_action, seed_issue

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ".github/ptd-triage.yml"
CONFIG_INPUT = {"config": CONFIG}
# The bound is on the CPU the refusal costs (user + system time of the child), which is what the attack consumed
# (77 s): wall-clock time on a shared 2-CPU runner also counts other processes' turns (2.06 s was seen at a load of
# 8). Wall-clock time keeps a generous bound as the guard against a hang.
MAX_SECONDS, MAX_MB, MAX_WALL_SECONDS = 2.0, 200, 20.0

# 1 KB, 9 levels of 10 aliases each: 10^9 nodes once expanded (the attack in issue 20 took 77 s and 4.8 GB).
BILLION_LAUGHS = "rubric:\n  lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"  lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 10))
NESTED_LOOPS = ("templates:\n  not_distributed: |\n    Hi.\n"
                "    {% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}\n")
DEEP_YAML = "rubric:\n  x: " + "[" * 50_000 + "]" * 50_000 + "\n"

# The measuring parent: runs its arguments as one child and reports the child's peak RSS (KB on Linux) and CPU
# seconds (user + system).
_MEASURE = ("import resource, subprocess, sys\n"
            "rc = subprocess.call(sys.argv[2:])\n"
            "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "open(sys.argv[1], 'w').write(f'{use.ru_maxrss} {use.ru_utime + use.ru_stime}')\n"
            "sys.exit(rc)\n")


def _usage(path: Path) -> tuple[float, float]:
    """(CPU seconds, peak MB) of the measured child."""
    rss, cpu = path.read_text().split()
    return float(cpu), int(rss) / 1024


def _measured(tmp_path: Path, argv: list[str]) -> tuple[subprocess.CompletedProcess, float, float, float]:
    """The child's run, its wall-clock seconds, CPU seconds and peak MB."""
    rss = tmp_path / "rss.txt"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(rss), *argv], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    return (proc, time.monotonic() - started, *_usage(rss))


def _validate(tmp_path: Path, text: str):
    config = tmp_path / "ptd-triage.yml"
    config.write_text(text, encoding="utf-8")
    return _measured(tmp_path, [sys.executable, "-m", "triage", "validate", "--config", str(config)])


@pytest.fixture
def measured_entry(tmp_path, monkeypatch):
    """entrypoint.py run under the measuring parent; the peak RSS is read from `rss.txt` after the run."""
    shim = tmp_path / "measured_entry.py"
    shim.write_text(_MEASURE.replace("sys.argv[1]", repr(str(tmp_path / "rss.txt"))).replace(
        "sys.argv[2:]", f"[sys.executable, {str(actionrun.ENTRYPOINT)!r}]"), encoding="utf-8")
    monkeypatch.setattr(actionrun, "ENTRYPOINT", shim)
    return lambda: _usage(tmp_path / "rss.txt")


def _one_error_line(text: str) -> str:
    errors = [line for line in text.splitlines() if line.startswith("::error::")]
    assert len(errors) == 1, text
    assert "Traceback" not in text and "RecursionError" not in text and "MemoryError" not in text
    return errors[0]


@pytest.mark.parametrize("text,expected", [
    (BILLION_LAUGHS, "ptd-triage.yml:7: stands for more than"),
    (NESTED_LOOPS, "ptd-triage.yml:4: more than 100,000 loop steps"),
    (DEEP_YAML, "ptd-triage.yml:2: nests deeper than"),
], ids=["billion-laughs", "nested-range-template", "deep-nesting"])
def test_validate_refuses_a_hostile_config_in_one_line_quickly_and_small(tmp_path, text, expected):
    assert len(BILLION_LAUGHS) < 1100
    proc, wall, cpu, mb = _validate(tmp_path, text)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode in (1, 2) and expected in lines[0], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and len([l for l in lines if expected in l]) == 1
    assert cpu < MAX_SECONDS and mb < MAX_MB and wall < MAX_WALL_SECONDS, (cpu, mb, wall)


@pytest.mark.parametrize("text,expected", [
    (BILLION_LAUGHS, ":7: stands for more than"),
    (NESTED_LOOPS, ":4: more than 100,000 loop steps"),
    (DEEP_YAML, ":2: nests deeper than"),
], ids=["billion-laughs", "nested-range-template", "deep-nesting"])
def test_the_action_refuses_a_hostile_repository_config_in_one_error_line(fake_github, tmp_path, measured_entry,
                                                                          text, expected):
    fake_github.add_file(REPO, CONFIG, text)
    seed_issue(fake_github, 3, FSDP_WITH_REPRO)
    started = time.monotonic()
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 3, "labeled", label=QUEUE),
                     inputs=CONFIG_INPUT)
    wall = time.monotonic() - started
    cpu, mb = measured_entry()
    assert run.returncode == 1
    assert f"{REPO}:{CONFIG}{expected}" in _one_error_line(run.stdout)
    assert not run.writes
    assert cpu < MAX_SECONDS and mb < MAX_MB and wall < MAX_WALL_SECONDS, (cpu, mb, wall)


def test_a_deeply_nested_plans_file_ends_in_one_error_line(fake_github, tmp_path):
    seed_issue(fake_github, 3, FSDP_WITH_REPRO)
    plans = tmp_path / "plans.json"
    plans.write_text('{"version": 1, "plans": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 3, "labeled", label=QUEUE),
                     inputs={"mode": "apply", "plans-file": str(plans)})
    assert run.returncode == 1
    assert "plans.json:1: nests deeper than" in _one_error_line(run.stdout)
    assert not run.writes


# ---- the floor: reserved labels ----------------------------------------------------------------------------------

EMPTY_FORBIDDEN = "labels:\n  forbidden: []\n"
RESERVED_AS_MODULE = ("labels:\n  add:\n    - {name: \"high priority\", role: module, description: \"x\", "
                      "color: \"ff0000\"}\n")


@pytest.mark.parametrize("text,expected", [
    (EMPTY_FORBIDDEN, "ptd-triage.yml:2: forbidden must keep 'high priority'"),
    (EMPTY_FORBIDDEN + RESERVED_AS_MODULE.removeprefix("labels:\n"),
     "ptd-triage.yml:4: label 'high priority' is reserved for people"),
    (RESERVED_AS_MODULE, "ptd-triage.yml:3: label 'high priority' is reserved for people"),
], ids=["empty-forbidden", "empty-forbidden-and-module", "module"])
def test_validate_reports_a_config_that_lowers_the_floor(tmp_path, text, expected):
    proc, *_ = _validate(tmp_path, text)
    assert proc.returncode == 1 and expected in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("text", [EMPTY_FORBIDDEN, EMPTY_FORBIDDEN + RESERVED_AS_MODULE.removeprefix("labels:\n"),
                                  RESERVED_AS_MODULE], ids=["empty-forbidden", "empty-forbidden-and-module", "module"])
def test_the_action_refuses_a_config_that_lowers_the_floor_and_writes_nothing(fake_github, tmp_path, text):
    fake_github.add_file(REPO, CONFIG, text)
    seed_issue(fake_github, 4, ("FSDP segfault on 64 nodes since 2.5 (regression)", "Segfault in all_reduce.\n"))
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 4, "labeled", label=QUEUE),
                     inputs=CONFIG_INPUT)
    assert run.returncode == 1
    assert "high priority" in _one_error_line(run.stdout)
    assert not run.writes and "high priority" not in fake_github.issue_labels(REPO, 4)


# ---- smaller gaps: queue labels, markers, file and line ----------------------------------------------------------

@pytest.mark.parametrize("label", ['oncall: "x', "oncall\\x", " oncall", "a\tb"])
def test_a_queue_label_is_checked_the_same_from_a_file_and_from_the_input(fake_github, tmp_path, label):
    proc, *_ = _validate(tmp_path, f"queue_label: {json.dumps(label)}\n")
    assert proc.returncode in (1, 2) and "ptd-triage.yml:1:" in proc.stdout + proc.stderr
    assert "quoted in the sweep's search query" in proc.stdout + proc.stderr
    if label != label.strip():
        return  # an input is trimmed by the runner's convention (get_input), a file's value is not
    run = run_action(fake_github, tmp_path, "schedule", actionrun.schedule_payload(), inputs={"queue-label": label})
    assert run.returncode == 1 and "quoted in the sweep's search query" in _one_error_line(run.stdout)
    assert not run.requests


def test_a_template_may_carry_only_its_own_marker(tmp_path):
    text = ("templates:\n  needs_distributed_reproduction: |\n    Please add a script.\n"
            "    <!-- ptd-triage:not_distributed -->\n")
    proc, *_ = _validate(tmp_path, text)
    assert proc.returncode == 1
    assert "ptd-triage.yml:4: carries the marker of template 'not_distributed'" in proc.stdout, proc.stdout


def test_a_template_that_builds_another_marker_is_refused_when_rendered():
    from triage.config.templates import TemplatesError, build_templates

    with pytest.raises(TemplatesError, match="renders the marker of template 'other'"):
        build_templates("t", {"mine": "{{ 'ptd-' ~ 'triage:other' }}"}, required=())


def test_a_template_error_names_the_repository_file_and_line(tmp_path):
    text = "templates:\n  not_distributed: |\n    Hi.\n    {{ nothing.here }}\n"
    proc, *_ = _validate(tmp_path, text)
    assert proc.returncode == 1 and "ptd-triage.yml:4: 'nothing' is undefined" in proc.stdout, proc.stdout


def test_an_oversized_yaml_document_is_refused_unread():
    from triage.config.safe_yaml import MAX_BYTES, DocumentError, compose_yaml

    with pytest.raises(DocumentError, match="refused unread"):
        compose_yaml("a: " + "x" * MAX_BYTES, "big.yml")


def test_aliases_within_the_bounds_still_load():
    from triage.config.safe_yaml import compose_yaml

    assert compose_yaml("a: &x [1, 2]\nb: *x\n", "ok.yml")[0] == {"a": [1, 2], "b": [1, 2]}
