"""When the hybrid planner asks the model (triage/planners/hybrid.py, escalation.py). By default (`gate: false`,
issue 38) on every issue whose steps 4 and 5 run; with `gate: true` on every issue the rubric flags, every request
the rubric finds, and step 5 by the issue's class; an issue the rubric could not read whatever the gate; and
whenever it asks, the model's reading of steps 4 and 5 decides (issue 28).

Invented issues, written for this file. The step-5 gate's point: a high-priority issue the rubric scores zero (its
wording is unknown to every criterion) must still reach the model, while a plain bug report and a request about
hangs do not cost a call for step 5 (`asked` isolates that gate: no request trigger, nothing added when asked).
"""

from __future__ import annotations

import dataclasses

import pytest

from engine_helpers import bundle, fenced, snap
from triage.planners import plan_issue
from triage.planners.escalation import HighPriorityGate
from triage.planners.hybrid import HybridSettings, uncertain_steps

SCRIPT = fenced("import torch.distributed as dist\nmodel = DDP(net)\nloss.backward()")


def step5_only(b) -> HybridSettings:
    """The rubric's gate, on, with only step 5's class deciding (no request trigger, nothing added when asked)."""
    return dataclasses.replace(HybridSettings.from_rubric(b.rubric), gate=True, on_request=(), model_decides=())


def gated(b) -> HybridSettings:
    """The rubric's settings with the gate on (`hybrid: {gate: true}`)."""
    return dataclasses.replace(HybridSettings.from_rubric(b.rubric), gate=True)


def asked(title: str, body: str, settings: HybridSettings | None = None):
    b = bundle()
    issue = snap(title, body)
    plan = plan_issue(issue, b)
    take, why = uncertain_steps(issue, b, plan, settings or step5_only(b))
    return plan, 5 in take, why


def test_the_gate_is_read_from_the_rubric():
    settings = HybridSettings.from_rubric(bundle().rubric)
    gate = settings.high_priority
    assert gate.cues and "blocking" in gate.cues and gate.request_cues == ("crash_signal",)
    assert gate.confirm_flags is True
    assert settings.on_request == ("feature", "enhancement") and settings.model_decides == (4, 5)
    assert settings.gate is False  # the model reads steps 4 and 5 of every issue on which they run
    # Requests the rubric does not see as requests are the hybrid's type misses (the model types them right when
    # asked): measured on dev2's and set10's blind answers, asking on any request evidence raised hybrid's right type
    # 0.860 -> 0.884 and 0.700 -> 0.900 (the model alone: 0.953 and 0.900), for 4-7 points more of issues asked.
    assert settings.on_request_evidence is True


def test_whenever_the_model_is_asked_it_decides_steps_4_and_5():
    b = bundle()
    settings = gated(b)
    # Asked for the request alone (no step-5 class): steps 4, 5 and 6 are the model's.
    issue = snap("Add a way to name a sub-mesh", "### 🚀 The feature, motivation and pitch\n\nPlease add a "
                 "`name=` to DeviceMesh slicing so logs can tell sub-meshes apart.")
    take, why = uncertain_steps(issue, b, plan_issue(issue, b), settings)
    assert {4, 5, 6} <= take and any(w.startswith("a request (") for w in why)
    take, _ = uncertain_steps(issue, b, plan_issue(issue, b), dataclasses.replace(settings, model_decides=(4,)))
    assert 5 not in take and 4 in take
    # Not asked at all: nothing is the model's.
    plain = snap("DDP find_unused_parameters raises", "```\nRuntimeError: Expected to have finished reduction in "
                 "the prior iteration\n```\n" + SCRIPT)
    assert uncertain_steps(plain, b, plan_issue(plain, b), settings) == (frozenset(), ())


PLAIN = ("DDP find_unused_parameters raises", "```\nRuntimeError: Expected to have finished reduction in the prior "
         "iteration\n```\n" + SCRIPT)
AWAY = ("Training loss is NaN with AMP on my GPU", ("A single GPU, no distributed code at all: plain torch.nn with "
                                                   "torch.cuda.amp. CUDA out of memory after a while as well."))


def test_by_default_the_model_reads_steps_4_and_5_of_every_issue_on_which_they_run():
    b = bundle()
    settings = HybridSettings.from_rubric(b.rubric)
    # A plain bug report the gate would not ask about: the model still reads its type and possible high priority.
    issue = snap(*PLAIN)
    take, why = uncertain_steps(issue, b, plan_issue(issue, b), settings)
    assert take == {4, 5} and why == ("steps 4 and 5 run on this issue: the model reads them",)
    # Other triggers still say which of steps 1-3 and 6 the model decides.
    request = snap("Add a way to name a sub-mesh", "### 🚀 The feature, motivation and pitch\n\nPlease add a "
                   "`name=` to DeviceMesh slicing so logs can tell sub-meshes apart.")
    take, why = uncertain_steps(request, b, plan_issue(request, b), settings)
    assert {4, 5, 6} <= take and why[0].startswith("steps 4 and 5 run") and any("a request (" in w for w in why)
    # An issue the rubric sends away, with nothing pulling the other way: steps 4 and 5 do not run, nothing is asked.
    away = snap(*AWAY)
    plan = plan_issue(away, b)
    assert plan.step(1).decision == "not_distributed" and plan.step(4) is None
    assert uncertain_steps(away, b, plan, settings) == (frozenset(), ())


class Unread:
    """A stand-in for the rubric's analysis carrying an `unread` note (what the rubric could not read), over the
    real analysis of the issue."""

    def __init__(self, analysis, unread):
        self._analysis, self.unread = analysis, unread

    def __getattr__(self, name):
        return getattr(self._analysis, name)


@pytest.mark.parametrize("note", ["prose in CJK", ("a log with no prose", "a one-line body"), ["a bot's template"]])
def test_an_issue_the_rubric_could_not_read_is_asked_whatever_the_gate(note):
    from triage.core import steps
    from triage.planners.hybrid import unread_parts

    b = bundle()
    for title, body in (PLAIN, AWAY):
        issue = snap(title, body)
        plan = plan_issue(issue, b)
        analysis = steps.analyse(issue, b.rubric, b.templates.names)
        assert uncertain_steps(issue, b, plan, gated(b), analysis=analysis)[0] == set()  # the gate alone: no
        take, why = uncertain_steps(issue, b, plan, gated(b), analysis=Unread(analysis, note))
        parts = unread_parts(Unread(analysis, note))
        assert parts and why[-1] == f"the rubric could not read the issue ({'; '.join(parts)})"
        assert {4, 5, 6} <= take
        # Sent away by a rubric that could not read it: whether it is the queue's is the model's too.
        assert (1 in take) == (plan.step(1).decision == "not_distributed")


def test_what_counts_as_an_unread_note():
    from triage.planners.hybrid import unread_parts

    class Analysis:
        pass

    a = Analysis()
    assert unread_parts(a) == ()  # an analysis without the note: the rubric read it
    for note, parts in ((None, ()), ("", ()), ((), ()), ("prose in Cyrillic", ("prose in Cyrillic",)),
                        (["a log only", ""], ("a log only",))):
        a.unread = note
        assert unread_parts(a) == parts


def test_request_evidence_below_the_threshold_asks_when_configured():
    b = bundle()
    issue = snap("FSDP2 summon_full_params with writeback", "We should be able to write back from rank 0 only.\n"
                 + SCRIPT)
    plan = plan_issue(issue, b)
    assert not plan.step(4).labels and any(e.points > 0 for e in plan.step(4).evidence)
    settings = dataclasses.replace(step5_only(b), on_request_evidence=True)
    take, why = uncertain_steps(issue, b, plan, settings)
    assert 4 in take and any("request evidence below the threshold" in w for w in why)


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


def test_every_flag_the_rubric_raises_is_put_to_the_model_unless_configured_off():
    issue = ("all_reduce never returns on two nodes", "Rank 1 waits in the collective.\n" + SCRIPT)
    plan, five, why = asked(*issue)
    assert plan.outcome == "high_priority" and five and "confirm the rubric's high-priority flag" in why
    base = step5_only(bundle())
    quiet = dataclasses.replace(base, high_priority=dataclasses.replace(base.high_priority, confirm_flags=False))
    _, five, _ = asked(*issue, settings=quiet)
    assert not five


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
    settings = gated(b)
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
