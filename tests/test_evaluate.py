"""Metric unit tests: tiny hand-built cases whose figures were worked out by hand."""

from __future__ import annotations

import dataclasses
import json

import pytest

from triage.config.bundle import load_bundle
from triage.config.labels import parse_labels
from triage.evaluation.cases import Case
from triage.evaluation.dataset import DatasetError, read_dataset
from triage.evaluation.figures import evaluate, misses, timing
from triage.evaluation.gold import Gold, derive_gold
from triage.evaluation.scoring import scoring_from_bundle


def _label(name, role, route=None):
    entry = {"name": name, "role": role, "description": "d", "color": "ededed"}
    if route:
        entry["route"] = route
    return entry


LABELS = parse_labels(
    {
        "queue_label": "oncall: distributed",
        "gold": {"either": ["parallelisms", "infra"],
                 "module_routes": {"module: distributed_checkpoint": "checkpointing"}},
        "labels": [
            _label("oncall: distributed parallelisms", "sub-oncall"),
            _label("oncall: distributed infra", "sub-oncall"),
            _label("oncall: distributed checkpointing", "sub-oncall"),
            _label("module: fsdp", "module", "parallelisms"),
            _label("module: dtensor", "module", "parallelisms"),
            _label("module: ddp", "module", "parallelisms"),
            _label("module: c10d", "module", "infra"),
            _label("module: nccl", "module", "infra"),
            _label("ptd-bot-triaged", "marker"),
            _label("triage review", "review"),
            _label("needs reproduction", "reproduction"),
            _label("feature", "type"),
            _label("enhancement", "type"),
            _label("module: performance", "type"),
        ],
    },
    "test-labels",
)
# The bundled distributed rubric (its routes, their labels, where modules are classified) over these labels.
BUNDLE = dataclasses.replace(load_bundle(), labels=LABELS)
SCORING = scoring_from_bundle(BUNDLE)
PAR, INF, CKPT = "oncall: distributed parallelisms", "oncall: distributed infra", "oncall: distributed checkpointing"
MARK, REVIEW = "ptd-bot-triaged", "triage review"


def gold(route=None, modules=(), hp=False, type=None, not_distributed=False):
    return Gold(route=route, modules=tuple(modules), high_priority=hp, type=type, not_distributed=not_distributed)


def case(g, adds, outcome="routed", before=("oncall: distributed",), ms=1.0, reasons=("why",), cid=None):
    plan = {"issue": 1, "add_labels": list(adds), "outcome": outcome, "reasons": list(reasons)}
    return Case(id=cid or f"r/r#{len(adds)}", title="t", gold=g, plan=plan, labels_before=tuple(before), elapsed_ms=ms)


def test_scoring_comes_from_the_configuration():
    # modules are scored on the routes the rubric does not stop after: only the parallelisms modules here
    assert SCORING.module_routes == ("parallelisms",)
    assert set(SCORING.modules) == {"module: fsdp", "module: dtensor", "module: ddp"}
    assert SCORING.type_labels == {"feature": "feature", "enhancement": "enhancement"}
    assert SCORING.performance_label == "module: performance"
    assert SCORING.sub_oncalls[INF] == "infra"
    assert (SCORING.review_label, SCORING.marker_label) == (REVIEW, MARK)
    assert SCORING.either == ("parallelisms", "infra")


def test_routing_confusion_by_hand_with_either_and_null_skipped():
    cases = [
        case(gold("parallelisms"), [PAR, MARK]),  # right
        case(gold("parallelisms"), [INF, MARK]),  # wrong
        case(gold("infra"), [INF, MARK]),  # right
        case(gold("checkpointing"), [REVIEW, MARK], outcome="not_distributed"),  # wrong: routed nowhere
        case(gold("either"), [INF, MARK]),  # right: either accepts infra
        case(gold("either"), [CKPT, MARK]),  # wrong: either does not accept checkpointing
        case(gold(None), [CKPT, MARK]),  # not scored
        # Already had a sub-oncall at queue time and the plan adds none: the existing one is the answer.
        case(gold("infra"), [MARK], before=("oncall: distributed", INF)),  # right
    ]
    routing = evaluate(cases, SCORING)["routing"]
    assert routing["scored"] == 7
    assert routing["correct"] == 4
    assert routing["accuracy"] == pytest.approx(4 / 7)
    assert routing["confusion"]["parallelisms"] == {"parallelisms": 1, "infra": 1, "checkpointing": 0, "none": 0}
    assert routing["confusion"]["checkpointing"]["none"] == 1
    assert routing["confusion"]["either"] == {"parallelisms": 0, "infra": 1, "checkpointing": 1, "none": 0}
    assert routing["confusion"]["infra"]["infra"] == 2
    kinds = [(m.kind, m.expected, m.planned) for m in misses(cases, SCORING)]
    assert ("route", "parallelisms", "infra") in kinds
    assert ("route", "checkpointing", "none") in kinds
    assert ("route", "parallelisms or infra", "checkpointing") in kinds
    assert sum(k == "route" for k, _, _ in kinds) == 3


def test_module_f1_by_hand_only_parallelisms_rows_and_modules():
    cases = [
        # tp: fsdp; fp: dtensor
        case(gold("parallelisms", ["module: fsdp"]), [PAR, "module: fsdp", "module: dtensor", MARK]),
        # fn: ddp; the infra module (c10d) in gold is not counted at all
        case(gold("parallelisms", ["module: ddp", "module: c10d"]), [PAR, REVIEW, MARK]),
        # tp: dtensor, tp: fsdp
        case(gold("parallelisms", ["module: dtensor", "module: fsdp"]), [PAR, "module: dtensor", "module: fsdp"]),
        # not a parallelisms row: its module answers do not count
        case(gold("infra", ["module: c10d"]), [INF, "module: fsdp"]),
        case(gold("either", ["module: fsdp"]), [PAR]),
    ]
    modules = evaluate(cases, SCORING)["modules"]
    assert modules["scored"] == 3
    micro = modules["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (3, 1, 1)
    assert micro["precision"] == pytest.approx(3 / 4)
    assert micro["recall"] == pytest.approx(3 / 4)
    assert micro["f1"] == pytest.approx(0.75)
    per = modules["per_label"]
    assert per["module: fsdp"] == {"tp": 2, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2}
    assert per["module: dtensor"]["precision"] == pytest.approx(0.5)
    assert per["module: dtensor"]["f1"] == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert per["module: ddp"]["recall"] == 0.0
    assert per["module: ddp"]["precision"] is None  # never predicted: undefined, not perfect
    assert per["module: ddp"]["f1"] is None
    assert "module: c10d" not in per
    found = {(m.kind, m.planned if m.kind == "module_fp" else m.expected) for m in misses(cases, SCORING)}
    assert found == {("module_fp", "module: dtensor"), ("module_fn", "module: ddp")}


def test_review_high_priority_and_not_distributed_rates():
    cases = [
        case(gold("infra", hp=True), [INF, REVIEW], outcome="high_priority"),  # flagged HP
        case(gold("infra", hp=True), [INF, MARK]),  # HP missed
        case(gold("infra"), [INF, REVIEW], outcome="high_priority"),  # false flag
        case(gold("infra"), [INF, REVIEW, MARK], outcome="needs_review"),  # review, but not a HP flag
        case(gold("infra"), [REVIEW, MARK], outcome="not_distributed"),  # wrongly not distributed
        case(gold(None, not_distributed=True), [REVIEW, MARK], outcome="not_distributed"),  # rightly
    ]
    figures = evaluate(cases, SCORING)
    assert figures["triage_review"] == {"count": 5, "rate": pytest.approx(5 / 6)}
    hp = figures["high_priority"]
    assert (hp["gold"], hp["flagged"], hp["recall"]) == (2, 1, 0.5)
    assert (hp["others"], hp["false_flags"]) == (4, 1)
    assert hp["false_flag_rate"] == pytest.approx(0.25)
    nd = figures["not_distributed"]
    assert (nd["distributed"], nd["wrongly_not_distributed"]) == (5, 1)
    assert nd["rate"] == pytest.approx(0.2)
    assert figures["outcomes"]["not_distributed"] == 2
    kinds = sorted(m.kind for m in misses(cases, SCORING))
    assert kinds == ["hp_false_flag", "hp_missed", "not_distributed", "route"]


def test_feature_and_enhancement_precision_recall():
    cases = [
        case(gold(type="feature"), ["feature", MARK]),  # feature tp
        case(gold(type="feature"), [MARK]),  # feature fn
        case(gold(type="enhancement"), ["feature", MARK]),  # feature fp, enhancement fn
        case(gold(), ["enhancement", MARK]),  # enhancement fp
        case(gold(), [MARK]),
    ]
    types = evaluate(cases, SCORING)["types"]
    assert (types["feature"]["precision"], types["feature"]["recall"]) == (0.5, 0.5)
    assert (types["enhancement"]["tp"], types["enhancement"]["fp"], types["enhancement"]["fn"]) == (0, 1, 1)
    assert types["enhancement"]["precision"] == 0.0
    assert types["enhancement"]["f1"] == 0.0
    kinds = sorted((m.kind, m.expected, m.planned) for m in misses(cases, SCORING))
    assert kinds == [
        ("type_fn", "enhancement", "feature"),
        ("type_fn", "feature", "none"),
        ("type_fp", "enhancement", "feature"),
        ("type_fp", "no type", "enhancement"),
    ]


def test_empty_denominators_are_none():
    figures = evaluate([case(gold(None), [MARK])], SCORING)
    assert figures["routing"]["accuracy"] is None
    assert figures["modules"]["micro"]["f1"] is None
    assert figures["high_priority"]["recall"] is None
    assert figures["high_priority"]["false_flag_rate"] == 0.0
    assert figures["types"]["feature"]["precision"] is None


def test_misses_carry_id_title_and_reasons():
    c = case(gold("infra"), [PAR, MARK], reasons=("fsdp in title", "default route"), cid="o/r#7")
    (m,) = misses([c], SCORING)
    assert m.to_dict() == {
        "id": "o/r#7",
        "title": "t",
        "kind": "route",
        "expected": "infra",
        "planned": "parallelisms",
        "outcome": "routed",
        "reasons": ["fsdp in title", "default route"],
    }


def test_timing_mean_p95_max():
    assert timing([]) == {"mean": None, "p95": None, "max": None}
    values = list(range(1, 21))  # 1..20 ms: nearest-rank p95 is the 19th value
    assert timing(values) == {"mean": 10.5, "p95": 19.0, "max": 20.0}
    assert timing([None, 3.0])["max"] == 3.0


def test_derive_gold_follows_the_dataset_readme():
    g = derive_gold(["oncall: distributed", "module: fsdp", "high priority", "feature", "triaged"], BUNDLE)
    assert (g.route, g.modules, g.high_priority, g.type) == ("parallelisms", ("module: fsdp",), True, "feature")
    assert derive_gold(["module: fsdp", "module: nccl"], BUNDLE).route == "either"
    assert derive_gold(["module: nccl", INF], BUNDLE).route == "infra"
    # exactly one sub-oncall wins over module labels
    assert derive_gold(["module: fsdp", CKPT], BUNDLE).route == "checkpointing"
    assert derive_gold(["module: distributed_checkpoint"], BUNDLE).route == "checkpointing"
    assert derive_gold(["module: distributed_checkpoint", "module: fsdp"], BUNDLE).route is None
    assert derive_gold(["oncall: distributed", "module: distributed"], BUNDLE).route is None
    assert derive_gold(["module: distributed_checkpoint"], BUNDLE).modules == ()  # not in the allowlist


GOOD = {
    "id": "o/r#1",
    "issue": {"number": 1, "title": "t", "body": "b", "labels": [{"name": "oncall: distributed"}]},
    "comments": [],
    "gold": {"route": None, "modules": [], "high_priority": False, "type": None, "not_distributed": False},
}


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", "not valid JSON"),
        (json.dumps([1]), "expected a JSON object"),
        # Route names are the configuration's (checked by `check_routes` against it); a non-name is bad here.
        (json.dumps({**GOOD, "gold": {**GOOD["gold"], "route": 5}}), "gold.route"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "gold"}), "missing 'gold'"),
        (json.dumps({**GOOD, "issue": {"title": "no number"}}), "issue.number"),
        (json.dumps({**GOOD, "gold": {**GOOD["gold"], "high_priority": "yes"}}), "gold.high_priority"),
    ],
)
def test_bad_dataset_line_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + line + "\n")
    with pytest.raises(DatasetError) as err:
        read_dataset(path)
    text = str(err.value)
    assert text.startswith(f"{path}:3: ") and message in text
    assert "\n" not in text


def test_dataset_reads_rows_and_rejects_empty_or_missing(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n")
    (row,) = read_dataset(path)
    assert (row.id, row.line, row.snapshot.number, row.gold.route) == ("o/r#1", 1, 1, None)
    path.write_text("\n")
    with pytest.raises(DatasetError, match="no rows"):
        read_dataset(path)
    with pytest.raises(DatasetError, match="no such file"):
        read_dataset(tmp_path / "absent.jsonl")


# --- halves -------------------------------------------------------------------------------------------------

from triage.evaluation.answer_key import AnswerKeyError, KeyEntry, index_key, join_key, key_entry_from_json  # noqa: E402
from triage.evaluation.cases import high_priority_score  # noqa: E402
from triage.evaluation.figures import half_of, split_halves  # noqa: E402
from triage.evaluation.key_figures import evaluate_key, flagged_at, key_misses, threshold_sweep  # noqa: E402


def test_half_is_fixed_by_the_id_alone():
    import hashlib

    ids = [f"o/r#{n}" for n in range(200)]
    halves = [half_of(i) for i in ids]
    assert set(halves) == {"A", "B"}
    # the documented rule, restated: first byte of sha256(id) even -> A
    assert halves == ["A" if hashlib.sha256(i.encode()).digest()[0] % 2 == 0 else "B" for i in ids]
    # order and company do not matter
    cases = [case(gold("infra"), [INF, MARK], cid=i) for i in ids]
    split = split_halves(list(reversed(cases)))
    assert {c.id for c in split["A"]} == {i for i, h in zip(ids, halves) if h == "A"}
    assert len(split["A"]) + len(split["B"]) == 200
    assert 60 < len(split["A"]) < 140  # a hash, not a cut


# --- the answer key -----------------------------------------------------------------------------------------


def key(cid, type="bug", hp=False, criterion=None, performance=False):
    return KeyEntry(cid, type, performance, hp, criterion if hp else None)


def hp_case(cid, adds, score=None):
    c = case(gold("infra"), adds, cid=cid)
    steps = [{"step": 5, "decision": "flag" if REVIEW in adds else "no_flag", "labels": [], "score": score}]
    return Case(id=c.id, title=c.title, gold=c.gold, plan={**c.plan, "steps": steps}, labels_before=c.labels_before)


def test_key_line_validation_names_the_field():
    good = {"id": "o/r#1", "type": "enhancement", "performance": True, "high_priority": False, "criterion": None,
            "sure": "high", "why": "x"}
    entry = key_entry_from_json(good)
    assert (entry.type, entry.performance, entry.is_request) == ("enhancement", True, True)
    bad = [
        ({**good, "type": "wish"}, "'type'"),
        ({**good, "high_priority": "yes"}, "'high_priority'"),
        ({**good, "high_priority": True}, "'criterion'"),  # true needs a criterion
        ({**good, "criterion": "crash"}, "'criterion' must be null"),
        ({**good, "type": "bug"}, "'performance'"),  # performance only on an enhancement
        ({**good, "id": ""}, "'id'"),
        ({**good, "sure": "very"}, "'sure'"),
    ]
    for obj, words in bad:
        with pytest.raises(ValueError) as info:
            key_entry_from_json(obj)
        assert words in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(AnswerKeyError, match="appears twice"):
        index_key([entry, entry])


def test_join_needs_exactly_the_datasets_ids():
    cases = [case(gold("infra"), [MARK], cid=f"o/r#{n}") for n in (1, 2, 3)]
    keyed = index_key([key("o/r#1"), key("o/r#2"), key("o/r#3")])
    assert [c.id for c, _ in join_key(cases, keyed)] == ["o/r#1", "o/r#2", "o/r#3"]
    with pytest.raises(AnswerKeyError) as info:
        join_key(cases, index_key([key("o/r#1"), key("o/r#3"), key("o/r#9"), key("o/r#8")]))
    message = str(info.value)
    assert "1 dataset id(s) have no key line (first: o/r#2)" in message
    assert "2 key id(s) are not in the dataset (first: o/r#9)" in message
    assert "\n" not in message


def test_key_figures_by_hand():
    FEAT, ENH, PERF = "feature", "enhancement", "module: performance"
    pairs = [
        # high priority: 3 in the key, 2 flagged; 5 others, 1 flagged
        (hp_case("o/r#1", [INF, REVIEW], 9), key("o/r#1", hp=True, criterion="crash")),
        (hp_case("o/r#2", [INF, REVIEW], 3), key("o/r#2", hp=True, criterion="regression")),
        (hp_case("o/r#3", [INF, MARK], 1.5), key("o/r#3", hp=True, criterion="regression")),
        (hp_case("o/r#4", [INF, REVIEW], 4), key("o/r#4", type="other")),
        # requests: right, wrong kind, both kinds (wrong), none; perf: 1 of 2 labelled, 1 on a non-perf request
        (hp_case("o/r#5", [INF, ENH, PERF, MARK], 0), key("o/r#5", type="enhancement", performance=True)),
        (hp_case("o/r#6", [INF, FEAT, MARK], 0), key("o/r#6", type="enhancement", performance=True)),
        (hp_case("o/r#7", [INF, FEAT, ENH, MARK], 0), key("o/r#7", type="feature")),
        (hp_case("o/r#8", [INF, MARK], 0), key("o/r#8", type="feature")),
        (hp_case("o/r#9", [INF, FEAT, PERF, MARK], 0), key("o/r#9", type="feature")),
        # non-requests: one typed
        (hp_case("o/r#10", [INF, ENH, MARK], 0), key("o/r#10", type="question")),
    ]
    f = evaluate_key(pairs, SCORING)
    hp = f["high_priority"]
    assert (hp["key"], hp["flagged"], hp["others"], hp["false_flags"]) == (3, 2, 7, 1)
    assert hp["recall"] == pytest.approx(2 / 3) and hp["false_flag_rate"] == pytest.approx(1 / 7)
    assert hp["by_criterion"]["regression"] == {"key": 2, "flagged": 1, "recall": 0.5}
    req = f["requests"]
    assert (req["key"], req["right_type"], req["typed"]) == (5, 2, 4)
    assert req["by_type"]["feature"] == {"key": 3, "right": 1, "rate": pytest.approx(1 / 3)}
    assert req["by_type"]["enhancement"]["right"] == 1
    assert f["non_requests"] == {"key": 5, "typed": 1, "typed_rate": pytest.approx(1 / 5)}
    assert f["performance"] == {"key": 2, "labelled": 1, "recall": 0.5, "false_labels": 1}
    kinds = [m.kind for m in key_misses(pairs, SCORING)]
    assert kinds.count("key_hp_missed") == 1 and kinds.count("key_hp_false_flag") == 1
    assert kinds.count("key_type_wrong") == req["key"] - req["right_type"]
    assert kinds.count("key_type_on_non_request") == 1


def test_empty_denominators_are_none_not_zero():
    f = evaluate_key([(hp_case("o/r#1", [INF, MARK], 0), key("o/r#1"))], SCORING)
    assert f["high_priority"]["recall"] is None and f["requests"]["right_type_rate"] is None
    assert f["high_priority"]["false_flag_rate"] == 0


def test_threshold_sweep_uses_the_kept_score_like_step_5():
    pairs = [
        (hp_case("o/r#1", [INF, REVIEW], 9), key("o/r#1", hp=True, criterion="crash")),
        (hp_case("o/r#2", [INF, REVIEW], 3), key("o/r#2", hp=True, criterion="regression")),
        (hp_case("o/r#3", [INF, MARK], 0), key("o/r#3", hp=True, criterion="regression")),  # score 0: never
        (hp_case("o/r#4", [INF, REVIEW], 4), key("o/r#4")),
        (hp_case("o/r#5", [INF, MARK], None), key("o/r#5")),  # step 5 did not run: never
        (case(gold("infra"), [INF, MARK], cid="o/r#6"), key("o/r#6")),  # a plan without steps: never
    ]
    assert high_priority_score(pairs[0][0]) == 9 and high_priority_score(pairs[5][0]) is None
    assert not flagged_at(pairs[2][0], 0) and not flagged_at(pairs[4][0], 0)
    rows = {r["threshold"]: r for r in threshold_sweep(pairs, [5, 0.5, 3, 10])}
    assert list(rows) == [0.5, 3, 5, 10]
    assert (rows[3]["flagged"], rows[3]["false_flags"]) == (2, 1)
    assert (rows[5]["flagged"], rows[5]["false_flags"]) == (1, 0)
    assert rows[10]["recall"] == 0 and rows[0.5]["recall"] == pytest.approx(2 / 3)
    assert rows[3]["false_flag_rate"] == pytest.approx(1 / 3)


def test_derive_gold_reads_the_queues_own_data():
    """The five-route test queue (tests/data/transit): its sub-oncall labels, its modules' routes, its
    `gold.module_routes` and its `gold.either` decide, not names written in code."""
    from pathlib import Path

    from triage.config.bundle import load_bundle as load

    folder = Path(__file__).parent / "data" / "transit"
    transit = load(folder / "rubric.yaml", folder / "labels.json", folder / "templates")
    assert derive_gold(["component: tiles", "component: timetables"], transit).route == "either"
    assert derive_gold(["component: tiles", "component: cards"], transit).route is None  # not declared together
    assert derive_gold(["component: fares"], transit).route == "payments"  # gold.module_routes
    assert derive_gold(["team: accounts", "component: tiles"], transit).route == "accounts"
    assert derive_gold(["component: accessibility"], transit).route is None  # a module of every route
    g = derive_gold(["kind: feature", "kind: enhancement", "high priority"], transit)
    assert (g.type, g.high_priority) == ("feature", True)  # the kind of the queue's type label
    # pt2's main team adds no label: an issue with no team label and no module of another route is on it
    pt2 = Path(__file__).parents[1] / "queues" / "pt2"
    pt2 = load(pt2 / "rubric.yaml", pt2 / "labels.json", pt2 / "templates")
    assert derive_gold(["oncall: pt2", "module: dynamo"], pt2).route == "core"
    assert derive_gold(["oncall: pt2", "module: cpu inductor"], pt2).route == "cpu-inductor"
    assert derive_gold(["oncall: pt2", "oncall: export", "module: dynamo"], pt2).route == "export"


def test_routing_in_the_queue_leaves_out_what_the_key_reads_as_not_in_the_queue():
    """Step 2 routes only what step 1 kept: against a key that reads step 1, routing is also measured over the
    issues the key keeps in the queue. A key without that reading gives no such figure."""
    from triage.evaluation.answer_key import KeyEntry
    from triage.evaluation.key_figures import evaluate_key

    routed = case(gold("parallelisms"), [PAR, "module: fsdp", MARK], outcome="classified", cid="r/r#1")
    wrong = case(gold("infra"), [PAR, MARK], outcome="classified", cid="r/r#2")
    left = case(gold("infra"), [REVIEW, MARK], outcome="not_distributed", cid="r/r#3")
    entry = lambda cid, nd: KeyEntry(cid, "bug", False, False, None, "high", nd)  # noqa: E731
    pairs = [(routed, entry("r/r#1", False)), (wrong, entry("r/r#2", False)), (left, entry("r/r#3", True))]
    figures = evaluate_key(pairs, SCORING)
    assert figures["routing_in_queue"] == {"scored": 2, "correct": 1, "accuracy": 0.5, "not_in_queue": 1}
    assert evaluate([routed, wrong, left], SCORING)["routing"]["accuracy"] == pytest.approx(1 / 3)
    no_reading = [(c, dataclasses.replace(e, not_distributed=None)) for c, e in pairs]
    assert "routing_in_queue" not in evaluate_key(no_reading, SCORING)


def test_recall_over_the_keys_sure_ones_and_step_1_against_the_key():
    """Recall is also counted over the key's `sure: high` high-priority issues alone; a key that reads step 1
    counts its not-distributed issues sent away and its in-queue issues wrongly sent away, each a listed miss."""
    from triage.evaluation.answer_key import KeyEntry
    from triage.evaluation.key_figures import evaluate_key, key_misses

    def entry(cid, hp=False, sure="medium", nd=False):
        return KeyEntry(cid, "bug", False, hp, "crash" if hp else None, sure, nd)

    pairs = [
        (hp_case("s/s#1", [INF, REVIEW], 5), entry("s/s#1", hp=True, sure="high")),
        (hp_case("s/s#2", [INF, MARK], 0), entry("s/s#2", hp=True, sure="high")),
        (hp_case("s/s#3", [INF, REVIEW], 5), entry("s/s#3", hp=True, sure="low")),
        (case(gold(None), [REVIEW, MARK], outcome="not_distributed", cid="s/s#4"), entry("s/s#4", nd=True)),
        (case(gold(None), [PAR, MARK], outcome="classified", cid="s/s#5"), entry("s/s#5", nd=True)),
        (case(gold("infra"), [REVIEW, MARK], outcome="not_distributed", cid="s/s#6"), entry("s/s#6")),
        (case(gold("infra"), [INF, MARK], outcome="routed", cid="s/s#7"), entry("s/s#7")),
    ]
    f = evaluate_key(pairs, SCORING)
    assert f["high_priority"]["recall"] == pytest.approx(2 / 3)
    assert f["high_priority"]["sure"] == {"key": 2, "flagged": 1, "recall": 0.5}
    assert f["not_in_queue"] == {"key": 2, "sent_away": 1, "rate": 0.5,
                                 "in_queue": 5, "wrongly_sent_away": 1, "wrongly_rate": 0.2}
    kinds = [(m.kind, m.id) for m in key_misses(pairs, SCORING) if m.kind.startswith("key_") and "hp" not in m.kind]
    assert kinds == [("key_kept_not_distributed", "s/s#5"), ("key_sent_away", "s/s#6")]
    no_reading = [(c, dataclasses.replace(e, not_distributed=None)) for c, e in pairs]
    assert "not_in_queue" not in evaluate_key(no_reading, SCORING)
