"""The layout is the architecture: each sub-package imports only the layers below it, there is no import cycle,
the CLI never imports the Action, and modules and functions stay small. Read from the source (AST), so it holds for
lazy imports too."""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "triage"

# package -> the triage packages it may import (itself always allowed). Lazy imports count too.
ALLOWED = {
    "text": set(),
    "http": set(),
    # Shared reading every queue can use (what the rubric could not read, the learned type scorer): text only.
    "reading": {"text"},
    "config": {"text", "reading"},
    "github": {"http"},
    "core": {"text", "config", "github", "reading"},
    # The providers' protocols only: nothing about triage (the prompt, the schema, the answer's adapter are the
    # model planners', triage.planners.model).
    "llm": {"http"},
    "planners": {"config", "core", "llm", "text", "http"},
    "service": {"config", "core", "planners", "http", "github"},
    "evaluation": {"config", "core", "planners", "github", "text", "service"},
    "cli": {"config", "core", "planners", "github", "service", "evaluation", "http", "text", "llm"},
    "action": {"config", "core", "planners", "github", "service", "http", "text", "llm", "evaluation"},
}
# Narrower rules inside a package: core imports only GitHub's naming facts, never the client.
FORBIDDEN_MODULES = {"core": {"triage.github.client", "triage.github.transport"},
                     "config": {"triage.github.client", "triage.github.transport"}}
# Small modules with one job: no module over MODULE_LINES anywhere in triage/, and no function over FUNCTION_LINES
# in the packages that hold the procedure and its service (where a long function is a second job hiding).
MODULE_LINES = 400
FUNCTION_LINES = 60
FUNCTION_PACKAGES = ("core", "planners", "service")


@lru_cache(maxsize=None)
def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(path: Path, module: str) -> set[str]:
    found = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("triage")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.startswith("triage"):
                found.add(base)
                found |= {f"{base}.{a.name}" for a in node.names}
    return found


def test_each_package_imports_only_the_layers_below_it():
    modules = _modules()
    problems = []
    for name, path in modules.items():
        parts = name.split(".")
        if len(parts) < 2 or parts[1] not in ALLOWED:
            continue
        own = parts[1]
        for imported in _imports(path, name):
            bits = imported.split(".")
            if len(bits) < 2 or bits[1] == own or imported not in modules and ".".join(bits[:-1]) not in modules:
                continue
            if bits[1] not in ALLOWED[own] and bits[1] in ALLOWED:
                problems.append(f"{name} imports {imported}")
            if any(imported == f or imported.startswith(f + ".") for f in FORBIDDEN_MODULES.get(own, ())):
                problems.append(f"{name} imports {imported}")
    assert not problems, problems


@lru_cache(maxsize=None)
def _graph(*, module_level_only: bool) -> dict[str, set[str]]:
    """module -> the triage modules it imports; with `module_level_only` False, imports inside functions count."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = tree.body if module_level_only else list(ast.walk(tree))
        found = set()
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found |= {i for i in _imports_of(node, name, path, modules) if i in modules}
        graph[name] = found - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    seen, stack, cycles = set(), [], []

    def visit(node: str) -> None:
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    return cycles


def test_no_import_cycle_between_modules_at_import_time():
    assert not _cycles(_graph(module_level_only=True))


def test_no_import_cycle_counting_imports_inside_functions():
    """A lazy import is still a dependency: two modules that import each other inside functions are one module
    in two files. A package's __init__ counts as importing what it imports; a module does not depend on its
    package's __init__ merely by being inside it (Python runs it, but only for the names it defines)."""
    graph = _graph(module_level_only=False)
    cycles = _cycles(graph)
    assert not cycles, cycles[:3]


def test_the_cycle_check_sees_imports_inside_functions():
    graph = {"a": {"b"}, "b": {"a"}}
    assert _cycles(graph) == [["a", "b", "a"]]
    path = ROOT / "action" / "context.py"
    lazy = _graph(module_level_only=False)["triage.action.context"] - _graph(module_level_only=True)[
        "triage.action.context"]
    assert "triage.service.triager" in lazy, (path, lazy)  # imported inside a function only


def _may_import(path: Path) -> list[str] | None:
    """The backticked `triage...` names in the module docstring's "May import:" paragraph (None without one)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    if "May import" not in doc:
        return None
    paragraph = doc[doc.index("May import"):].split("\n\n")[0]
    return re.findall(r"`(triage[\w.]*(?:\.\*)?)`", paragraph)


def _covered(imported: str, allowed: list[str]) -> bool:
    for name in allowed:
        base = name[:-2] if name.endswith(".*") else name
        if imported == base or imported.startswith(base + "."):
            return True
    return False


def test_may_import_lines_are_true():
    """Where a module's docstring says what it may import, every triage module it imports (inside functions too)
    is named there (a name covers its sub-modules; `pkg.*` covers the package's modules)."""
    modules = _modules()
    problems, checked = [], 0
    for name, path in modules.items():
        allowed = _may_import(path)
        if allowed is None:
            continue
        checked += 1
        own = name if path.name == "__init__.py" else None  # a package's __init__ may import its own modules
        for imported in _all_imports(name, path, modules):
            if own and imported.startswith(own + "."):
                continue
            if not _covered(imported, allowed):
                problems.append(f"{name} imports {imported}; its docstring allows {allowed}")
    assert checked > 40
    assert not problems, problems


def _all_imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for imported in _imports_of(node, name, path, modules):
                if imported in modules:
                    found.add(imported)
    return found - {name}


def _imports_of(node, module: str, path: Path, modules: dict | None = None) -> set[str]:
    tmp = ast.Module(body=[node], type_ignores=[])
    found = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for sub in ast.walk(tmp):
        if isinstance(sub, ast.Import):
            found |= {a.name for a in sub.names}
        elif isinstance(sub, ast.ImportFrom):
            base = sub.module or ""
            if sub.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - sub.level + 1] + ([base] if base else []))
            names = {f"{base}.{a.name}" for a in sub.names}
            # `from pkg import submodule` depends on the submodule; the package's __init__ runs first whatever
            # one imports from inside it, so it is not a dependency of its own (else every package is a cycle).
            if not modules or not names <= set(modules):
                found.add(base)
            found |= names
    return found


def test_the_cli_never_imports_the_action():
    modules = _modules()
    offenders = [f"{name} imports {imp}" for name, path in modules.items() if name.startswith("triage.cli")
                 for imp in _imports(path, name) if imp.startswith("triage.action")]
    assert not offenders, offenders


def test_every_sub_package_says_what_it_may_import():
    for package in ALLOWED:
        init = ROOT / package / "__init__.py"
        if init.exists():
            assert "May import" in init.read_text(encoding="utf-8"), package


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _long_functions(path: Path, limit: int) -> list[str]:
    """Functions and methods of `path` longer than `limit` lines (decorators and docstring included), nested
    ones too, as "file:function (lines)"."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            length = node.end_lineno - first + 1
            if length > limit:
                found.append(f"{path.name}:{node.name} ({length})")
    return found


def test_no_module_is_over_the_size_limit():
    sizes = {str(path.relative_to(ROOT.parent)): _lines(path) for path in _modules().values()}
    over = {name: n for name, n in sizes.items() if n > MODULE_LINES}
    assert not over, f"split by responsibility (limit {MODULE_LINES} lines): {over}"


def test_no_function_is_over_the_size_limit_in_the_procedure_and_its_service():
    long = [item for package in FUNCTION_PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
            for item in _long_functions(path, FUNCTION_LINES)]
    assert not long, f"over {FUNCTION_LINES} lines: {long}"


def test_the_size_checks_measure_what_they_claim(tmp_path):
    """The function check sees methods and nested functions and counts decorators: 61 lines is one too many."""
    body = "".join(f"        x{i} = {i}\n" for i in range(59))  # 59 lines, at a method's (or inner's) depth
    sample = tmp_path / "sample.py"
    sample.write_text(f"class A:\n    @staticmethod\n    def long():\n{body}\n"
                      f"def outer():\n    def inner():\n{body}    return inner\n", encoding="utf-8")
    assert sorted(_long_functions(sample, FUNCTION_LINES)) == ["sample.py:long (61)", "sample.py:outer (62)"]


def test_llm_is_the_providers_protocols_only():
    """`triage.llm` imports nothing from config, core or planners (inside functions neither): the prompt, the plan
    schema and the answer's adapter are the model planners' (`triage.planners.model`)."""
    modules = _modules()
    llm = {name: path for name, path in modules.items() if name == "triage.llm" or name.startswith("triage.llm.")}
    assert {"triage.llm.client", "triage.llm.providers", "triage.llm.options"} <= set(llm)
    assert not {"triage.llm.prompt", "triage.llm.schema"} & set(modules)
    offenders = sorted(f"{name} imports {imported}" for name, path in llm.items()
                       for imported in _all_imports(name, path, modules)
                       if imported.split(".")[1] in ("config", "core", "planners"))
    assert not offenders, offenders


def test_planners_are_asked_through_their_interface_not_probed_for_parts():
    """Outside triage/planners, nobody reaches into a planner for its model consultant (`getattr(planner,
    "consultant")` was how the CLI and the Action learnt a planner asked a model): `needs_prompt` and
    `usage_totals()` say it."""
    offenders = []
    for name, path in _modules().items():
        if name.startswith("triage.planners"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            probed = (isinstance(node, ast.Attribute) and node.attr == "consultant") or (
                isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant) and node.args[1].value == "consultant")
            if probed:
                offenders.append(f"{name}:{node.lineno}")
    assert not offenders, offenders
