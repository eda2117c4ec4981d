"""`python -m triage plan` as a user runs it: every input shape, the output contract, config overrides, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from engine_helpers import MARKER, PAR, QUEUE, REPRO, ROOT, fenced, rest_issue, shared_dir, snapshot_dict

EXAMPLES = Path(__file__).resolve().parent / "contract" / "webhooks" / "examples"
CONTRACT_KEYS = {"issue", "add_labels", "comment", "outcome", "sub_oncall", "modules", "confidence", "reasons"}
FSDP = ("FSDP mixed precision gives nan loss", "When I enable FSDP MixedPrecision with bf16 the loss becomes nan.")
VAGUE = ("Training misbehaves on several GPUs", "The numbers look different, not sure why.")


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "triage", "plan", *map(str, args)], capture_output=True, text=True,
                          timeout=60, cwd=cwd)


def write(path: Path, obj) -> Path:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def plans(result):
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_every_input_shape_in_one_run(tmp_path):
    rest = write(tmp_path / "rest.json", rest_issue(*FSDP, number=11))
    snapshot = write(tmp_path / "snap.json", snapshot_dict(*FSDP, number=12, comments=[
        "Repro:\n" + fenced("import torch\nmodel = FSDP(net)") + "\nrun with `torchrun --nproc_per_node 2 repro.py`"]))
    event = write(tmp_path / "event.json", (EXAMPLES / "issues.labeled.json").read_text())
    lines = [snapshot_dict(*VAGUE, number=21), rest_issue(*FSDP, number=22, labels=(QUEUE, MARKER)),
             snapshot_dict("DCP save fails", "dcp.save raises KeyError", number=23)]
    jsonl = write(tmp_path / "many.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    # The octokit example event's issue is not in the queue: planned anyway with --any-issue.
    out = plans(cli(rest, snapshot, event, jsonl, "--any-issue"))
    assert [p["issue"] for p in out] == [11, 12, 1, 21, 22, 23]  # input order, one plan per record
    for p in out:
        assert CONTRACT_KEYS <= set(p)
    assert out[0]["add_labels"] == [PAR, "module: fsdp", REPRO, MARKER]
    assert out[0]["comment"]["template"] == "needs_distributed_reproduction"
    assert REPRO not in out[1]["add_labels"] and out[1]["comment"] is None  # the comment's repro was read
    assert out[3]["outcome"] == "needs_review" and out[3]["confidence"] == "low"
    assert out[4]["outcome"] == "nothing_to_do" and out[4]["add_labels"] == []
    assert out[5]["sub_oncall"] == "oncall: distributed checkpointing"


def test_force_flag(tmp_path):
    marked = write(tmp_path / "marked.json", rest_issue(*FSDP, labels=(QUEUE, MARKER)))
    assert plans(cli(marked))[0]["outcome"] == "nothing_to_do"
    forced = plans(cli("--force", marked))[0]
    assert forced["outcome"] == "classified" and MARKER not in forced["add_labels"]


def test_text_format(tmp_path):
    issue = write(tmp_path / "i.json", rest_issue(*FSDP, number=5))
    result = cli("--format", "text", issue)
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == f"#5 {FSDP[0]}"
    assert "  outcome:    classified" in lines
    assert f"  add labels: {PAR}, module: fsdp, {REPRO}, {MARKER}" in lines
    assert "  comment:    needs_distributed_reproduction" in lines
    assert any(l.startswith("    - step 3: high confidence") for l in lines)


def test_modified_config_copies_change_the_result(tmp_path):
    vague = write(tmp_path / "vague.json", rest_issue(*VAGUE))
    baseline = plans(cli(vague))[0]
    assert baseline["sub_oncall"] == PAR and REPRO in baseline["add_labels"]

    rubric = yaml.safe_load((ROOT / "queues" / "distributed" / "rubric.yaml").read_text())
    rubric["routing"]["default"] = "infra"
    rubric_path = write(tmp_path / "rubric.yaml", yaml.safe_dump(rubric, allow_unicode=True))
    assert plans(cli("--rubric", rubric_path, vague))[0]["sub_oncall"] == "oncall: distributed infra"

    labels = json.loads((ROOT / "queues" / "distributed" / "labels.json").read_text())
    next(l for l in labels["labels"] if l["name"] == REPRO)["name"] = "needs repro"
    labels_path = write(tmp_path / "labels.json", labels)
    relabelled = plans(cli("--labels", labels_path, vague))[0]
    assert "needs repro" in relabelled["add_labels"] and REPRO not in relabelled["add_labels"]

    templates = tmp_path / "templates"
    shutil.copytree(ROOT / "queues" / "distributed" / "templates", templates)
    (templates / "needs_distributed_reproduction.md.j2").write_text("Please share a script.")
    custom = plans(cli("--templates", templates, vague))[0]
    assert custom["comment"]["body"] == "Please share a script.\n\n<!-- ptd-triage:needs_distributed_reproduction -->\n"


def _expect_bad(result, *fragments):
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def test_missing_file(tmp_path):
    _expect_bad(cli(tmp_path / "absent.json"), str(tmp_path / "absent.json"), "cannot read")


def test_invalid_json(tmp_path):
    path = write(tmp_path / "bad.json", "{ nope")
    _expect_bad(cli(path), str(path), "not valid JSON")


def test_json_array(tmp_path):
    path = write(tmp_path / "arr.json", [rest_issue(*FSDP)])
    _expect_bad(cli(path), str(path), "expected a JSON object")


def test_jsonl_bad_line_3_writes_nothing(tmp_path):
    good = json.dumps(rest_issue(*FSDP))
    path = write(tmp_path / "x.jsonl", f"{good}\n{good}\n{{broken\n{good}\n")
    _expect_bad(cli(path), f"{path}:3", "not valid JSON")


def test_object_without_number_or_title(tmp_path):
    path = write(tmp_path / "obj.json", {"body": "FSDP hangs", "labels": []})
    _expect_bad(cli(path), str(path), "not an issue")
    no_title = write(tmp_path / "nt.json", {"number": 3, "body": "x", "title": None})
    _expect_bad(cli(no_title), str(no_title), "issue.title")


def test_bad_file_after_a_good_one_still_prints_nothing(tmp_path):
    good = write(tmp_path / "good.json", rest_issue(*FSDP))
    bad = write(tmp_path / "bad.json", "[]")
    _expect_bad(cli(good, bad), str(bad))


def test_invalid_config_is_one_line(tmp_path):
    issue = write(tmp_path / "i.json", rest_issue(*FSDP))
    rubric = write(tmp_path / "r.yaml", "version: 2\n")
    _expect_bad(cli("--rubric", rubric, issue), str(rubric))


def test_dev_set_plans_one_line_per_issue():
    dev = shared_dir() / "eval" / "dev.jsonl"
    if not dev.exists():
        pytest.skip("the shared dev set is not available (fresh clone)")
    out = plans(cli(dev))
    assert len(out) == 159
    assert all(CONTRACT_KEYS <= set(p) for p in out)


def test_an_issue_outside_the_queue_is_not_planned_and_the_plan_says_why(tmp_path):
    outside = write(tmp_path / "outside.json", rest_issue(*FSDP, number=31, labels=("bug",)))
    proc = cli(outside)
    assert proc.returncode == 0
    plan = json.loads(proc.stdout)
    assert plan["outcome"] == "nothing_to_do" and plan["add_labels"] == []
    assert "not in the queue" in plan["reasons"][0] and "#31 is not in the queue" in proc.stderr
    custom = json.loads(cli(outside, "--queue-label", "bug").stdout)
    assert custom["add_labels"]  # with that queue label it is queued, and planned


def _stdin(text: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "triage", "plan", *map(str, args), "-"], input=text,
                          capture_output=True, text=True, timeout=60)


def test_plan_reads_standard_input_as_one_issue_or_json_lines():
    root = Path(__file__).resolve().parents[1]
    one = (root / "examples" / "issues" / "ddp-slow-no-repro.json").read_text(encoding="utf-8")
    from_file = cli(root / "examples" / "issues" / "ddp-slow-no-repro.json")
    piped = _stdin(one)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["add_labels"] == json.loads(from_file.stdout)["add_labels"]
    lines = (root / "examples" / "queues" / "storage" / "sample-issues.jsonl").read_text(encoding="utf-8")
    many = _stdin(lines, "--config", root / "examples" / "queues" / "storage")
    assert many.returncode == 0, many.stderr
    assert len(many.stdout.splitlines()) == len([line for line in lines.splitlines() if line.strip()])


@pytest.mark.parametrize("text,expected", [("", "-: standard input is empty"),
                                           ("{not json", "-: not valid JSON"),
                                           (json.dumps(rest_issue("DDP hangs", "x")) + "\n{oops\n",
                                            "-:2: not valid JSON")])
def test_bad_standard_input_is_one_line(text, expected):
    proc = _stdin(text)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"ptd-triage: error: {expected}"), proc.stderr
