"""Step 5, possible high priority: each criterion of the procedure on its own evidence, and the counter-evidence.

Every issue here is written by hand for the behaviour it pins (nothing is copied from the dev set). A criterion
must be met where such a report carries it (the title, an error line, a version comparison, a plain statement of
wrong results), not by a word anywhere in prose; questions, requests, RFCs and test-infrastructure reports are
never flagged. The reason names the criterion met, the score is kept in the plan, and the threshold is the
rubric's: moving it moves the decision.
"""

from __future__ import annotations

import pytest
import yaml

from engine_helpers import HIGH, MARKER, PAR, REVIEW, ROOT, fenced, plan_for, snap
from triage.config.bundle import load_bundle
from triage.planners import plan_issue

RUBRIC = ROOT / "queues" / "distributed" / "rubric.yaml"


def flagged(plan) -> bool:
    return plan.outcome == "high_priority" and REVIEW in plan.add_labels and MARKER not in plan.add_labels


def step5(plan):
    return plan.step(5)


# One issue per criterion, each carrying its evidence where such a report carries it.
MEETS = {
    "crash": ("NCCL all_reduce dies on 8 GPUs",
              "Training with DDP dies after a few steps.\n" + fenced("model = DDP(net)\nloss.backward()")
              + "\n```\nSegmentation fault (core dumped)\n```"),
    "silent_correctness": ("all_gather returns wrong results for bf16 tensors",
                           "The gathered values differ from the inputs on rank 1; no error is raised.\n"
                           + fenced("dist.all_gather(out, t)")),
    "regression": ("FSDP state_dict fails after upgrade",
                   "This worked fine in 2.4 and fails since 2.5 with the same script.\n" + fenced("model = FSDP(m)")),
    "multinode_hang": ("all_reduce hangs with NCCL across two nodes",
                       "Both ranks block forever in the first collective.\n" + fenced("dist.all_reduce(t)")),
    "checkpoint_corruption": ("DCP checkpoint corrupted after async_save",
                              "After dcp.async_save the checkpoint on disk is corrupted and cannot be loaded.\n"
                              + fenced("dcp.async_save(sd, checkpoint_id=p)")),
    "internal_assert": ("barrier fails",
                        "```\nRuntimeError: t.is_cuda() INTERNAL ASSERT FAILED at "
                        "\"torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp\":123\n```\n" + fenced("dist.barrier()")),
    "many_users": ("DDP broken for many users on the release candidate",
                   "This is a release blocker: DDP training stops at the first step for many users.\n"
                   + fenced("model = DDP(m)")),
}


@pytest.mark.parametrize("criterion", sorted(MEETS))
def test_each_criterion_flags_and_the_reason_names_it(criterion):
    plan = plan_for(*MEETS[criterion])
    assert flagged(plan), plan.reasons
    assert HIGH not in plan.add_labels  # never added directly: a human decides
    reason = step5(plan).reason
    assert reason.startswith(f"step 5: possibly high priority — {criterion} ")
    assert plan.high_priority_score is not None and plan.high_priority_score >= 3
    kept = [s["score"] for s in plan.to_dict()["steps"] if s["step"] == 5]
    assert kept == [round(plan.high_priority_score, 3)]  # the score travels with the plan (eval sweeps it)


# The same words where they are not evidence of the criterion.
NOT_EVIDENCE = {
    # "crash" in the title for an ordinary Python exception with a clear message.
    "crash-word-python-exception": ("FSDP init can crash with tied weights",
                                    "Wrapping tied modules separately fails.\n```\nValueError: expected all "
                                    "parameters on one device\n```\n" + fenced("model = FSDP(m)")),
    # "regression" in an RFC's prose, with no version boundary.
    "regression-in-rfc": ("[RFC] A loss-regression test harness for FSDP",
                          "### 🚀 The feature, motivation and pitch\n\nWe should add a harness that catches any "
                          "numerical regression in FSDP training loops before release."),
    # A disabled test is a CI report, whatever it says.
    "disabled-test": ("DISABLED test_all_reduce_hang (__main__.ProcessGroupNCCLTest)",
                      "Platforms: linux\n\nThis test was disabled because it is failing in CI: it hangs "
                      "across nodes and then a segmentation fault occurs."),
    # A question, even about a hang.
    "question": ("How to avoid a hang in init_process_group with NCCL?",
                 "Is there a recommended way to configure NCCL so that the process group does not hang?"),
    # A hang mentioned only in prose, with nothing in the title saying what hangs.
    "hang-in-prose-only": ("Loss curve differs between runs",
                           "I thought it might hang at some point but it never did.\n" + fenced("model = DDP(m)")),
    # An internal assert outside c10d / process-group code.
    "internal-assert-elsewhere": ("profiler decorator fails under RPC",
                                  "```\nRuntimeError: INTERNAL ASSERT FAILED at "
                                  "\"torch/csrc/autograd/profiler.cpp\":50\n```\n" + fenced("rpc.rpc_sync(w, f)")),
    # A version named, but nothing says it worked before.
    "version-without-comparison": ("DDP fails on 2.5 with find_unused_parameters",
                                   "On torch 2.5 DDP raises when some parameters are unused.\n"
                                   + fenced("model = DDP(m, find_unused_parameters=True)")),
}


@pytest.mark.parametrize("case", sorted(NOT_EVIDENCE))
def test_words_without_evidence_or_with_counter_evidence_do_not_flag(case):
    plan = plan_for(*NOT_EVIDENCE[case])
    assert not flagged(plan), step5(plan).reason
    assert REVIEW not in plan.add_labels or plan.outcome != "high_priority"


def test_counter_evidence_is_named_and_lowers_the_score():
    plain = plan_for("all_reduce hangs with NCCL on 4 GPUs", "Both ranks block in the first collective.")
    asked = plan_for("Why does all_reduce hang with NCCL on 4 GPUs?", "Both ranks block in the first collective.")
    assert flagged(plain) and not flagged(asked)
    assert asked.high_priority_score < plain.high_priority_score
    assert "hp-vs-question" in step5(asked).reason and "multinode_hang" in step5(asked).reason


def test_a_request_is_never_high_priority_even_with_criterion_words():
    plan = plan_for("Add a deadlock detector to the DDP reducer",
                    "### 🚀 The feature, motivation and pitch\n\nWhen a collective hangs across nodes, a "
                    "detector should name the rank that never joined. We should add an option for it.")
    assert "enhancement" in plan.add_labels or "feature" in plan.add_labels
    assert not flagged(plan)
    assert "request" in step5(plan).reason


def test_plain_bug_report_has_no_criterion():
    plan = plan_for("FSDP mixed precision gives nan loss", "The loss becomes nan after a few steps with bf16.")
    assert not flagged(plan)
    assert step5(plan).reason == "step 5: no high-priority criterion met"
    assert plan.high_priority_score == 0


def _bundle_with(tmp_path, mutate):
    data = yaml.safe_load(RUBRIC.read_text(encoding="utf-8"))
    mutate(data["high_priority"])
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_bundle(path)


def test_the_threshold_is_the_rubrics_operating_point(tmp_path):
    issue = snap(*MEETS["multinode_hang"])
    default = plan_issue(issue, load_bundle())
    assert flagged(default)
    score = default.high_priority_score
    strict = plan_issue(issue, _bundle_with(tmp_path, lambda hp: hp.update(threshold=score + 0.5)))
    assert not flagged(strict)
    assert strict.high_priority_score == score  # the score is the issue's; only the decision moved
    assert f"< {score + 0.5:g}" in strict.step(5).reason


def test_a_criterion_is_rubric_data(tmp_path):
    """A fork adds a criterion of its own: it flags, and the reason names it."""
    def add(hp):
        hp["criteria"]["optimizer_state_lost"] = {
            "description": "Optimizer state silently dropped on resume.",
            "signals": [{"id": "hp-test-optim-lost", "match": r"\boptimizer state (?:is )?lost\b", "weight": 1,
                         "in": ["title"]}],
        }
    bundle = _bundle_with(tmp_path, add)
    plan = plan_issue(snap("FSDP: optimizer state is lost", "Adam starts from zero."),
                      bundle)
    assert flagged(plan)
    assert plan.step(5).reason.startswith("step 5: possibly high priority — optimizer_state_lost ")


def _optimizer_lost(hp, frame_weight=-3):
    """A fork's criterion read two ways (a signal, a frame), and a frame that denies it."""
    hp["slots"]["lost_state"] = {"match": r"(?:^|[^a-z])(optimizer state (?:is )?lost)(?:[^a-z]|$)",
                                 "examples": {"match": ["the optimizer state is lost"]}}
    hp["slots"]["nothing_lost"] = {"match": r"(?:^|[^a-z])(nothing (?:is |was )?lost)(?:[^a-z]|$)",
                                   "examples": {"match": ["nothing was lost"]}}
    hp["criteria"]["optimizer_state_lost"] = {
        "signals": [{"id": "hp-test-optim-lost", "match": r"\boptimizer state (?:is )?lost\b", "weight": 3,
                     "in": ["prose", "comment"]}],
        "frames": [{"id": "hp-test-nothing-lost", "all": ["nothing_lost"], "weight": frame_weight, "in": ["prose"],
                    "examples": {"match": ["Nothing was lost."]}}],
    }


def test_a_frame_against_a_criterion_counts_however_its_signals_read_it(tmp_path):
    """Counter-evidence of one reading (a frame: "nothing was lost") lowers what the other (a signal) found."""
    issue = snap("FSDP reshard question", "Is the optimizer state lost by a reshard? I checked: nothing was lost.")
    bundle = _bundle_with(tmp_path, _optimizer_lost)
    plan = plan_issue(issue, bundle)
    assert not flagged(plan)
    assert plan.high_priority_score == 0
    # control: without the denial, the signal alone flags
    plan = plan_issue(snap("FSDP reshard", "After a reshard the optimizer state is lost."), bundle)
    assert flagged(plan) and plan.step(5).reason.startswith("step 5: possibly high priority — optimizer_state_lost ")


def test_step_5_weighs_locations_its_own_way(tmp_path):
    """`high_priority.locations` overrides the rubric's weights for step 5 alone: a fact told in a comment."""
    issue = snap("FSDP reshard", "Resharding the model onto a smaller mesh.",
                 comments=["Update: after the reshard the optimizer state is lost."])
    (tmp_path / "plain").mkdir(), (tmp_path / "weighted").mkdir()  # a bundle is cached by its path
    plain = plan_issue(issue, _bundle_with(tmp_path / "plain",
                                           lambda hp: (_optimizer_lost(hp), hp.pop("locations", None))))
    assert not flagged(plain)  # 3 x the comment's 0.6
    weighted = plan_issue(issue, _bundle_with(tmp_path / "weighted",
                                              lambda hp: (_optimizer_lost(hp), hp.update(locations={"comment": 1.0}))))
    assert flagged(weighted)
    assert weighted.step(2).reason == plain.step(2).reason  # the other steps keep the rubric's weights


def test_counter_evidence_weights_must_be_negative(tmp_path):
    from triage.config.bundle import ConfigError

    def positive(hp):
        hp["counter_evidence"]["signals"][0]["weight"] = 2
    with pytest.raises(ConfigError) as info:
        _bundle_with(tmp_path, positive)
    assert "counter_evidence" in str(info.value) and "\n" not in str(info.value)


def test_high_priority_still_routes_and_classifies():
    plan = plan_for(*MEETS["regression"])
    assert flagged(plan)
    assert PAR in plan.add_labels and "module: fsdp" in plan.add_labels


# --- the discipline against fitting (issue 10) ---------------------------------------------------------------

# Signals of steps 4 and 5 that fire on exactly one dev record, each kept for a reason that is about the
# procedure, not about that record. Any other signal firing on one record only must be removed or justified here.
ONE_RECORD_JUSTIFIED = {
    "req-vs-question": "the procedure: a question gets no type label; the dev set has one question-titled issue",
    "hp-vs-question": "the procedure: a question is not high priority (it costs recall on that one dev record)",
    "hp-others-hit-it": "the procedure's 'many users affected': another user's 'same here' in a comment; the dev "
                        "set's comments are excerpts (one confirms), and tests/test_said_by.py holds it",
}


def _dev_rows():
    import os
    from pathlib import Path

    from triage.evaluation.dataset import read_dataset

    shared = Path(os.environ.get("PTD_SHARED_DIR") or ROOT.parent / "shared")
    path = shared / "eval" / "dev.jsonl"
    if not path.is_file():
        pytest.skip("dev set absent (fresh clone)")
    return read_dataset(path)


def judgement_signals(rubric):
    """Every signal of step 4 (types) and step 5 (criteria and counter-evidence)."""
    for gate in (rubric.request, rubric.feature, rubric.enhancement, rubric.performance):
        yield from gate.signals
    for criterion in rubric.high_priority.criteria:
        yield from criterion.signals
    yield from rubric.high_priority.counter


def test_no_judgement_signal_fires_on_a_single_dev_record_unjustified():
    from triage.core import steps
    from triage.text.matching import match_signal

    bundle = load_bundle()
    rubric = bundle.rubric
    signals = list(judgement_signals(rubric))
    fires = {s.id: 0 for s in signals}
    for row in _dev_rows():
        analysis = steps.analyse(row.snapshot, rubric, bundle.templates.names)
        for signal in signals:
            fires[signal.id] += bool(match_signal(signal, analysis.doc, rubric.locations))
    single = {name for name, count in fires.items() if count == 1}
    unjustified = sorted(single - set(ONE_RECORD_JUSTIFIED))
    assert not unjustified, f"signals firing on one dev record only (remove, or justify above): {unjustified}"
    assert sum(fires.values()) > 100  # the count really ran over the dev set
