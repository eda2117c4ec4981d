"""Issue 21 item 5: nothing the README and the docs state can go stale silently.

- Every figure block (`<!-- figures:NAME -->`) is what scripts/doc_figures.py writes from the commands that
  measure it today; a block whose dataset is absent (PyTorch's dev sets are not shipped) is skipped, saying so.
- Counts written in prose (the allowlist's labels) are the configuration's.
- Every command the README (and the reference) tells a newcomer to type is one the CLI accepts, on files that exist.
- Every relative link in the README and the docs points at a file or directory that exists.
"""
from __future__ import annotations

import importlib.util
import json
import re
import shlex
from pathlib import Path

import pytest

from engine_helpers import shared_dir
from triage.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "CHANGELOG.md"]


def _figures():
    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "scripts" / "doc_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["distributed-dev", "pt2-dev", "hybrid-gate"])
def test_every_figure_block_is_what_the_commands_say_today(name, monkeypatch):
    figures = _figures()
    monkeypatch.setenv("PTD_SHARED_DIR", str(shared_dir()))
    current = figures.current(name)  # the block exists, whatever the machine
    try:
        fresh = figures.BLOCKS[name][1]()
    except figures.Missing as exc:
        pytest.skip(f"dataset not on this machine: {exc}")
    assert current == fresh, f"stale figures in {name}: run `python scripts/doc_figures.py`"


def test_the_figure_check_is_not_vacuous(tmp_path, monkeypatch):
    figures = _figures()
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- figures:x -->\nold\n<!-- /figures:x -->\nb\n", encoding="utf-8")
    monkeypatch.setattr(figures, "BLOCKS", {"x": (page, lambda: "new")})
    assert figures.current("x") == "old"
    assert figures.main(["--check"]) == 1 and "old" in page.read_text(encoding="utf-8")
    assert figures.main([]) == 0 and figures.current("x") == "new"
    assert figures.main(["--check"]) == 0


def test_the_allowlist_count_in_the_reference_is_the_configurations():
    labels = json.loads((ROOT / "queues" / "distributed" / "labels.json").read_text(encoding="utf-8"))["labels"]
    labels = [label for label in labels if label["role"] != "skip"]  # the opt-out label: people add it, not the bot
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    stated = re.findall(r"the (\d+) labels of PyTorch's distributed triage", text)
    assert stated == [str(len(labels))]


def test_the_reference_documents_every_input_and_output_of_action_yml():
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    inputs = text[text.index("### Inputs"):text.index("### Outputs")]
    outputs = text[text.index("### Outputs"):text.index("### What the bot will and will not do")]
    assert [name for name in action["inputs"] if f"`{name}`" not in inputs] == []
    assert [name for name in action["outputs"] if f"`{name}`" not in outputs] == []
    named = re.findall(r"`([a-z][a-z0-9-]*)`", "\n".join(l.split(" | ")[0] for l in inputs.splitlines()
                                                      if l.startswith("| `")))
    assert [name for name in named if name not in action["inputs"]] == []  # nothing documented that is gone


# ---- commands --------------------------------------------------------------------------------------------------

def _commands(path: Path) -> list[str]:
    """Each `ptd-triage ...` command in the file's sh blocks, without the environment and what runs before it."""
    out = []
    text = path.read_text(encoding="utf-8")
    indented = "\n".join(re.findall(r"^    (ptd-triage .*)$", text, re.M))  # indented code blocks (docs/llm.md)
    for block in re.findall(r"```sh\n(.*?)```", text, re.S) + [indented]:
        for line in block.splitlines():
            for part in line.split("&&"):
                part = re.sub(r"^\s*(?:[A-Z_]+=(?:\$\([^)]*\)|\S+)\s+)+", "", part)  # GITHUB_TOKEN=$(...) first
                words = shlex.split(part, comments=True)
                if words and words[0] == "ptd-triage":
                    out.append(words[1:])
    return out


def test_the_readme_shows_the_commands_a_newcomer_needs():
    commands = [c[0] for c in _commands(ROOT / "README.md")]
    assert "sweep" in commands and "plan" in commands  # the dry run on your repository, the offline try


@pytest.mark.parametrize("path", [ROOT / "README.md", ROOT / "docs" / "forking.md", ROOT / "docs" / "llm.md"],
                         ids=lambda p: p.name)
def test_every_command_in_the_docs_is_one_the_cli_accepts(path, capsys):
    for words in _commands(path):
        try:
            args = build_parser().parse_args(words)
        except SystemExit:
            pytest.fail(f"{path.name}: `ptd-triage {' '.join(words)}`: {capsys.readouterr().err.strip()}")
        if args.command == "sweep":
            assert args.dry_run or path.name != "README.md", "the README's sweep is the dry run a newcomer tries"
        for name in getattr(args, "files", None) or []:
            if "/" in name and not name.startswith(("../", "/")) and name.isascii() and name[0].islower():
                assert (ROOT / name).exists(), f"{path.name}: `ptd-triage {' '.join(words)}` names {name}"


# ---- links -----------------------------------------------------------------------------------------------------

def _anchors(path: Path) -> set[str]:
    """The ids GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
            for title in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def test_the_anchor_rule_is_githubs():
    assert "a-second-queue-pytorchs-torchcompile-queue" in _anchors(ROOT / "docs" / "measuring.md")
    assert "asking-a-model-optional" in _anchors(ROOT / "docs" / "reference.md")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_relative_link_points_at_something_that_exists(path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = path.parent / file if file else path
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)} links to what does not exist: {broken}"


def test_the_readme_shows_the_pictures():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for picture in ("docs/images/comment.png", "docs/images/summary-sweep.png", "docs/images/summary-issue.png"):
        assert f"]({picture})" in readme


def test_the_references_plan_example_is_what_plan_prints_today():
    """The example in docs/reference.md#the-plan is the bundled sample issue's plan: its labels, its modules and
    its first reasons (step 1's evidence was a stale 54.25 after the vocabulary changed)."""
    import json
    import subprocess
    import sys

    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    example = re.search(r"## The plan\n.*?```json\n(.*?)```", text, re.S).group(1)
    proc = subprocess.run([sys.executable, "-m", "triage", "plan", "examples/issues/fsdp2-dtensor-backward.json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    plan = json.loads(proc.stdout)
    shown = [r for r in re.findall(r'"(step \d[^"]*)"', example)]
    assert shown and shown == plan["reasons"][:len(shown)], (shown, plan["reasons"][:len(shown)])
    for key in ("add_labels", "modules"):
        assert json.dumps(plan[key]) in example, key
