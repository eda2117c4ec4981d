"""The rubric's machinery for people who edit it: `parts:` (named pattern pieces), `examples:` that `validate` and
every load run, and unknown names refused wherever a name is referenced — each problem one line naming the file
and line it comes from.

Each case is the example storage queue with one edit a maintainer could make; the line a problem must name is
found by searching the written file (not hard-coded), so the test holds however the bundled rubric is laid out.
"""
from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from triage.config.bundle import ConfigError, load_bundle, read_sources
from triage.config.examples import frame_evidence, signal_evidence
from triage.config.parts import MAX_EXPANDED, expand
from triage.config.rubric import compile_rubric
from triage.config.validate import check
from triage.text.frames import compile_frame, compile_slots
from triage.text.matching import compile_signal

ROOT = Path(__file__).resolve().parents[1]
STORAGE = ROOT / "examples" / "queues" / "storage"


def queue_with(tmp_path: Path, mutate) -> Path:
    """The storage queue copied, its rubric edited as data by `mutate` and written back as YAML."""
    target = tmp_path / "queue"
    shutil.copytree(STORAGE, target)
    path = target / "rubric.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    mutate(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000), encoding="utf-8")
    return target


def problems(queue: Path) -> list[str]:
    sources = read_sources(queue / "rubric.yaml", queue / "labels.json", queue / "templates")
    return [str(p) for p in check(sources)]


def line_of(path: Path, needle: str) -> int:
    found = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in line]
    assert len(found) == 1, f"{needle!r} must occur once in {path}: lines {found}"
    return found[0]


def add_signal(data: dict, signal: dict) -> None:
    data["reproduction"]["signals"].append(signal)


def add_slots_and_frame(data: dict, slots: dict, frame: dict) -> None:
    hp = data["high_priority"]
    hp.setdefault("slots", {}).update(slots)
    hp["criteria"]["data_loss"].setdefault("frames", []).append(frame)


STORED = r"(?:^|[^a-z0-9])(objects?|files?|blocks?)(?:[^a-z0-9]|$)"
GONE = r"(?:^|[^a-z0-9])(lost|missing|gone)(?:[^a-z0-9]|$)"
LOUD = r"(\w+Error:)"


# --- parts --------------------------------------------------------------------------------------------------


def test_a_part_is_composed_as_a_group_so_alternation_and_quantifiers_mean_what_they_say():
    data = {"parts": {"names": "DDP|FSDP", "start": "(?:^|[^A-Za-z0-9])"},
            "reproduction": {"signals": [{"id": "s", "match": "{start}({names})s?x{2}\\{names}", "weight": 1}]}}
    out, found = expand(data)
    assert found == []
    assert out["reproduction"]["signals"][0]["match"] == "(?:(?:^|[^A-Za-z0-9]))((?:DDP|FSDP))s?x{2}\\{names}"
    assert data["reproduction"]["signals"][0]["match"].startswith("{start}")  # the document given is not changed
    signal = compile_signal(out["reproduction"]["signals"][0], where="t")
    assert signal_evidence(signal, "we use FSDPsxx{names} here") == "FSDP"
    assert signal_evidence(signal, "addpsxx{names}") is None  # the boundary part applies to both names


def test_parts_compose_parts_and_expansion_is_deterministic():
    data = {"parts": {"a": "x{b}", "b": "y|z"}, "high_priority": {"slots": {"s": "{a}", "t": {"match": "q{b}"}}}}
    first, second = expand(copy.deepcopy(data)), expand(copy.deepcopy(data))
    assert first == second
    slots = first[0]["high_priority"]["slots"]
    assert slots == {"s": "(?:x(?:y|z))", "t": {"match": "q(?:y|z)"}}


def test_a_circular_part_and_an_unknown_part_are_problems_not_loops():
    data = {"parts": {"a": "{b}", "b": "{a}"},
            "reproduction": {"signals": [{"id": "s", "match": "{nope}", "weight": 1}]}}
    _, found = expand(data)
    messages = dict(found)
    assert "uses itself (a -> b -> a)" in messages[("parts", "a")]
    assert messages[("reproduction", "signals", 0, "match")] == "signal 's' names part 'nope', which parts: does not define"


def test_a_part_that_doubles_at_every_level_is_refused_before_it_is_built():
    parts = {f"p{i}": f"{{p{i + 1}}}{{p{i + 1}}}" for i in range(40)}
    parts["p40"] = "x"
    _, found = expand({"parts": parts})
    assert found and all(f"more than {MAX_EXPANDED:,}" in message for _, message in found)


def test_an_undefined_part_fails_validate_at_its_line_and_the_loader(tmp_path):
    queue = queue_with(tmp_path, lambda d: add_signal(d, {"id": "repro-partly", "match": "{repro_words}x", "weight": 1}))
    rubric = queue / "rubric.yaml"
    (msg,) = problems(queue)
    assert msg == (f"{rubric}:{line_of(rubric, '{repro_words}x')}: signal 'repro-partly' names part 'repro_words', "
                   "which parts: does not define")
    with pytest.raises(ConfigError) as info:
        load_bundle(queue=queue)
    assert "repro_words" in str(info.value) and "\n" not in str(info.value)


def test_a_part_given_twice_is_refused_at_the_second_line(tmp_path):
    """YAML keeps the last of two equal keys silently: a second part of the same name would replace the first in
    every pattern that uses it, so the loader refuses the document, naming the second key's line."""
    def add(d):  # a part that stands alone (validate refuses one used less than twice otherwise)
        d.setdefault("parts", {}).update(twice="abc")
        d.setdefault("part_rules", {}).setdefault("alone", []).append("twice")

    queue = queue_with(tmp_path, add)
    rubric = queue / "rubric.yaml"
    text = rubric.read_text(encoding="utf-8")
    at = text.index("  twice: abc\n")
    rubric.write_text(text[:at] + "  twice: abc\n  twice: xyz\n" + text[at + len("  twice: abc\n"):], encoding="utf-8")
    second = line_of(rubric, "twice: xyz")
    with pytest.raises(ConfigError) as info:
        load_bundle(queue=queue)
    assert str(info.value).startswith(f"{rubric}:{second}:") and "'twice' is given twice" in str(info.value)
    assert "\n" not in str(info.value)
    run = subprocess.run([sys.executable, "-m", "triage", "validate", "--config", str(queue)], capture_output=True,
                         text=True, cwd=ROOT)
    assert run.returncode == 1 and f"{rubric}:{second}:" in run.stdout + run.stderr
    # control: the same document with the key once loads
    rubric.write_text(text, encoding="utf-8")
    assert problems(queue) == []


def test_a_part_that_is_half_a_pattern_is_refused_at_its_own_line(tmp_path):
    queue = queue_with(tmp_path, lambda d: d.setdefault("parts", {}).update(open_group="(?:^|x"))
    rubric = queue / "rubric.yaml"
    (msg,) = problems(queue)
    assert msg.startswith(f"{rubric}:{line_of(rubric, 'open_group')}: part 'open_group' is not a pattern RE2 can run")


def test_a_rubric_written_with_parts_plans_like_the_same_rubric_written_out(tmp_path):
    def with_parts(d):
        d.setdefault("parts", {})["shell"] = "aws|kubectl"
        d.setdefault("part_rules", {}).setdefault("alone", []).append("shell")  # used once, on purpose
        d["reproduction"]["signals"][0]["match"] = r"^\s*(?:\$ )?(?:{shell})\b"

    def written_out(d):
        d["reproduction"]["signals"][0]["match"] = r"^\s*(?:\$ )?(?:(?:aws|kubectl))\b"

    a = load_bundle(queue=queue_with(tmp_path / "a", with_parts)).rubric.reproduction.signals[0]
    b = load_bundle(queue=queue_with(tmp_path / "b", written_out)).rubric.reproduction.signals[0]
    assert a == b and a.patterns[0].source == r"^\s*(?:\$ )?(?:(?:aws|kubectl))\b"


# --- examples -----------------------------------------------------------------------------------------------


def test_examples_that_hold_pass_validate(tmp_path):
    def mutate(d):
        add_signal(d, {"id": "repro-fio", "match": r"\bfio --\w+", "weight": 1,
                       "examples": {"match": ["ran fio --rw=randread on the volume"], "not": ["the fio package"]}})
        add_slots_and_frame(d, {"stored": {"match": STORED, "examples": {"match": ["three objects"], "not": ["an objection"]}},
                                "gone": GONE, "loud": LOUD},
                            {"id": "hp-gone", "all": ["stored", "gone"], "none_in_issue": ["loud"], "weight": 3,
                             "examples": {"match": ["after the failover two files were lost"],
                                          "not": ["the files are fine. the lock was lost",
                                                  "files were lost. OSError: disk full"]}})
    assert problems(queue_with(tmp_path, mutate)) == []


def test_a_broken_signal_example_fails_validate_at_the_examples_line_and_the_cli_exits_1(tmp_path):
    def mutate(d):
        add_signal(d, {"id": "repro-fio", "match": r"\bfio --\w+", "weight": 1,
                       "examples": {"match": ["ran fio with a job file"], "not": ["typed fio --help first"]}})
    queue = queue_with(tmp_path, mutate)
    rubric = queue / "rubric.yaml"
    found = problems(queue)
    assert found == [
        f"{rubric}:{line_of(rubric, 'ran fio with a job file')}: signal 'repro-fio' does not match its example "
        "'ran fio with a job file' (examples.match)",
        f"{rubric}:{line_of(rubric, 'typed fio --help first')}: signal 'repro-fio' matches 'typed fio --help first', "
        "listed under examples.not (it quotes 'fio --help')",
    ]
    run = subprocess.run([sys.executable, "-m", "triage", "validate", "--config", str(queue)], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 1 and run.stdout.splitlines() == found and run.stderr.strip() == "2 problems found"
    with pytest.raises(ConfigError) as info:  # the loader runs the same checks: a drifted pattern does not plan
        load_bundle(queue=queue)
    assert "repro-fio" in str(info.value) and "\n" not in str(info.value)


def test_an_all_signal_example_needs_every_pattern_in_the_text(tmp_path):
    signal = compile_signal({"id": "a", "all": [r"\bhang", r"\bnodes?\b"], "weight": 1}, where="t")
    assert signal_evidence(signal, "it hangs across two nodes") == "hang … nodes"
    assert signal_evidence(signal, "it hangs on one machine") is None

    def mutate(d):
        add_signal(d, {"id": "repro-all", "all": [r"\bmount\b", r"\bnfs\b"], "weight": 1,
                       "examples": {"match": ["mount the share over nfs", "mount it"]}})
    queue = queue_with(tmp_path, mutate)
    (msg,) = problems(queue)
    assert msg.startswith(f"{queue / 'rubric.yaml'}:{line_of(queue / 'rubric.yaml', '- mount it')}: signal 'repro-all'")
    assert "every pattern" in msg


def test_a_slot_example_is_run_on_the_slot_pattern(tmp_path):
    def mutate(d):
        add_slots_and_frame(d, {"stored": {"match": STORED, "examples": {"match": ["a block"], "not": ["blockade"]}},
                                "gone": GONE}, {"id": "hp-gone", "all": ["stored", "gone"], "weight": 3})
        d["high_priority"]["slots"]["stored"]["examples"]["not"].append("some bytes")
    queue = queue_with(tmp_path, mutate)
    assert problems(queue) == []

    def broken(d):
        mutate(d)
        d["high_priority"]["slots"]["stored"]["examples"]["not"].append("two files")
    queue = queue_with(tmp_path / "b", broken)
    (msg,) = problems(queue)
    rubric = queue / "rubric.yaml"
    assert msg == (f"{rubric}:{line_of(rubric, '- two files')}: slot 'stored' matches 'two files', listed under "
                   "examples.not (it quotes 'files')")


def test_a_frame_example_is_a_sentence_its_slots_must_share():
    slots = compile_slots({"stored": STORED, "gone": GONE, "loud": LOUD, "restored": r"\brestored\b"}, where="t")
    frame = compile_frame({"id": "f", "all": ["stored", "gone"], "none": ["restored"], "none_in_issue": ["loud"],
                           "weight": 3, "in": ["error"]}, slots, where="t")
    assert frame_evidence(frame, slots, "two files were lost after the failover") == "files … lost"
    # `in: [error]` is not asked: the example stands for the text of a location the frame reads.
    assert frame_evidence(frame, slots, "The files are fine.\nThe lock was lost.") is None  # two sentences
    assert frame_evidence(frame, slots, "the files were lost, then restored") is None  # `none` in the sentence
    assert frame_evidence(frame, slots, "the files were lost. IOError: no space") is None  # `none_in_issue` anywhere
    assert frame_evidence(frame, slots, "the files were lost. They were restored later") == "files … lost"


def test_a_broken_frame_example_names_the_frame_and_its_slots(tmp_path):
    def mutate(d):
        add_slots_and_frame(d, {"stored": STORED, "gone": GONE},
                            {"id": "hp-gone", "all": ["stored", "gone"], "weight": 3,
                             "examples": {"match": ["the files are fine. the lock was lost"]}})
    queue = queue_with(tmp_path, mutate)
    rubric = queue / "rubric.yaml"
    (msg,) = problems(queue)
    assert msg == (f"{rubric}:{line_of(rubric, 'the lock was lost')}: frame 'hp-gone' does not hold in its example "
                   "'the files are fine. the lock was lost' (examples.match) (its slots stored, gone must occur in one "
                   "sentence)")


def test_an_examples_block_must_be_lists_of_text(tmp_path):
    queue = queue_with(tmp_path, lambda d: add_signal(d, {"id": "repro-x", "match": "x", "weight": 1,
                                                          "examples": {"matches": ["x"]}}))
    (msg,) = problems(queue)
    assert "examples" in msg and "'matches'" in msg


# --- unknown names ------------------------------------------------------------------------------------------


def test_an_unknown_hybrid_cue_fails_validate_at_its_line(tmp_path):
    def mutate(d):
        add_slots_and_frame(d, {"stored": STORED, "gone": GONE, "version": r"\b\d+\.\d+\b"},
                            {"id": "hp-gone", "all": ["stored", "gone"], "weight": 3})
        d["hybrid"] = {"high_priority": {"cues": ["gone", "gonne"], "version_with": ["gone"],
                                         "request_cues": ["stord"]}}
    queue = queue_with(tmp_path, mutate)
    rubric = queue / "rubric.yaml"
    assert problems(queue) == [
        f"{rubric}:{line_of(rubric, '- gonne')}: hybrid.high_priority.cues names slot 'gonne', which "
        "high_priority.slots does not define",
        f"{rubric}:{line_of(rubric, '- stord')}: hybrid.high_priority.request_cues names slot 'stord', which "
        "high_priority.slots does not define",
    ]
    with pytest.raises(ConfigError) as info:
        load_bundle(queue=queue)
    assert "gonne" in str(info.value)


def test_version_with_needs_the_version_slot(tmp_path):
    def mutate(d):
        add_slots_and_frame(d, {"stored": STORED, "gone": GONE}, {"id": "hp-gone", "all": ["stored", "gone"], "weight": 3})
        d["hybrid"] = {"high_priority": {"version_with": ["gone"]}}
    (msg,) = problems(queue_with(tmp_path, mutate))
    assert "needs the slot 'version'" in msg


def test_every_unknown_slot_a_frame_names_is_reported_at_its_own_line(tmp_path):
    def mutate(d):
        add_slots_and_frame(d, {"stored": STORED, "gone": GONE},
                            {"id": "hp-gone", "all": ["stored", "gone"], "none": ["restord"],
                             "none_in_issue": ["loudd"], "weight": 3})
    queue = queue_with(tmp_path, mutate)
    found = problems(queue)
    assert [m.split(": ", 1)[1] for m in found] == [
        "frame 'hp-gone' names slot 'restord', which high_priority.slots does not define",
        "frame 'hp-gone' names slot 'loudd', which high_priority.slots does not define"]


def test_compile_rubric_refuses_an_unknown_part_in_one_line():
    data = yaml.safe_load((STORAGE / "rubric.yaml").read_text(encoding="utf-8"))
    add_signal(data, {"id": "repro-y", "match": "{nah}", "weight": 1})
    at = len(data["reproduction"]["signals"]) - 1  # the queue's own list (the shared reading's signals follow it)
    from triage.config.rubric import RubricError
    with pytest.raises(RubricError) as info:
        compile_rubric(data, "r.yaml")
    assert str(info.value) == (f"r.yaml: reproduction/signals/{at}/match: signal 'repro-y' names part 'nah', "
                               "which parts: does not define")
