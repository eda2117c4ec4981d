"""The layout is the architecture: each sub-package imports only the layers below it, there is no import cycle,
and the CLI never imports the Action. Read from the source (AST), so it holds for lazy imports too."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "triage"

# package -> the triage packages it may import (itself always allowed). Lazy imports count too.
ALLOWED = {
    "text": set(),
    "http": set(),
    "config": {"text"},
    "github": {"http"},
    "core": {"text", "config", "github"},
    "llm": {"http", "config", "core", "text"},
    "planners": {"config", "core", "llm", "text", "http"},
    "service": {"config", "core", "planners", "http", "github"},
    "evaluation": {"config", "core", "planners", "github", "text", "service"},
    "cli": {"config", "core", "planners", "github", "service", "evaluation", "http", "text", "llm"},
    "action": {"config", "core", "planners", "github", "service", "http", "text", "llm", "evaluation"},
}
# Narrower rules inside a package: core imports only GitHub's naming facts, never the client.
FORBIDDEN_MODULES = {"core": {"triage.github.client"}, "config": {"triage.github.client"}}


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


def test_no_import_cycle_between_modules_at_import_time():
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set()
        for node in tree.body:  # module level only: what runs at import time
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                top |= {i for i in _imports_of(node, name, path) if i in modules}
        graph[name] = top - {name}
    seen, stack, cycles = set(), [], []

    def visit(node: str) -> None:
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in graph.get(node, ()):
            visit(nxt)
        stack.pop()

    for node in graph:
        visit(node)
    assert not cycles, cycles[:3]


def _imports_of(node, module: str, path: Path) -> set[str]:
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
            found.add(base)
            found |= {f"{base}.{a.name}" for a in sub.names}
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
