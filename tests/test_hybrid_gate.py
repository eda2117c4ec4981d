"""When the hybrid planner asks the model about step 5 (triage/planners/escalation.py): by the issue's class.

Invented issues, written for this file. The gate's point: a high-priority issue the rubric scores zero (its
wording is unknown to every criterion) must still reach the model, while a plain bug report, a request about
hangs and an issue the rubric already flagged do not cost a call for step 5.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine_helpers import bundle, fenced, snap
from triage.planners import plan_issue
from triage.planners.escalation import HighPriorityGate
from triage.planners.hybrid import HybridSettings, uncertain_steps

SCRIPT = fenced("import torch.distributed as dist\nmodel = DDP(net)\nloss.backward()")


def asked(title: str, body: str, settings: HybridSettings | None = None):
    b = bundle()
    issue = snap(title, body)
    plan = plan_issue(issue, b)
    take, why = uncertain_steps(issue, b, plan, settings or HybridSettings.from_rubric(b.rubric))
    return plan, 5 in take, why


def test_the_gate_is_read_from_the_rubric():
    gate = HybridSettings.from_rubric(bundle().rubric).high_priority
    assert gate.cues and "blocking" in gate.cues and gate.request_cues == ("crash_signal",)
    assert gate.confirm_flags is False


def test_a_bug_report_scoring_zero_with_a_cue_reaches_the_model():
    # A hang in words no criterion reads as one (no collective or process group named): step 5 scores zero.
    plan, five, why = asked("Training on our cluster", "After an hour the job is stuck and nothing is logged.\n"
                                                        + SCRIPT)
    assert plan.step(5).decision == "no_flag" and plan.high_priority_score == 0
    assert five and any("cue (blocking 'stuck'" in w for w in why)


def test_evidence_below_the_threshold_reaches_the_model():
    plan, five, why = asked("DDP gradients", "In a later run we saw different numbers.\n" + SCRIPT)
    assert not five  # no evidence, no cue: a plain report
    plan, five, why = asked("DDP crash on exit", "It happens at the end.\n" + SCRIPT)
    assert plan.step(5).decision == "no_flag" and plan.step(5).evidence
    assert five and any("evidence below the threshold" in w for w in why)


def test_a_version_named_with_a_failure_reaches_the_model():
    _, five, why = asked("DDP bucket view option", "With torch 2.6 the bucket view option fails for us.\n" + SCRIPT)
    assert five and any("naming a version" in w for w in why)


def test_a_plain_bug_report_does_not_cost_a_call_for_step_5():
    _, five, _ = asked("DDP find_unused_parameters raises", "```\nRuntimeError: Expected to have finished reduction "
                                                             "in the prior iteration\n```\n" + SCRIPT)
    assert not five


def test_a_request_reaches_the_model_only_when_a_process_died():
    request = "### 🚀 The feature, motivation and pitch\n\nPlease add an option to abort a collective that {}."
    _, five, _ = asked("Add a way to abort a stuck all_reduce", request.format("hangs across nodes"))
    assert not five
    _, five, why = asked("Add a way to dump state when a rank segfaults", request.format("ends in a segfault"))
    assert five and any("a request with a high-priority cue" in w for w in why)


def test_a_flag_the_rubric_raised_is_not_asked_again_unless_configured():
    issue = ("all_reduce never returns on two nodes", "Rank 1 waits in the collective.\n" + SCRIPT)
    plan, five, _ = asked(*issue)
    assert plan.outcome == "high_priority" and not five
    base = HybridSettings.from_rubric(bundle().rubric)
    confirming = dataclasses.replace(base, high_priority=dataclasses.replace(base.high_priority, confirm_flags=True))
    _, five, why = asked(*issue, settings=confirming)
    assert five and "confirm the rubric's high-priority flag" in why


@pytest.mark.parametrize("raw, expected", [
    (None, HighPriorityGate()),
    ({"cues": ["blocking"], "where": ["title"]}, dataclasses.replace(HighPriorityGate(), cues=("blocking",),
                                                                     where=("title",))),
])
def test_gate_settings_from_data(raw, expected):
    assert HighPriorityGate.from_raw(raw) == expected


def test_an_unknown_gate_key_is_a_validation_error(tmp_path):
    import yaml

    from engine_helpers import ROOT
    from triage.config.bundle import ConfigError, load_bundle

    data = yaml.safe_load((ROOT / "queues" / "distributed" / "rubric.yaml").read_text(encoding="utf-8"))
    data["hybrid"]["high_priority"]["band"] = 1.5
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_bundle(path)
    assert "band" in str(info.value) and "\n" not in str(info.value)


def test_a_trap_is_asked_about_only_while_the_queue_evidence_does_not_outweigh_it():
    b = bundle()
    settings = HybridSettings.from_rubric(b.rubric)
    assert settings.trap_outweighed == 3

    def step1_asked(title: str, body: str) -> bool:
        issue = snap(title, body)
        take, _ = uncertain_steps(issue, b, plan_issue(issue, b), settings)
        return 1 in take

    # The compiler named in the title is a trap (3); one collective in the prose is all the distributed evidence.
    assert step1_asked("dynamo error on my model", "It calls all_reduce somewhere in the loop.")
    # The same trap under two distributed APIs named in the title and the script: evidence, not a doubt.
    heavy = ("[FSDP][DTensor] dynamo error when compiling fully_shard",
             "fully_shard with DTensor parameters fails under compile.\n" + fenced(
                 "from torch.distributed.fsdp import fully_shard\nfully_shard(model)\nmodel = torch.compile(model)"))
    assert not step1_asked(*heavy)
    # With no ceiling (0) the same issue is asked, as before.
    issue = snap(*heavy)
    take, _ = uncertain_steps(issue, b, plan_issue(issue, b), dataclasses.replace(settings, trap_outweighed=0))
    assert 1 in take
