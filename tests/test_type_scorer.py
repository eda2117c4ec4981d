"""Step 4's learned reading (issue 38): a scorer shipped as data, read in plain Python, named by the rubric.

The rubric's phrases type the requests they find; where they find none, the scorer named by `types.scorer` may find
one (`triage.core.request_type.by_scorer`), and its reason quotes the words that weighed most. The shipped file holds
hashed buckets and weights, no issue text; a rubric naming a scorer the package does not ship fails to load in one
line. Issues here are written for the tests.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest
import yaml

from engine_helpers import bundle, plan_for

from triage.config.rubric import RubricError, compile_rubric
from triage.reading.features import bucket, tokens, type_features
from triage.reading.scorer import FORMAT, Linear, ScorerError, TypeScorer, available, load_scorer, parse_scorer
from triage.text.document import Document

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = "types-v1"


def _shipped() -> dict:
    return json.loads(resources.files("triage.reading").joinpath(f"{SHIPPED}.json").read_text(encoding="utf-8"))


def test_the_distributed_rubric_names_the_shipped_scorer():
    assert bundle().rubric.type_scorer is not None and bundle().rubric.type_scorer.name == SHIPPED
    assert SHIPPED in available()


def test_the_shipped_file_is_weights_and_how_it_was_made_never_issue_text():
    data = _shipped()
    assert data["format"] == FORMAT
    for model in ("request", "feature"):
        assert re.fullmatch(r"(?:[0-9a-f]{8})+", data[model]["buckets"]), model  # uint32 and float32 arrays, in hex
        assert re.fullmatch(r"(?:[0-9a-f]{8})+", data[model]["weights"]), model
        assert len(data[model]["buckets"]) == len(data[model]["weights"])
        assert len(load_scorer(SHIPPED).request.weights) > 1000
    trained = data["trained"]
    assert trained["by"] == "scripts/train_type_scorer.py"
    assert set(trained["on"]) >= {f"set{n}" for n in range(6, 14)}
    assert "set14" not in trained["on"]  # the sealed set is never trained on
    strings = [v for v in _strings(data) if v not in json.dumps(trained)]
    assert sorted(strings) == sorted([FORMAT, *(data[m][k] for m in ("request", "feature") for k in ("buckets",
                                                                                                  "weights"))])


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_a_rubric_naming_a_scorer_the_package_does_not_ship_fails_in_one_line():
    path = ROOT / "queues" / "distributed" / "rubric.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["types"]["scorer"] = "types-v0-missing"
    with pytest.raises(RubricError) as caught:
        compile_rubric(data, str(path))
    message = str(caught.value)
    assert "types.scorer" in message and "types-v0-missing" in message and "\n" not in message


@pytest.mark.parametrize("data, problem", [
    ({"format": "something else"}, "not a"),
    ({"format": FORMAT, "bits": 40}, "bits"),
    ({"format": FORMAT, "bits": 12, "request": {"bias": 0}, "feature": {}}, "request"),
    ({"format": FORMAT, "bits": 12, "request": {"bias": 0, "buckets": "zz", "weights": ""}, "feature": {}}, "request"),
    ({"format": FORMAT, "bits": 12, "request": {"bias": 0, "buckets": "01000000", "weights": ""}, "feature": {}},
     "differ in length"),
])
def test_a_malformed_model_file_is_refused(data, problem):
    with pytest.raises(ScorerError, match=problem):
        parse_scorer(data, "bad")


def test_features_are_stable_and_identifiers_masked():
    # CRC-32 of the feature's text: the same bucket in every process and on every platform (unlike hash()).
    assert bucket("p:would be", 18) == 48991
    said = tokens("Could `fully_shard` take torch.distributed groups on 2.5 like FSDPModule? I'd like that, DDP.")
    assert said == ["could", "<code>", "take", "<name>", "groups", "on", "<num>", "like", "<name>", "?", "i'd",
                    "like", "that", "ddp"]
    assert tokens("训练 卡住 in all_reduce") == ["in", "<name>"]  # other scripts: left out (and said, unread.py)
    assert len(tokens("`x` " * 40000)) == len(tokens("word " * 40000)) == 3000  # bounded, whatever the text


def test_the_words_are_one_unit_vector_beside_the_rubrics_scores():
    doc = Document.of({"title": "Support uneven shards", "prose": "It would be nice to shard unevenly."})
    found = type_features(doc, {"request_for": 9.0, "feature": -12.0, "enhancement": 1.5, "performance": 0})
    words = {k: v for k, v in found.items() if not k.startswith("rubric:")}
    assert abs(sum(v * v for v in words.values()) - 1.0) < 1e-9
    assert found["rubric:request_for"] == 3.0 and found["rubric:feature"] == -3.0
    assert found["rubric:enhancement"] == 0.5 and found["rubric:request_against"] == 0.0
    assert "t:support uneven" in found and "p:would be" in found


def test_a_reading_quotes_its_strongest_contributions():
    doc = Document.of({"title": "Support uneven shards", "prose": "It would be nice to shard unevenly."})
    weights = {bucket("p:would be", 12): 4.0, bucket("t:support", 12): 2.0, bucket("rubric:request_for", 12): 0.5}
    scorer = TypeScorer("toy", 12, Linear(-1.0, weights, 0.5), Linear(-3.0, {}, 0.5))
    read = scorer.read(doc, {"request_for": 3.0})
    assert read.is_request and not read.is_feature
    assert read.for_request[0].startswith("'would be' in prose (+")
    assert any(part.startswith("'support' in title") for part in read.for_request)


# A request in the words of a writer the phrases were not written for: no "please add", "support", "would be nice".
UNWORDED = ("DCP: checksums in the metadata",
            "Our checkpoints live on object storage and we verify them by hand after each save with a script that "
            "hashes every shard. Storing a checksum per shard in the metadata, checked on load, would let us drop "
            "that script.")


def test_the_phrases_decide_where_they_find_a_request():
    plan = plan_for("Please add a flag to FSDP to skip the state_dict barrier",
                    "It would be nice to have an option to skip the barrier when saving; today it is always on.")
    step4 = plan.step(4)
    assert step4.decision in ("feature", "enhancement")
    assert "learned reading" not in step4.reason


def test_a_request_the_phrases_miss_can_be_found_by_the_learned_reading():
    plan = plan_for(*UNWORDED)
    step4 = plan.step(4)
    assert step4.decision in ("feature", "enhancement"), step4.reason
    assert "learned reading types-v1" in step4.reason and "request 0." in step4.reason
    assert "'" in step4.reason.split("learned reading", 1)[1]  # its strongest words are quoted


def test_a_bug_report_stays_a_bug_report():
    plan = plan_for("DDP hangs in backward on two nodes after upgrading to 2.5",
                    "Every rank waits in all_reduce in the first backward and the watchdog kills the job after ten "
                    "minutes. It worked on 2.4 with the same script and cluster.")
    assert plan.step(4).decision == "none"
    assert "learned reading" not in plan.step(4).reason


def test_the_training_script_writes_a_file_the_scorer_reads(tmp_path):
    pytest.importorskip("sklearn")
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import train_type_scorer as training

    examples = training.read_examples(["set6", "set7"])
    model = training.train(examples, {"bits": 12}, on=["set6", "set7"])
    out = tmp_path / "toy.json"
    training.write(model, out)
    scorer = parse_scorer(json.loads(out.read_text()), "toy")
    assert scorer.trained["on"] == {"set6": 80, "set7": 80} and not scorer.trained["real_issues_included"]
    doc = Document.of({"title": UNWORDED[0], "prose": UNWORDED[1]})
    assert 0.0 < scorer.read(doc, {}).request < 1.0


def test_load_scorer_names_what_the_package_has():
    with pytest.raises(ScorerError, match=f"it has: .*{SHIPPED}"):
        load_scorer("nope")


def test_deferred_counter_evidence_must_name_the_request_checks_own_rules(tmp_path):
    import shutil

    from triage.config.bundle import read_sources
    from triage.config.validate import check

    queue = tmp_path / "queue"
    shutil.copytree(ROOT / "queues" / "distributed", queue)
    rubric = queue / "rubric.yaml"
    text = rubric.read_text(encoding="utf-8").replace("scorer_defers_to: [req-frame-questions-listed,",
                                                      "scorer_defers_to: [req-vs-nothing-such,", 1)
    rubric.write_text(text, encoding="utf-8")
    problems = check(read_sources(rubric, queue / "labels.json", queue / "templates"))
    assert any("types.scorer_defers_to names 'req-vs-nothing-such'" in str(p) for p in problems), problems


def test_the_learned_reading_does_not_overrule_a_tracking_list():
    pitch = "### 🚀 The feature, motivation and pitch\n\n"
    plan = plan_for("[Tracking] DTensor op coverage for the new attention kernels",
                    pitch + "A list of what is left to port, with links to the PRs.")
    assert plan.step(4).decision == "none" and "learned reading" not in plan.step(4).reason
