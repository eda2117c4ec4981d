"""No rubric rule may fire on one dev record only (issue 17), measured by scripts/rule_support.py.

A rule that matches exactly one record of the sets its queue is tuned on is a rule fitted to that record. The dev
sets are not shipped (a fresh clone skips that part, as tests/test_no_dev_set_leak.py does); the counter itself is
tested here on invented records, always. Known exceptions, if any, are listed with a reason in
tests/data/rule_support_exceptions.txt; a listed rule that no longer has support 1 fails the test, so the list can
only shrink.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
import yaml

from engine_helpers import ROOT, shared_dir
from triage.config.bundle import load_bundle
from triage.text.document import build_document
from triage.text.frames import compile_frame, compile_slots
from triage.text.matching import compile_signal

EXCEPTIONS = ROOT / "tests" / "data" / "rule_support_exceptions.txt"
SHARED = yaml.safe_load((ROOT / "triage" / "reading" / "shared" / "v1.yaml").read_text(encoding="utf-8"))
SHARED_IDS = {signal["id"] for groups in (SHARED["signals"], SHARED["criteria"]) for group in groups.values()
              for signal in group}


def _script():
    spec = importlib.util.spec_from_file_location("rule_support", ROOT / "scripts" / "rule_support.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["rule_support"] = module  # its dataclasses look their module up while they are built
    spec.loader.exec_module(module)
    return module


rs = _script()


def _exceptions() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in EXCEPTIONS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            queue, rule_id, *why = line.split()
            assert why, f"{EXCEPTIONS.name}: '{line}' gives no reason"
            out.setdefault(queue, set()).add(rule_id)
    return out


# --- the counter, on invented records ---------------------------------------------------------------

SLOTS = compile_slots({
    "thing": r"(?:^|[^a-z0-9])(barrier|all_reduce)(?:[^a-z0-9]|$)",
    "blocks": r"(?:^|[^a-z0-9])(hangs?|stalls?)(?:[^a-z0-9]|$)",
}, where="test")


def _rules():
    signal = lambda **raw: compile_signal({"weight": 1, **raw}, where="test")  # noqa: E731
    return [
        rs.Rule("fsdp", "topics/x", signal(id="fsdp", match=r"(?:^|[^a-z])(fsdp)(?:[^a-z]|$)")),
        rs.Rule("nccl-in-error", "topics/x", signal(id="nccl-in-error", match=r"(nccl)", **{"in": ["error"]})),
        rs.Rule("both", "topics/x", signal(id="both", all=[r"(fsdp)", r"(checkpoint)"])),
        rs.Rule("never", "topics/x", signal(id="never", match=r"(zzzyzx)")),
        rs.Rule("hang-frame", "hp (frame)", compile_frame({"id": "hang-frame", "all": ["thing", "blocks"], "weight": 2},
                                                          SLOTS, where="test")),
    ]


def _doc(title: str, body: str, comments=()):
    rubric = load_bundle().rubric  # how the bundled queue splits text into locations
    return build_document(title, body, list(comments), environment_heading=rubric.environment_heading,
                          comment_separator=rubric.comment_separator)


def test_support_counts_distinct_records_in_any_location():
    docs = [
        _doc("FSDP hangs", "fsdp fsdp fsdp, the barrier hangs on rank 3.\n\nRuntimeError: NCCL error"),  # many times: once
        _doc("Saving a model", "I save a checkpoint.", comments=["Using FSDP here."]),  # in a comment only
        _doc("NCCL question", "Which nccl version should I use?"),  # nccl, but not in an error line
        _doc("slow all_reduce", "The all_reduce is slow. Then it stalls."),  # the frame's slots in two sentences
    ]
    counts = rs.support(_rules(), docs, SLOTS)
    assert counts == {"fsdp": 2, "nccl-in-error": 1, "both": 1, "never": 0, "hang-frame": 1}


def test_location_weights_do_not_hide_a_match():
    """A rule that matches where the rubric weighs nothing (the environment dump) still fires: it was still
    written from those words."""
    env_only = _doc("Crash", "It crashed.\n\n### Versions\n\nCollecting environment information...\nfsdp 1.0\n")
    assert "fsdp" in env_only.get("environment")
    assert rs.support(_rules()[:1], [env_only], SLOTS) == {"fsdp": 1}


def _row(number: int, title: str, body: str) -> dict:
    issue = {"number": number, "title": title, "body": body, "labels": [], "user": {"login": "a", "type": "User"},
             "state": "open", "created_at": "2026-01-01T00:00:00Z"}
    return {"id": f"o/r#{number}", "issue": issue, "comments": [], "gold": {}}


def test_script_reads_records_once_and_lists_the_rules_with_support_one(tmp_path, capsys):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows = [_row(1, "FSDP hangs in all_gather", "With FSDP the job hangs on 2 nodes."),
            _row(2, "Question about DDP", "How do I use DistributedDataParallel?")]
    first.write_text("".join(json.dumps(r) + "\n" for r in rows))
    second.write_text(json.dumps(rows[0]) + "\n")  # the same record in a second set counts once
    status = rs.main(["--queue", "distributed", "--dataset", str(first), "--dataset", str(second)])
    out = capsys.readouterr().out.splitlines()
    report = rs.measure("distributed", [first, second])
    assert report.records == 2
    assert out[-1] == report.summary() and "over 2 records" in out[-1]
    listed = {line.split("\t")[1] for line in out[:-1]}
    assert listed == {r.id for r in report.singletons} and listed  # on two records, most rules that fire fire once
    assert status == 1
    assert len(report.rules) == len({r.id for r in report.rules})  # ids are unique: one count per rule


def test_script_bad_input_is_one_line(tmp_path, capsys):
    assert rs.main(["--queue", "distributed", "--dataset", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.jsonl" in err[0]


# --- the bundled queues, on their dev sets -----------------------------------------------------------


@pytest.mark.parametrize("queue", sorted(rs.DEV_SETS))
def test_no_rule_fires_on_one_dev_record_only(queue):
    paths = [shared_dir() / "eval" / name for name in rs.DEV_SETS[queue]]
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        pytest.skip(f"{', '.join(missing)} absent (fresh clone): support cannot be measured")
    report = rs.measure(queue, paths)
    allowed = _exceptions().get(queue, set())
    fitted = sorted(r.id for r in report.singletons if r.id not in allowed and r.id not in SHARED_IDS)
    # A rule of the shared reading (triage/reading/shared/v1.yaml) is written for every queue, from none of their
    # records: its support is counted over every bundled queue's dev sets, as this queue reads them.
    shared_once = [r.id for r in report.singletons if r.id in SHARED_IDS]
    if shared_once:
        every = list(dict.fromkeys(shared_dir() / "eval" / n for names in rs.DEV_SETS.values() for n in names))
        wide = rs.measure(queue, [p for p in every if p.is_file()]).counts
        fitted += sorted(i for i in shared_once if wide.get(i, 0) == 1)
    assert not fitted, (f"{report.summary()}; rules fitted to one record (generalise or remove them, see "
                        f"scripts/rule_support.py): {', '.join(fitted)}")
    stale = sorted(i for i in allowed if report.counts.get(i) != 1)
    assert not stale, f"no longer support 1, remove from {EXCEPTIONS.name}: {', '.join(stale)}"
