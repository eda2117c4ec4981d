"""Step 4, type labels, from the procedure's definitions: first "is it a request at all?", then feature only for
wholly new functionality and enhancement for what improves something that works (with `module: performance`
when it is about speed or memory). Bug reports, questions and CI/test reports get no type label.

Every issue here is written by hand for the behaviour it pins (nothing is copied from the dev set). The known
failure patterns of the earlier rubric each have a test: a title beginning "Add"/"Support" that improves an
existing API is an enhancement, not a feature; "regression" in an RFC's prose does not flag it; a disabled-test
report is neither typed nor flagged.
"""

from __future__ import annotations

import pytest

from engine_helpers import MARKER, REPRO, REVIEW, fenced, plan_for

FEATURE, ENHANCEMENT, PERF = "feature", "enhancement", "module: performance"
PITCH = "### 🚀 The feature, motivation and pitch\n\n"


def types(plan) -> set[str]:
    return {l for l in plan.add_labels if l in (FEATURE, ENHANCEMENT, PERF)}


ENHANCEMENTS = {
    # "Add ..." on an existing API: a new option, not new functionality.
    "add-option": ("Add a timeout argument to DeviceMesh slicing",
                   PITCH + "Slicing a DeviceMesh currently blocks without limit. We should add an option to "
                   "bound the wait."),
    "support-existing-api": ("Support uneven shards in FSDP state_dict",
                             PITCH + "FSDP already saves even shards; it would be nice to support uneven ones too."),
    "better-message": ("Better error message when TCPStore.get times out",
                       "The current error message only says it timed out; it should be clearer and name the key."),
    "change-default": ("[RFC] FSDP should make limit_all_gathers default to True",
                       PITCH + "Both settings work; the default should change so users do not tune it."),
    "missing-sharding-strategy": ("[DTensor] Operator aten.cumsum.default does not have a sharding strategy registered",
                                  PITCH + "Calling cumsum on a sharded DTensor raises; please add a strategy."),
}


@pytest.mark.parametrize("case", sorted(ENHANCEMENTS))
def test_improving_what_exists_is_an_enhancement(case):
    plan = plan_for(*ENHANCEMENTS[case])
    assert ENHANCEMENT in plan.add_labels and FEATURE not in plan.add_labels, plan.step(4).reason
    assert plan.step(4).reason.startswith("step 4: enhancement")
    assert REPRO not in plan.add_labels  # step 6: a request needs no reproduction


def test_performance_enhancement_also_gets_module_performance():
    plan = plan_for("Reduce all_gather overhead in FSDP prefetching",
                    PITCH + "FSDP already prefetches; the extra copies slow down training throughput noticeably. "
                    "We should reuse the buffers to make it faster.")
    assert types(plan) == {ENHANCEMENT, PERF}
    assert "performance:" in plan.step(4).reason


def test_non_performance_enhancement_has_no_performance_label():
    plan = plan_for(*ENHANCEMENTS["better-message"])
    assert types(plan) == {ENHANCEMENT}


FEATURES = {
    "new-platform": ("[RFC] Add Windows support to torch.distributed elastic",
                     PITCH + "torch.distributed.elastic cannot run on Windows at all; this proposes a first backend."),
    "new-backend": ("Intel GPU collectives backend",
                    PITCH + "This proposes a new distributed backend for XPU devices, introducing a backend on top of "
                    "oneCCL."),
    "stated-absent": ("Add object-aware scatter for heterogeneous ranks",
                      PITCH + "Nothing like this exists today: ranks cannot exchange arbitrary Python objects of "
                      "different sizes."),
}


@pytest.mark.parametrize("case", sorted(FEATURES))
def test_wholly_new_functionality_is_a_feature(case):
    plan = plan_for(*FEATURES[case])
    assert FEATURE in plan.add_labels and ENHANCEMENT not in plan.add_labels, plan.step(4).reason
    assert plan.step(4).reason.startswith("step 4: feature request, wholly new")
    assert PERF not in plan.add_labels


NOT_REQUESTS = {
    "bug-report": ("FSDP mixed precision gives nan loss",
                   "### 🐛 Describe the bug\n\nThe loss becomes nan after a few steps.\n"
                   "```\nRuntimeError: expected scalar type Float\n```"),
    # A "Support ..." title over a plain malfunction with a traceback is still a bug report.
    "support-title-bug": ("Support for bf16 in DDP fails with an error",
                          "### 🐛 Describe the bug\n\n```\nTypeError: unsupported dtype\n```\n"
                          + fenced("model = DDP(m)")),
    "disabled-test": ("DISABLED test_fsdp_add_option (__main__.TestFSDPMisc)",
                      "Platforms: linux\n\nThis test was disabled because it is failing in CI. Please add a fix."),
    "flaky-test": ("test_ddp_support_uneven_inputs is flaky",
                   "It fails about one run in fifty on the CUDA 12 shard."),
    "question": ("How do I add gradient clipping to FSDP?",
                 "Is there a way to clip gradients when parameters are sharded?"),
}


@pytest.mark.parametrize("case", sorted(NOT_REQUESTS))
def test_bugs_questions_and_test_reports_get_no_type(case):
    plan = plan_for(*NOT_REQUESTS[case])
    assert not types(plan), plan.step(4).reason
    assert plan.step(4).decision == "none"


def test_disabled_test_report_is_not_flagged_high_priority():
    plan = plan_for(*NOT_REQUESTS["disabled-test"])
    assert plan.outcome != "high_priority" and not (REVIEW in plan.add_labels and MARKER not in plan.add_labels)


def test_regression_in_rfc_prose_is_an_enhancement_not_a_flag():
    plan = plan_for("[RFC] Unify bucket sizing across DDP and FSDP",
                    PITCH + "Today the two wrappers size buckets differently, which caused a throughput regression "
                    "for some users; we should unify them.")
    assert ENHANCEMENT in plan.add_labels
    assert plan.outcome != "high_priority"


def test_bug_report_reason_is_plain():
    plan = plan_for("FSDP mixed precision with bf16 on 8 GPUs", "Loss curve attached, bf16 params and fp32 reduce.")
    assert plan.step(4).reason == "step 4: not a request, no type label"  # nothing weighed either way
    reported = plan_for(*NOT_REQUESTS["bug-report"])
    assert reported.step(4).reason.startswith("step 4: not a request (score ")  # what weighed is shown
    assert "req-vs-" in reported.step(4).reason
