"""The dry-run check lives in one place (issue 36): the executor (triage/service/executor.py) decides whether a run
writes, and everywhere else the setting is only read (the Action's settings, the CLI's options), handed on to the
executor, or reported from the executor's record. It was written 8 times in 3 files, and plan mode's promise to
write nothing held only as long as every copy did.

Read from the source (AST):
- no function outside the executor both tests a dry-run value (in an `if`, a `while`, a conditional expression, an
  `assert`, a boolean operation) and makes a call that can write (a GitHub write, the executor, the labels sync);
- the modules that name `dry_run` at all are the ones listed here, each for its role: a new one is a new place
  that reads the setting and must say why;
- the executor is where the setting decides (`executor_for`), and the check sees the old pattern (a planted
  example)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "triage"
EXECUTOR = "service/executor.py"
# Calls that can write: the GitHub port's writes, the client's other writes, and what runs them.
WRITES = {"create_comment", "add_labels", "add_reaction", "claim_issue", "release_claim", "delete_own_comment",
          "create_label", "update_label", "apply_sync", "execute", "sync_labels", "may_post", "settle"}
# Every module that names `dry_run`, and why.
ROLES = {
    EXECUTOR: "decides: a dry run gets an executor with no client",
    "action/settings.py": "reads the `dry-run` input",
    "action/context.py": "hands the setting to the executor and makes the client read-only",
    "action/planmode.py": "plan mode is a dry run: sets it",
    "cli/commands/sweep.py": "reads --dry-run, hands it to the service",
    "cli/commands/labels.py": "--apply: hands the setting to the executor",
    "service/triager.py": "hands the setting to the executor; records the executor's mode in the results",
    "service/sweep.py": "records the executor's mode in the sweep's rules and result",
    "service/results.py": "reports: labels written, or that would have been",
    "service/summary.py": "reports: one line per issue",
    "action/summary.py": "reports: the step summary's wording",
    "action/summary_blocks.py": "reports: the step summary's comment texts and re-triage line",
    "action/main.py": "reports: the log's wording",
    "action/routers/labels_sync.py": "reports the executor's answer as the task's result",
    "action/routers/command.py": "reports the executor's record in the refusal's wording",
}


def _mentions_dry_run(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and n.id == "dry_run") or (isinstance(n, ast.Attribute) and n.attr == "dry_run")
               for n in ast.walk(node))


def _names_dry_run(tree: ast.AST) -> bool:
    """`dry_run` anywhere: a name, an attribute, a keyword argument, a parameter."""
    return _mentions_dry_run(tree) or any(
        (isinstance(n, ast.keyword) and n.arg == "dry_run") or (isinstance(n, ast.arg) and n.arg == "dry_run")
        for n in ast.walk(tree))


def _tests_of(function: ast.AST) -> list[ast.AST]:
    tests: list[ast.AST] = []
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests.extend(node.values)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
    return tests


def _write_calls(function: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in WRITES:
                found.append(name)
    return found


def gated_writes(source: str) -> list[str]:
    """Functions of `source` that test a dry-run value and make a call that can write."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_mentions_dry_run(test) for test in _tests_of(node)) and _write_calls(node):
                problems.append(f"{node.name} (writes: {', '.join(sorted(set(_write_calls(node))))})")
    return problems


def _modules() -> dict[str, str]:
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in sorted(ROOT.rglob("*.py"))}


def test_no_function_outside_the_executor_decides_on_dry_run_around_a_write():
    problems = {name: gated_writes(source) for name, source in _modules().items() if name != EXECUTOR}
    assert not {name: found for name, found in problems.items() if found}, problems


def test_the_modules_that_name_dry_run_are_the_listed_ones():
    naming = {name for name, source in _modules().items() if _names_dry_run(ast.parse(source))}
    assert naming == set(ROLES), (f"new: {sorted(naming - set(ROLES))}; gone: {sorted(set(ROLES) - naming)}")


def test_the_executor_is_where_the_setting_decides():
    tree = ast.parse((ROOT / EXECUTOR).read_text(encoding="utf-8"))
    chooser = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "executor_for")
    assert any(_mentions_dry_run(test) for test in _tests_of(chooser))
    dry = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "DryRun")
    assert not _write_calls(dry)  # the dry run's executor calls nothing that writes


def test_the_check_sees_the_old_patterns():
    old_triager = ("def _triage(self, plan):\n    writes = planned(plan)\n    if self.dry_run or not writes:\n"
                   "        return\n    apply_writes(self.client, writes)\n    self.client.add_labels(1, [])\n")
    old_router = ("def on_comment(context):\n    if not context.settings.dry_run:\n"
                  "        context.client.add_reaction(1, 'eyes')\n")
    reporting = "def line(result):\n    return 'would add' if result.dry_run else 'added'\n"
    assert gated_writes(old_triager) == ["_triage (writes: add_labels)"]
    assert gated_writes(old_router) == ["on_comment (writes: add_reaction)"]
    assert gated_writes(reporting) == []
