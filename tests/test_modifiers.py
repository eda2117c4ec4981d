"""The modifier engine (triage/text/modifiers.py): a cue voids or discounts the statement it governs.

Small vocabularies written here for the rule they pin (the scoping rule is code; the words are data): a `before`
cue reaches forward within its window and sentence until a stop, an `after` cue backward, an `anywhere` cue over the
whole issue; a frame's governed match is its first slot, a signal's its evidence. Each case has its control: the
same words without the cue, or with the cue out of reach. The bundled rubric's vocabulary is exercised through
step 5 in tests/test_high_priority_modifiers.py.
"""

from __future__ import annotations

import time

import pytest
import yaml

from engine_helpers import ROOT
from triage.config.bundle import ConfigError, load_bundle
from triage.text.document import Document
from triage.text.frames import compile_frame, compile_slots, read_slots, score_frames
from triage.text.matching import compile_signal, match_signal
from triage.text.modifiers import compile_modifiers

MODIFIERS = compile_modifiers({
    "negation": {"factor": 0, "window": 20, "before": r"(?:^|[^a-z])(no|not|never|without)(?:[^a-z]|$)",
                 "after": r"(?:^|[^a-z])(was never observed)(?:[^a-z]|$)",
                 "stop": r"[,;]|(?:^|[^a-z])(?:but)(?:[^a-z]|$)"},
    "hypothetical": {"factor": 0.5, "window": 40, "before": r"(?:^|[^a-z])(if|would)(?:[^a-z]|$)", "stop": ","},
    "attribution": {"factor": 0, "anywhere": r"(?:^|[^a-z])(my (?:own )?mistake|our own kernel)(?:[^a-z]|$)"},
    # a yes/no question, from its verb to its question mark
    "asked": {"factor": 0, "within": r"(?:^|[.!?] |\n)((?:is|does) the [^.!?\n]{0,80}\?)"},
}, where="test")
SLOTS = compile_slots({
    "blocks": r"(?:^|[^a-z0-9])(hangs?|hung|stalls?)(?:[^a-z0-9]|$)",
    "thing": r"(?:^|[^a-z0-9])(barrier|all_reduce|nccl)(?:[^a-z0-9]|$)",
    "nodes": r"(?:^|[^a-z0-9])(multi[- ]?node|two nodes)(?:[^a-z0-9]|$)",
}, where="test")
WEIGHTS = {"title": 3.0, "prose": 1.0, "comment": 0.6, "error": 2.0, "code": 1.5, "frame": 1.0, "environment": 0.0}
EVERY = ["negation", "hypothetical", "attribution"]


def hang_frame(mind=EVERY, order=("blocks", "thing")):
    return compile_frame({"id": "hang", "all": list(order), "weight": 3, "mind": list(mind)}, SLOTS, where="test",
                         modifiers=MODIFIERS)


def frame_points(text: str, frame=None, **more) -> float:
    doc = Document.of({"prose": text, **more})
    return score_frames((frame or hang_frame(),), read_slots(SLOTS, doc), WEIGHTS)[0]


def signal_points(text: str, mind=("negation",)) -> float:
    signal = compile_signal({"id": "ddp", "match": r"(?:^|[^A-Za-z])(DDP)(?:[^A-Za-z]|$)", "weight": 2,
                             "mind": list(mind)}, where="test", modifiers=MODIFIERS)
    return sum(e.points for e in match_signal(signal, Document.of({"prose": text}), WEIGHTS))


# --- negation ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "The barrier does not hang on our cluster.",
    "We never saw the all_reduce stall.",
    "The job ran for a week without a hang in the barrier.",
])
def test_a_negated_head_voids_the_frame(text):
    assert frame_points(text) == 0


@pytest.mark.parametrize("text", [
    "The barrier hangs on our cluster.",  # no cue
    "No error, but the barrier hangs after an hour.",  # the cue's reach stops at the comma (and at "but")
    "Not on one node: with two the barrier hangs.",  # another clause, far out of the window
    "The barrier hangs without any NCCL error.",  # the cue governs the context, not the head
])
def test_controls_a_cue_out_of_reach_leaves_the_frame(text):
    assert frame_points(text) == 3


def test_a_cue_reaches_only_within_its_sentence_and_window():
    assert frame_points("It was not fine. The barrier hangs.") == 3  # the sentence ended
    assert frame_points("Not that it matters here at all really: the barrier hangs.") == 3  # the window


def test_an_after_cue_governs_the_words_before_it():
    assert frame_points("A stall in the barrier was never observed.") == 0
    assert frame_points("A stall in the barrier was seen twice.") == 3


def test_one_ungoverned_match_in_the_sentence_is_enough():
    assert frame_points("It does not hang on one node but hangs on two in the barrier.") == 3


def test_a_frame_that_minds_nothing_ignores_the_cues():
    assert frame_points("The barrier does not hang.", hang_frame(mind=[])) == 3


# --- hypothetical -----------------------------------------------------------------------------------------------


def test_a_hypothetical_discounts_by_its_factor():
    assert frame_points("If the barrier hangs we want a dump of every rank.") == pytest.approx(1.5)
    assert frame_points("It would stall in the barrier forever.") == pytest.approx(1.5)


def test_a_factual_condition_keeps_its_main_clause():
    assert frame_points("If we launch two nodes, the barrier hangs.") == 3


# --- attribution ------------------------------------------------------------------------------------------------


def test_an_attribution_anywhere_in_the_issue_voids_the_frame():
    assert frame_points("The barrier hangs on two nodes.", comment="Found it: my own mistake, sorry.") == 0
    assert frame_points("The barrier hangs on two nodes.", title="Hang in our own kernel + barrier") == 0


def test_controls_attribution_needs_the_reporters_words():
    assert frame_points("The barrier hangs on two nodes.", comment="Is it your own kernel?") == 3
    # a log is not what the reporter says: an `anywhere` cue is read in the title, description and comments only
    assert frame_points("The barrier hangs on two nodes.", code="print('my mistake')") == 3


# --- within: a yes/no question -------------------------------------------------------------------------------------


def test_a_within_cue_governs_what_lies_inside_its_span():
    asked = hang_frame(mind=["asked"])
    assert frame_points("Is the barrier hung, or is my launcher wrong?", asked) == 0
    assert frame_points("Does the barrier hang for you too?", asked) == 0


def test_controls_a_within_cue_governs_nothing_outside_its_span():
    asked = hang_frame(mind=["asked"])
    assert frame_points("The barrier hangs. Is the launcher wrong?", asked) == 3  # another sentence
    assert frame_points("Why does the barrier hang?", asked) == 3  # not a span of the cue: it presupposes the hang
    assert frame_points("Is the barrier hung, or is my launcher wrong?", hang_frame(mind=["negation"])) == 3


# --- slots required or excluded anywhere in the issue -----------------------------------------------------------


def besides_frame(key: str, mind=("negation",)):
    return compile_frame({"id": "hang", "all": ["blocks", "thing"], key: ["nodes"], "weight": 3, "mind": list(mind)},
                         SLOTS, where="test", modifiers=MODIFIERS)


def test_a_denied_slot_is_not_said_in_the_issue():
    """`none_in_issue` and `also_in_issue` read the slot where it is said, not where it is denied."""
    assert frame_points("The barrier hangs. Not multi-node or anything, one box.", besides_frame("none_in_issue")) == 3
    assert frame_points("The barrier hangs. Not multi-node or anything, one box.", besides_frame("also_in_issue")) == 0


def test_controls_a_slot_said_once_is_said():
    assert frame_points("The barrier hangs. It is multi-node.", besides_frame("none_in_issue")) == 0
    assert frame_points("The barrier hangs. Not one node but two nodes.", besides_frame("also_in_issue")) == 3
    # a frame that minds nothing reads every mention
    assert frame_points("The barrier hangs. Not multi-node.", besides_frame("none_in_issue", mind=())) == 0


# --- signals ----------------------------------------------------------------------------------------------------


def test_a_signal_that_minds_negation_scores_its_first_ungoverned_match():
    assert signal_points("We train without DDP.") == 0
    assert signal_points("We train with DDP.") == 2
    assert signal_points("Not with DDP, then with DDP on two ranks.") == 2
    assert signal_points("We train without DDP.", mind=()) == 2


def test_a_conjunction_signal_minds_its_first_pattern():
    signal = compile_signal({"id": "both", "all": [r"(?:^|[^a-z])(save)(?:[^a-z]|$)", r"(log)"], "weight": 2,
                             "mind": ["negation"]}, where="test", modifiers=MODIFIERS)
    assert match_signal(signal, Document.of({"prose": "We could not save the log."}), WEIGHTS) == []
    assert match_signal(signal, Document.of({"prose": "It could save the log."}), WEIGHTS)[0].points == 2


# --- configuration ----------------------------------------------------------------------------------------------


def test_an_unknown_modifier_is_refused_naming_the_entry():
    with pytest.raises(ValueError, match="'hang' minds modifier 'sarcasm'"):
        compile_frame({"id": "hang", "all": ["blocks"], "weight": 1, "mind": ["sarcasm"]}, SLOTS, where="test",
                      modifiers=MODIFIERS)
    with pytest.raises(ValueError, match="'ddp' minds modifier 'sarcasm'"):
        compile_signal({"id": "ddp", "match": "DDP", "weight": 1, "mind": ["sarcasm"]}, where="test",
                       modifiers=MODIFIERS)


def _bundled() -> dict:
    return yaml.safe_load((ROOT / "queues" / "distributed" / "rubric.yaml").read_text(encoding="utf-8"))


def test_the_bundled_rubric_refuses_an_unknown_modifier_and_a_bad_cue(tmp_path):
    path = tmp_path / "rubric.yaml"
    data = _bundled()
    data["high_priority"]["criteria"]["crash"]["frames"][0]["mind"] = ["sarcasm"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_bundle(path)
    assert "sarcasm" in str(info.value) and "\n" not in str(info.value)
    data = _bundled()
    # The queue's own `negation` replaces the shared reading's (triage/reading/shared/v1.yaml): its cue is checked.
    data.setdefault("modifiers", {})["negation"] = {"description": "denied", "factor": 0, "window": 24,
                                                    "before": r"(?<!a)not"}
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_bundle(path)
    assert "modifier 'negation'" in str(info.value) and "RE2" in str(info.value)


def test_validate_names_the_line_of_an_unknown_modifier(tmp_path):
    from triage.cli.common import config_sources
    from triage.cli.main import build_parser
    from triage.config.validate import check

    folder = tmp_path / "queue"
    import shutil
    shutil.copytree(ROOT / "queues" / "distributed", folder)
    rubric = folder / "rubric.yaml"
    text = rubric.read_text(encoding="utf-8")
    at = text.index("- id: hp-frame-crash-signal")
    mind = text.index("mind: [", at)
    rubric.write_text(text[:mind] + "mind: [sarcasm, " + text[mind + len("mind: ["):], encoding="utf-8")
    line = next(n for n, l in enumerate(rubric.read_text(encoding="utf-8").splitlines(), 1) if "sarcasm" in l)
    args = build_parser().parse_args(["validate", "--config", str(folder)])
    found = [str(p) for p in check(config_sources(args))]
    assert any(p.startswith(f"{rubric}:{line}:") and "sarcasm" in p for p in found), found


# --- cost -------------------------------------------------------------------------------------------------------


def test_hostile_cues_cost_a_bounded_loop():
    """Thousands of cues and heads in one text: each cue class is one scan, each head a binary search."""
    text = ("not if no the barrier hangs, " * 4000) + "my mistake"
    started = time.perf_counter()
    frame_points(text)
    signal_points("without DDP " * 6000)
    assert time.perf_counter() - started < 30  # a hang guard, not a timing
