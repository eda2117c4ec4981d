"""`ptd-triage validate`: every problem on one line with file and line, for a queue folder and a repository config.

Each broken configuration is the bundled pt2 queue copied and edited the way a fork's author might get it wrong;
the test checks the exact line the problem is reported at (found by searching the edited file, not hard-coded).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PT2 = ROOT / "queues" / "pt2"


def copy_queue(tmp_path: Path) -> Path:
    target = tmp_path / "queue"
    shutil.copytree(PT2, target)
    return target


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(path: Path, needle: str, *, last: bool = False) -> int:
    found = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in line]
    assert found, f"{needle!r} not in {path}"
    return found[-1] if last else found[0]


def validate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage", "validate", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def problems(folder: Path) -> list[str]:
    from triage.cli.common import config_sources
    from triage.cli.main import build_parser
    from triage.config.validate import check

    args = build_parser().parse_args(["validate", "--config", str(folder)])
    return [str(p) for p in check(config_sources(args))]


def test_the_bundled_pt2_queue_is_valid_and_exits_0():
    run = validate("--config", str(PT2))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("ok:")


def test_unknown_label_is_reported_at_its_line(tmp_path):
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, 'label: "module: functorch"', 'label: "module: functorchh"')
    found = problems(queue)
    assert found == [f"{rubric}:{line_of(rubric, 'module: functorchh')}: topic 'functorch' names label "
                     "'module: functorchh', which is not in the allowlist (needs role 'module')"]


def test_label_with_the_wrong_role_is_reported(tmp_path):
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, 'label: "oncall: export"', 'label: "module: dynamo"')
    (msg,) = problems(queue)
    line = line_of(rubric, '      label: "module: dynamo"')  # the route's (indented under routes:), not the topic's
    assert msg.startswith(f"{rubric}:{line}:")
    assert "route 'export' names label 'module: dynamo', which has role 'module'" in msg


def test_missing_template_is_reported(tmp_path):
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    (queue / "templates" / "not_pt2.md.j2").unlink()
    (msg,) = problems(queue)
    assert msg == (f"{rubric}:{line_of(rubric, 'not_distributed: not_pt2')}: comments.not_distributed names template "
                   f"'not_pt2', but {queue / 'templates'} has no not_pt2.md.j2")


def test_bad_regex_is_reported_at_its_signal(tmp_path):
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, "match: '\\bcompiled[_ ]autograd\\b", "match: '\\bcompiled[_ autograd\\b")
    (msg,) = problems(queue)
    assert msg.startswith(f"{rubric}:{line_of(rubric, 'id: ca-name')}: ")
    assert "signal 'ca-name'" in msg and "RE2" in msg


@pytest.mark.parametrize("pattern", ["(a+)+\\1", "(?=a)b", "(?<!x)y", "a{1001}", "((a{1000}){1000}){1000}"],
                         ids=["backreference", "lookahead", "lookbehind", "repeat-over-1000", "nested-repeat"])
def test_catastrophic_patterns_are_refused(tmp_path, pattern):
    """Catastrophic backtracking needs a backtracking engine: under RE2 a pattern is linear-time or refused. What
    RE2 refuses (backreferences and lookarounds, repetition counts over 1000, programs over its memory budget)
    is what `validate` reports."""
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, "id: cg-name\n        match: '", "id: cg-name\n        match: '" + pattern + "|")
    (msg,) = problems(queue)
    assert msg.startswith(f"{rubric}:{line_of(rubric, 'id: cg-name')}: ") and "signal 'cg-name'" in msg


def test_route_missing_from_precedence_is_reported(tmp_path):
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, "precedence: [export, cpu-inductor, core]", "precedence: [export, core]")
    (msg,) = problems(queue)
    assert msg == f"{rubric}:{line_of(rubric, 'precedence:')}: route 'cpu-inductor' is missing from routing.precedence"


def test_several_problems_one_line_each_and_exit_1(tmp_path):
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, "precedence: [export, cpu-inductor, core]", "precedence: [export, core]")
    edit(rubric, 'label: "module: functorch"', 'label: "module: nope"')
    run = validate("--config", str(queue))
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{rubric}:") for line in lines)
    assert run.stderr.strip() == "2 problems found"


def test_a_queue_with_two_or_five_routes_passes(tmp_path):
    """Route names and their number are configuration: nothing in the schema or the checks fixes them."""
    queue = copy_queue(tmp_path)
    rubric = queue / "rubric.yaml"
    edit(rubric, "precedence: [export, cpu-inductor, core]",
         "precedence: [export, cpu-inductor, alpha, beta, core]")
    edit(rubric, "    core:\n      label: null", "    alpha:\n      label: \"oncall: export\"\n"
         "    beta:\n      label: \"oncall: cpu inductor\"\n    core:\n      label: null")
    # two routes share a label above: that is allowed by the schema; a fork would name its own
    assert problems(queue) == []
    two = copy_queue(tmp_path / "two")
    rubric2 = two / "rubric.yaml"
    edit(rubric2, "precedence: [export, cpu-inductor, core]", "precedence: [export, core]")
    text = rubric2.read_text(encoding="utf-8")
    start, end = text.index("    cpu-inductor:\n      label:"), text.index("    core:\n      label: null")
    rubric2.write_text(text[:start] + text[end:], encoding="utf-8")
    edit(rubric2, "    route: cpu-inductor\n", "    route: null\n")
    labels = two / "labels.json"
    edit(labels, '"route": "cpu-inductor",', "")
    assert problems(two) == []


def test_repository_config_problem_names_the_repository_file_and_line(tmp_path):
    config = tmp_path / "ptd-triage.yml"
    config.write_text("queue: pt2\nrubric:\n  routing:\n    precedence: [export, core]\n", encoding="utf-8")
    run = validate("--config", str(config))
    assert run.returncode == 1
    assert run.stdout.strip() == f"{config}:4: route 'cpu-inductor' is missing from routing.precedence"


def test_labels_gold_naming_a_route_the_rubric_lacks_is_reported(tmp_path):
    queue = tmp_path / "transit"
    shutil.copytree(ROOT / "tests" / "data" / "transit", queue)
    labels = queue / "labels.json"
    edit(labels, '"schedules"\n    ],', '"timetable"\n    ],')  # gold.either: [maps, timetable]
    edit(labels, '"component: fares": "payments"', '"component: fares": "billing"')
    either, module = line_of(labels, '"timetable"'), line_of(labels, "billing")
    assert problems(queue) == [
        f"{labels}:{either}: gold names route 'timetable', which the rubric does not define",
        f"{labels}:{module}: gold names route 'billing', which the rubric does not define",
    ]


def test_a_prompt_that_does_not_parse_is_a_problem_at_its_line(tmp_path):
    """It was "ok": a fork's broken prompt.md.j2 was found only when a model run started. A rubric run never reads
    the prompt, so planning with the rubric is not stopped by it."""
    queue = copy_queue(tmp_path)
    prompt = queue / "prompt.md.j2"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\n{% if %}\n", encoding="utf-8")
    run = validate("--config", str(queue))
    assert run.returncode == 1, run.stdout + run.stderr
    line = line_of(prompt, "{% if %}")
    assert run.stdout.splitlines() == [f"{prompt}:{line}: the prompt template does not parse: "
                                       "Expected an expression, got 'end of statement block'"], run.stdout
    planned = subprocess.run([sys.executable, "-m", "triage", "plan", "--config", str(queue), "--any-issue",
                              str(ROOT / "examples" / "issues" / "fsdp2-dtensor-backward.json")],
                             capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert planned.returncode == 0, planned.stderr


def test_a_repository_configs_prompt_is_checked_at_its_line(tmp_path):
    config = tmp_path / "ptd-triage.yml"
    config.write_text("prompt: |\n  Triage this issue.\n  {{ issue.title\n", encoding="utf-8")
    run = validate("--config", str(config))
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.startswith(f"{config}:3: the prompt template does not parse:"), run.stdout


def test_a_template_file_whose_name_breaks_the_template_name_rule_is_one_line(tmp_path):
    """Issue 30: a queue folder's template names follow the rule of a repository file's `templates:` keys."""
    queue = copy_queue(tmp_path)
    bad = queue / "templates" / "needs repro.md.j2"
    bad.write_text("Hi", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "triage", "validate", "--config", str(queue)], capture_output=True,
                          text=True, timeout=60)
    lines = proc.stdout.strip().splitlines()  # each problem one line on stdout; the count on stderr
    assert proc.returncode == 1 and len(lines) == 1, proc.stdout + proc.stderr
    assert f"{bad}: 'needs repro' is not a template name" in lines[0]
