"""The evidence-frame engine (triage/text/frames.py): slot classes co-occurring within one sentence.

Small vocabularies written here for the behaviour they pin; the rubric's own slots are exercised through step 5
in tests/test_high_priority*.py.
"""

from __future__ import annotations

import time

import pytest
import yaml

from engine_helpers import ROOT
from triage.config.bundle import ConfigError, load_bundle
from triage.text.document import Document
from triage.text.frames import LEAD, compile_frame, compile_slots, read_slots, score_frames

SLOTS = compile_slots({
    "thing": r"(?:^|[^a-z0-9])(barrier|all_reduce|store)(?:[^a-z0-9]|$)",
    "blocks": r"(?:^|[^a-z0-9])(hangs?|stalls?|never returns)(?:[^a-z0-9]|$)",
    "error": r"(\w+Error:)",
}, where="test")
WEIGHTS = {"title": 3.0, "prose": 1.0, "comment": 0.6, "error": 2.0, "code": 1.5, "frame": 1.0, "environment": 0.0}


def frame(**raw):
    raw.setdefault("id", "f")
    raw.setdefault("weight", 3)
    return compile_frame(raw, SLOTS, where="test")


def doc(**text) -> Document:
    return Document.of(text)


def points(f, d) -> float:
    return score_frames((f,), read_slots(SLOTS, d), WEIGHTS)[0]


def test_slots_in_one_sentence_fire_and_in_two_sentences_do_not():
    hang = frame(all=["thing", "blocks"])
    assert points(hang, doc(prose="Rank 0 never returns from the barrier on two nodes.")) == 3
    assert points(hang, doc(prose="We call barrier at the end. Later the dataloader hangs.")) == 0
    assert points(hang, doc(prose="We call barrier at the end\nthe dataloader hangs")) == 0  # a line ends a sentence


def test_the_title_and_the_first_sentence_read_as_one():
    hang = frame(all=["thing", "blocks"], **{"in": ["title", "prose"]})
    hits = read_slots(SLOTS, doc(title="all_reduce on 16 nodes", prose="It stalls after an hour. Nothing logged."))
    value, evidence = score_frames((hang,), hits, WEIGHTS)
    assert value == 3 and evidence[0].location == "title+prose"
    assert LEAD in hits.hits
    # only the FIRST sentence joins the title
    assert points(hang, doc(title="all_reduce on 16 nodes", prose="Nothing logged. It stalls after an hour.")) == 0


def test_underscores_split_identifiers():
    hang = frame(all=["thing", "blocks"])
    assert points(hang, doc(prose="metric store_hangs=1 on node 3")) == 3


def test_none_vetoes_the_sentence_and_none_in_issue_the_whole_issue():
    quiet = frame(all=["thing", "blocks"], none=["error"])
    assert points(quiet, doc(prose="The barrier hangs. RuntimeError: x")) == 3
    assert points(quiet, doc(prose="The barrier hangs with RuntimeError: x")) == 0
    loud = frame(all=["thing", "blocks"], none_in_issue=["error"])
    assert points(loud, doc(prose="The barrier hangs.", error="ValueError: bad")) == 0


def test_a_frame_counts_once_where_it_weighs_most_capped_at_prose():
    hang = frame(all=["thing", "blocks"], **{"in": ["title", "prose", "comment"]})
    assert points(hang, doc(title="barrier hangs", prose="barrier hangs", comment="barrier hangs")) == 3
    assert points(hang, doc(comment="the barrier hangs")) == pytest.approx(1.8)


def test_frames_of_one_criterion_do_not_add_up_but_negative_ones_do():
    a, b = frame(id="a", all=["thing", "blocks"]), frame(id="b", all=["blocks"])
    neg = frame(id="n", all=["error"], weight=-1, **{"in": ["error"]})
    hits = read_slots(SLOTS, doc(prose="the store stalls", error="KeyError: k"))
    value, evidence = score_frames((a, b, neg), hits, WEIGHTS)
    assert value == 3 - 1
    assert {e.signal for e in evidence} == {"a", "b", "n"}


def test_a_frame_naming_an_unknown_slot_is_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="names slot 'nope'"):
        compile_frame({"id": "x", "all": ["nope"], "weight": 1}, SLOTS, where="test")
    data = yaml.safe_load((ROOT / "queues" / "distributed" / "rubric.yaml").read_text(encoding="utf-8"))
    data["high_priority"]["criteria"]["crash"]["frames"][0]["all"] = ["no_such_slot"]
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_bundle(path)
    assert "no_such_slot" in str(info.value) and "\n" not in str(info.value)


def test_a_slot_re2_cannot_run_is_refused(tmp_path):
    data = yaml.safe_load((ROOT / "queues" / "distributed" / "rubric.yaml").read_text(encoding="utf-8"))
    data["high_priority"]["slots"]["blocking"] = r"(?<=a)hang"
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_bundle(path)
    assert "blocking" in str(info.value) and "\n" not in str(info.value)


def test_hostile_repetition_is_bounded():
    hang = frame(all=["thing", "blocks"])
    text = "barrier hangs. " * 20000  # 300 KB of matches in every sentence
    started = time.process_time()
    assert points(hang, doc(prose=text, comment=text)) == 3
    assert time.process_time() - started < 2.0
