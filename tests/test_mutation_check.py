"""scripts/mutation_check.py's machinery on a toy queue (the storage example with one alternative added that no
example names): a deleted alternative an example depends on is caught, one no example names survives, and the
texts it suggests catch it. The bundled queues' figures are measured by running the script (bench/results.md)."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest
from engine_helpers import ROOT


@pytest.fixture(scope="module")
def mc():
    spec = importlib.util.spec_from_file_location("mutation_check", ROOT / "scripts" / "mutation_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_check"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("mutation_check", None)


def test_alternatives_split_at_the_top_level_only(mc):
    spans = mc.alternatives(r"ab|c[|x]d|e\|f|(g|h)")
    assert [[r"ab|c[|x]d|e\|f|(g|h)"[a:b] for a, b in s] for s in spans] == [["ab", "c[|x]d", r"e\|f", "(g|h)"]]
    wrapped = r"\b(?:stale|overwritten)\b"  # one group with boundaries: its alternatives are the list
    assert [[wrapped[a:b] for a, b in s] for s in mc.alternatives(wrapped)] == [["stale", "overwritten"]]
    assert mc.alternatives(r"(?i)plain") == []


def test_the_literal_word_skips_escapes_brackets_and_part_names(mc):
    text = r"\bcheckpoint{word_end}[abcdef] corrupted"
    a, b = mc.literal_word(text)
    assert text[a:b] == "checkpoint"  # "word_end" is a part's name, "abcdef" a bracket, "corrupted" is shorter
    assert mc._typo("stale") == "stqle" and mc._typo("aqa") == "axa"


TOY = r"""\bplease (?:add|support)\b|\bis there (?:a|any) (?:way|plan)\b|\bwould love\b"""


@pytest.fixture
def toy(tmp_path, mc):
    """A copy of the storage example whose `ask_for` part has a third alternative that no example names."""
    folder = tmp_path / "queues" / "toy"
    shutil.copytree(ROOT / "examples" / "queues" / "storage", folder)
    rubric = folder / "rubric.yaml"
    text = rubric.read_text(encoding="utf-8")
    old = r"""  ask_for: '\bplease (?:add|support)\b|\bis there (?:a|any) (?:way|plan)\b'"""
    assert old in text
    rubric.write_text(text.replace(old, f"  ask_for: '{TOY}'"), encoding="utf-8")
    return tmp_path, folder


def test_a_deleted_alternative_with_an_example_is_caught_and_one_without_is_not(mc, toy):
    tree, folder = toy
    text = (folder / "rubric.yaml").read_text(encoding="utf-8")
    mutants = [m for m in mc.enumerate_mutants(text) if m.key == "parts.ask_for"]
    assert [(m.kind, m.alternative) for m in mutants] == [
        ("delete", r"\bplease (?:add|support)\b"), ("alter", r"\bplease (?:add|support)\b"),
        ("delete", r"\bis there (?:a|any) (?:way|plan)\b"), ("alter", r"\bis there (?:a|any) (?:way|plan)\b"),
        ("delete", r"\bwould love\b"), ("alter", r"\bwould love\b")]
    assert all(m.section == "types" and not m.excluded for m in mutants)
    mc._worker_start(mc.Job(str(tree), "queues/toy", (), text))
    verdicts = {(m.kind, m.alternative): mc.check_mutant(m).caught_by for m in mutants}
    assert verdicts[("delete", r"\bplease (?:add|support)\b")].startswith("validate: ")
    assert "please add object lock" in verdicts[("delete", r"\bplease (?:add|support)\b")]
    assert verdicts[("alter", r"\bis there (?:a|any) (?:way|plan)\b")].startswith("validate: ")
    assert verdicts[("delete", r"\bwould love\b")] == "" and verdicts[("alter", r"\bwould love\b")] == ""
    # its longest word is "support" ("please (?:add|supqort)"): no example says "please support"
    assert verdicts[("alter", r"\bplease (?:add|support)\b")] == ""
    report = mc.report(folder, mutants, [mc.Verdict(m, verdicts[(m.kind, m.alternative)]) for m in mutants],
                       seed=1, command="toy")
    assert "**Caught 3 / 6 = 50.0%**" in report
    assert f"{folder / 'rubric.yaml'}:" in report and r"`parts.ask_for` delete: `\bwould love\b`" in report


def test_the_suggested_text_fails_without_its_alternative(mc, toy):
    _, folder = toy
    text = (folder / "rubric.yaml").read_text(encoding="utf-8")
    survivors = [m for m in mc.enumerate_mutants(text) if m.key == "parts.ask_for" and "love" in m.alternative]
    assert mc.suggest(text, survivors) == {"parts.ask_for": ["would love"]}
    assert mc.suggest(text, survivors, existing={"parts.ask_for": ["we would love it"]}) == {}


def test_a_mutant_of_a_duplicate_alternative_is_excluded(mc):
    text = "parts:\n  names: 'DDP|FSDP|DDP'\nhigh_priority:\n  slots:\n    n: '{names}'\n"
    mutants = mc.enumerate_mutants(text)
    assert [(m.kind, m.alternative, m.excluded) for m in mutants if m.kind == "delete"] == [
        ("delete", "DDP", "duplicate"), ("delete", "FSDP", ""), ("delete", "DDP", "duplicate")]
    unused = mc.enumerate_mutants("parts:\n  names: 'DDP|FSDP'\n")
    assert {m.excluded for m in unused} == {"unused"}


def test_a_queue_that_is_not_there_is_bad_input(mc, capsys):
    with pytest.raises(SystemExit) as exited:
        mc.main(["no-such-queue", "--no-tests"])
    assert exited.value.code == 2
    assert "no bundled queue 'no-such-queue'" in capsys.readouterr().err
