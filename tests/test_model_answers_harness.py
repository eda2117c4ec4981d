"""The measurement harness without a model API (bench/model_answers.py, issue 28), run as a program on a handful of
issues with answers made mechanically (they repeat the rubric's plan: this tests the harness, it measures
nothing): capture writes one gold-free prompt per issue, in folders, through the real `ptd-triage plan` and a
loopback stand-in; check reads the answers; score serves them to `ptd-triage eval` for rubric, llm and hybrid and
prints one table; an answer to a prompt that changed since capture is refused, never scored."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "model_answers.py"
DATA = ROOT / "tests" / "data" / "eval_small.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    out = tmp_path_factory.mktemp("answers")
    run = _run("capture", str(DATA), str(out), "--per-folder", "5")
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    key = out / "key.jsonl"
    key.write_text("".join(json.dumps({"id": r["id"], "type": "bug", "performance": False,
                                       "high_priority": i % 3 == 0, "criterion": "crash" if i % 3 == 0 else None,
                                       "sure": "high", "why": "harness", "not_distributed": False}) + "\n"
                           for i, r in enumerate(rows)), encoding="utf-8")
    return out, rows, key


def test_capture_writes_one_gold_free_prompt_per_issue_in_folders(captured):
    out, rows, _ = captured
    prompts = sorted((out / "prompts").rglob("prompt-*.json"))
    assert len(prompts) == len(rows) == 13
    assert sorted(p.parent.name for p in prompts) == ["01"] * 5 + ["02"] * 4 + ["03"] * 4  # ~5 a folder, even
    systems = set()
    for path in prompts:
        document = json.loads(path.read_text(encoding="utf-8"))
        text = json.dumps(document)
        assert '"gold"' not in text and "module: fsdp\", \"oncall" not in text
        assert document["response_format"]["json_schema"]["name"] == "ptd_triage_plan"
        systems.add(document["system_sha256"])
        assert f"Issue #{document['issue']}." in document["messages"][1]["content"]
    assert len(systems) == 1  # one system prompt for every issue
    manifest = json.loads((out / "prompts" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["folders"] == 3 and manifest["not_asked"] == [] and (out / "prompts" / "README.md").is_file()


def test_answers_are_checked_served_and_scored_side_by_side(captured):
    out, rows, key = captured
    prompts = out / "prompts"
    assert _run("mechanical", str(prompts), str(DATA)).returncode == 0
    checked = _run("check", str(prompts))
    assert checked.returncode == 0 and "13 prompts, 13 answers, 0 unusable or missing" in checked.stdout
    scored = _run("score", str(DATA), str(key), str(prompts), "--json", str(out / "score.json"))
    assert scored.returncode == 0, scored.stdout + scored.stderr
    table = [line for line in scored.stdout.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in table[1:]] == ["rubric", "llm", "hybrid"]
    figures = json.loads((out / "score.json").read_text(encoding="utf-8"))["figures"]
    llm, rubric, hybrid = figures["llm"], figures["rubric"], figures["hybrid"]
    for name in ("hp_recall", "false_flags", "right_type", "routing", "module_f1"):  # answers agreeing with
        assert llm[name] == rubric[name] == hybrid[name], name  # the rubric change nothing
    assert llm["asked"] == 1.0 and llm["calls"] == 13 and llm["fallbacks"] == 0
    assert 0 < hybrid["asked"] < 1 and hybrid["input_tokens"] > 0 and llm["input_tokens"] > hybrid["input_tokens"]
    assert "0 refused because the prompt changed since capture" in scored.stdout
    # Hybrid with the gate on, as a fourth column over the same answers: it asks less than the default.
    gated = _run("score", str(DATA), str(key), str(prompts), "--hybrid-gate", "--json", str(out / "gated.json"))
    assert gated.returncode == 0, gated.stdout + gated.stderr
    table = [line for line in gated.stdout.splitlines() if line.startswith("| ")]
    assert [line.split("|")[1].strip() for line in table[1:]] == ["rubric", "llm", "hybrid", "hybrid-gate"]
    figures = json.loads((out / "gated.json").read_text(encoding="utf-8"))["figures"]
    assert figures["hybrid"] == hybrid and figures["hybrid-gate"]["asked"] < hybrid["asked"]
    assert "0 refused because the prompt changed since capture" in gated.stdout
    # What 100 such issues cost at a price list, with the system prompt as the cached prefix.
    priced = _run("cost", str(prompts), str(prompts), "--price", "1", "0.1", "1.25", "5")
    assert priced.returncode == 0, priced.stderr
    warm, cold = map(float, re.findall(r"\$(\d+\.\d+)", priced.stdout.splitlines()[-1]))
    assert 0 < warm < cold and "13 prompts, 13 answers" in priced.stdout


def test_a_wrong_or_changed_answer_is_reported_never_scored(captured, tmp_path):
    out, rows, key = captured
    copy = tmp_path / "prompts"
    subprocess.run(["cp", "-r", str(out / "prompts"), str(copy)], check=True)
    answer = next(copy.rglob("answer-101.json"))
    broken = json.loads(answer.read_text(encoding="utf-8"))
    broken["high_priority"].update(decision="flag", criteria=[], no_flag_reason="none")
    answer.write_text(json.dumps(broken), encoding="utf-8")
    checked = _run("check", str(copy))
    assert checked.returncode == 1 and "a flag names at least one criterion" in checked.stdout
    prompt = next(copy.rglob("prompt-102.json"))
    document = json.loads(prompt.read_text(encoding="utf-8"))
    document["system_sha256"] = "0" * 64  # as if the prompt had been captured from another system prompt
    prompt.write_text(json.dumps(document), encoding="utf-8")
    scored = _run("score", str(DATA), str(key), str(copy))
    assert scored.returncode == 1 and "refused because the prompt changed since capture" in scored.stdout
    assert "1 refused" in scored.stdout or "2 refused" in scored.stdout  # llm, and hybrid if it asked


def test_an_archive_keeps_the_answers_and_the_prompts_hashes_and_is_scored_the_same(captured, tmp_path):
    out, rows, key = captured
    prompts = out / "prompts"
    assert _run("mechanical", str(prompts), str(DATA)).returncode == 0
    kept = tmp_path / "archive"
    made = _run("archive", str(prompts), str(kept))
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in kept.iterdir()) == sorted(
        [f"answer-{r['issue']['number']}.json" for r in rows]
        + ["prompts.sha256.json"])
    assert not list(kept.glob("prompt-*.json"))  # the 30 KB prompts are not kept, their hashes are
    direct = _run("score", str(DATA), str(key), str(prompts), "--json", str(tmp_path / "direct.json"))
    archived = _run("score", str(DATA), str(key), str(kept), "--json", str(tmp_path / "archived.json"))
    assert archived.returncode == 0, archived.stdout + archived.stderr
    figures = [json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))["figures"]
               for name in ("direct", "archived")]
    assert direct.returncode == 0 and figures[0] == figures[1]
    # An archived answer whose prompt has changed since (here: its recorded hash) is refused, never scored.
    hashes = json.loads((kept / "prompts.sha256.json").read_text(encoding="utf-8"))
    hashes[next(iter(hashes))]["user_sha256"] = "0" * 64
    (kept / "prompts.sha256.json").write_text(json.dumps(hashes), encoding="utf-8")
    refused = _run("score", str(DATA), str(key), str(kept))
    assert refused.returncode == 1 and "refused because the prompt changed since capture" in refused.stdout
    # An answer missing for a captured prompt: nothing archived.
    copy = tmp_path / "prompts"
    subprocess.run(["cp", "-r", str(prompts), str(copy)], check=True)
    next(copy.rglob("answer-*.json")).unlink()
    assert _run("archive", str(copy), str(tmp_path / "partial")).returncode == 1
    assert not (tmp_path / "partial").exists()


def test_a_repair_call_extends_the_captured_prompt_and_is_served_anything_else_is_refused(tmp_path):
    """A repair call (the planner's second call after an invalid answer) is the captured user message followed by
    the repair mark: served and counted as a repair, also when the issue's own text holds the mark; a user message
    that is not the captured one is refused."""
    sys.path.insert(0, str(ROOT / "bench"))
    import model_answers as harness

    user = "Issue #7. The body quotes" + harness.REPAIR_MARK + " itself."
    folder = tmp_path / "01"
    folder.mkdir()
    (folder / "prompt-7.json").write_text(json.dumps({
        "issue": 7, "system_sha256": harness.sha("SYSTEM"), "user_sha256": harness.sha(user),
        "messages": [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": user}]}), encoding="utf-8")
    (folder / "answer-7.json").write_text("{}", encoding="utf-8")
    stand_in = harness.StandIn("serve", tmp_path)  # served in-process: its socket is never started
    stand_in.server.server_close()

    def ask(text: str) -> int:
        return stand_in._serve("7", {}, "SYSTEM", text)[0]

    assert ask(user) == 200 and stand_in.counts["repairs"] == 0
    assert ask(user + harness.REPAIR_MARK + ": the answer had no `route`.") == 200 and stand_in.counts["repairs"] == 1
    assert ask("Issue #7. Another body.") == 400 and stand_in.counts["changed"] == 1
    assert ask("Issue #7. The body quotes" + harness.REPAIR_MARK + " something else.") == 400
