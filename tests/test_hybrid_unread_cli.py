"""`ptd-triage plan --planner hybrid` against the loopback OpenAI stand-in (issue 38): an issue whose prose the
rubric could not read is put to the model whatever the gate (an issue written in Chinese, one that is nothing but a
pasted log, a CI bot's report), while, with `hybrid: {gate: true}`, a plain readable report the gate is sure of is
not; by default every issue whose steps 4 and 5 run is asked.

The rubric's `unread` note is its own reading's (`triage.reading.unread`), through the real CLI in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from engine_helpers import ROOT, rest_issue

CHINESE = rest_issue(
    "FSDP2 训练问题",
    "我们在两台机器上用 FSDP2 训练模型，每次到第二个 epoch 的时候损失突然变成很大的值，然后训练就停止了。单卡训练"
    "没有这个问题。我们已经尝试了降低学习率，也换了不同的随机种子，结果都一样。请问这是什么原因？\n\n```\nfrom "
    "torch.distributed.fsdp import fully_shard\nfully_shard(model)\n```", number=9101)
LOG_ONLY = rest_issue(
    "DDP error",
    "```\n[rank1]:[W1203 10:11:12.123 ProcessGroupNCCL.cpp:1234] Warning: TORCH_NCCL_ASYNC_ERROR_HANDLING is "
    "deprecated\n[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/home/u/train.py\", line 88, in "
    "<module>\n[rank1]:     model = DDP(model, device_ids=[rank])\n[rank1]:   File \"/usr/lib/python3.10/site-packages"
    "/torch/nn/parallel/distributed.py\", line 795, in __init__\n[rank1]:     _verify_param_shape_across_processes("
    "self.process_group, parameters)\n[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 "
    "has 212 params, while rank 0 has 210 params.\n```", number=9102)
BOT = dict(rest_issue(
    "[CI] distributed/test_c10d_gloo.py job red on trunk",
    "This issue was opened automatically by the CI monitor.\n\nJob: `linux-jammy-py3.10 / test (distributed, 2, 3)`"
    "\nWorkflow run: https://example.invalid/runs/123\nFirst red commit: abc1234\n\nTests:\n- `test_c10d_gloo.py::"
    "ProcessGroupGlooTest::test_allreduce_coalesced_basics`\n\nSee the job log for details.", number=9103),
    user={"login": "ci-monitor[bot]", "type": "Bot"})
PLAIN = rest_issue(
    "DDP find_unused_parameters raises",
    "```\nRuntimeError: Expected to have finished reduction in the prior iteration\n```\n```\nimport "
    "torch.distributed as dist\nmodel = DDP(net)\nloss.backward()\n```", number=9104)
UNREADABLE = (CHINESE["number"], LOG_ONLY["number"], BOT["number"])
UNREAD = "the rubric could not read the issue ("


def plan(tmp_path, fake_openai, *extra: str) -> list[dict]:
    issues = tmp_path / "issues.jsonl"
    issues.write_text("".join(json.dumps({"issue": i, "comments": []}, ensure_ascii=False) + "\n"
                              for i in (CHINESE, LOG_ONLY, BOT, PLAIN)), encoding="utf-8")
    code = "import sys; from triage.cli.main import main; sys.exit(main(sys.argv[1:]))"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
           "OPENAI_API_KEY": fake_openai.api_key}
    done = subprocess.run([sys.executable, "-c", code, "plan", str(issues), "--planner", "hybrid",
                           "--llm-provider", "openai", "--llm-model", "m", "--llm-base-url", fake_openai.url, *extra],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def asked(plan_: dict) -> str:
    return next((r for r in plan_["reasons"] if r.startswith("hybrid: asked the model (")), "")


def test_an_issue_the_rubric_could_not_read_is_asked_whatever_the_gate(tmp_path, fake_openai):
    config = tmp_path / "ptd-triage.yml"
    config.write_text("extends: distributed\nrubric:\n  hybrid:\n    gate: true\n", encoding="utf-8")
    plans = {p["issue"]: p for p in plan(tmp_path, fake_openai, "--config", str(config))}
    assert len(fake_openai.answered) == 3  # one call for each issue the rubric could not read, none for PLAIN
    for number in UNREADABLE:
        why = asked(plans[number])
        assert UNREAD in why, (number, plans[number]["reasons"])
        assert plans[number]["planner"] == "hybrid" and plans[number]["usage"]
    assert not asked(plans[PLAIN["number"]])
    assert any("the model was not asked" in r for r in plans[PLAIN["number"]]["reasons"])
    # What the model was shown is the issue itself, in the script it was written in.
    assert any("损失突然变成很大的值" in call.prompt.user for call in fake_openai.answered)


@pytest.mark.parametrize("config", [None, "extends: distributed\nrubric:\n  hybrid:\n    gate: false\n"])
def test_by_default_every_issue_whose_steps_4_and_5_run_is_asked(tmp_path, fake_openai, config):
    extra: tuple[str, ...] = ()
    if config:
        (tmp_path / "ptd-triage.yml").write_text(config, encoding="utf-8")
        extra = ("--config", str(tmp_path / "ptd-triage.yml"))
    plans = {p["issue"]: p for p in plan(tmp_path, fake_openai, *extra)}
    assert len(fake_openai.answered) == 4
    for number, p in plans.items():
        assert "steps 4 and 5 run on this issue: the model reads them" in asked(p), number
        assert (UNREAD in asked(p)) == (number in UNREADABLE)
