"""The procedure is written once: the rubric and a model that agrees with the rubric's judgements reach the same
plan (labels, comment template and body, outcome, steps' decisions), for every outcome the procedure has; the
model's answer supplies decisions and never the sequencing. The model answers through a loopback OpenAI stand-in."""
from __future__ import annotations

import pytest
from llm_helpers import client_for, issue

from triage.config.bundle import load_bundle
from triage.core import procedure
from triage.core.outcome import OutcomeFacts, classification, derive_outcome
from triage.core.plan import Plan
from triage.core.procedure import Judgement
from triage.core.vocab import SKIPPED, Confidence, Flag, Outcome, Reproduction, Role, TypeKind
from triage.planners import plan_issue
from triage.planners.llm import LLMPlanner

Q = "oncall: distributed"
CASES = {
    # A slowdown with no script: the performance request for a reproduction, whoever judged it missing.
    "slowdown": (Outcome.CLASSIFIED, dict(
        title="FSDP training got slower: step time doubled",
        body="Our FSDP job on 16 GPUs used to run at 300ms per step, now 600ms. Throughput dropped, GPU "
             "utilization is low.")),
    "not distributed": (Outcome.NOT_IN_QUEUE, dict(
        title="ImportError: undefined symbol when importing torch",
        body="After pip install, `import torch` fails with ImportError: undefined symbol: ncclCommRegister in "
             "libtorch_cuda.so")),
    "routed": (Outcome.ROUTED, dict(
        title="torch.distributed.checkpoint save fails with DTensor state dict",
        body="dcp.save(state_dict) raises KeyError in the planner for DTensor shards")),
    "classified": (Outcome.CLASSIFIED, dict(
        title="FSDP2 fully_shard raises TypeError with MixedPrecisionPolicy",
        body="```python\nmodel = fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))\n"
             "```\nTypeError: unexpected keyword")),
    "request": (Outcome.CLASSIFIED, dict(
        title="[Feature request] Support ZeRO++ style quantized all_gather in FSDP2",
        body="It would be nice to add a new option to fully_shard to quantize all_gather. Proposal: add a new API.")),
    "needs review": (Outcome.NEEDS_REVIEW, dict(
        title="Something is wrong with my distributed job",
        body="It does not work on multiple machines, please help")),
    "high priority": (Outcome.HIGH_PRIORITY, dict(
        title="DDP silently produces wrong gradients (silent correctness) with NCCL",
        body="Gradients are silently wrong after allreduce, loss diverges; regression from 2.4. "
             "```python\nddp = DDP(model)\n```")),
    "already triaged": (Outcome.ALREADY_TRIAGED, dict(
        title="FSDP2 hangs", body="x", labels=(Q, "module: fsdp", "oncall: distributed parallelisms"))),
    "nothing to do": (Outcome.NOTHING_TO_DO, dict(title="FSDP2 hangs", body="x", labels=(Q, "ptd-bot-triaged"))),
}


@pytest.fixture(scope="module")
def bundle():
    return load_bundle()


def agreeing_answer(plan, bundle) -> dict:
    """A model answer that makes every judgement the rubric made (where the rubric skipped a step, a neutral one)."""
    s = {r.step: r for r in plan.steps}

    def said(step, default):
        r = s.get(step)
        return default if r is None or r.skipped else str(r.decision)

    def part(decision, **extra):
        return {"decision": decision, "reason": "agrees with the rubric", "quote": "", **extra}

    modules = s.get(3)
    types = s.get(4)
    return {
        "not_distributed": part(said(1, "distributed")),
        "route": part(said(2, next(iter(bundle.rubric.routes)))),
        "modules": part(said(3, "not_applicable"),
                        labels=list(modules.labels) if modules and said(3, "low") != "low" else []),
        "type": part(said(4, "none"), performance=bool(types and bundle.labels.performance in types.labels)),
        "high_priority": part(said(5, "no_flag"), criteria=list(s[5].criteria) if 5 in s else [],
                              no_flag_reason="none" if said(5, "no_flag") == "flag" else "no_criterion_met"),
        "reproduction": part(Reproduction.NEEDS if said(6, "") == Reproduction.NEEDS else Reproduction.HAS),
    }


def what_is_written(plan) -> dict:
    """The plan without who said it and why: labels, comment, outcome, route, modules, confidence, decisions."""
    out = plan.to_dict()
    for key in ("reasons", "planner", "elapsed_ms", "usage"):
        out.pop(key, None)
    out["steps"] = [(s["step"], s["decision"], s["labels"], s.get("criteria", [])) for s in out["steps"]]
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_rubric_and_an_agreeing_model_reach_the_same_plan(case, bundle, fake_openai):
    outcome, fields = CASES[case]
    snap = issue(**fields)
    by_rubric = plan_issue(snap, bundle)
    assert by_rubric.outcome == outcome
    fake_openai.script(agreeing_answer(by_rubric, bundle))
    by_model = plan_issue(snap, bundle, planner=LLMPlanner(client_for(fake_openai)))
    assert what_is_written(by_model) == what_is_written(by_rubric)
    asked = outcome not in (Outcome.ALREADY_TRIAGED, Outcome.NOTHING_TO_DO)
    assert len(fake_openai.calls) == (1 if asked else 0)
    if asked:  # the model's plan, not a fallback to the rubric's
        assert {s.by for s in by_model.steps if s.step and not s.skipped} <= {"llm"}
        assert by_model.usage and "fallback" not in by_model.usage


def test_a_slowdown_judged_by_the_model_gets_the_performance_request(bundle, fake_openai):
    snap = issue(**CASES["slowdown"][1])
    by_rubric = plan_issue(snap, bundle)
    performance = bundle.step_templates["needs_reproduction_performance"]
    assert by_rubric.comment.template == performance
    fake_openai.script(agreeing_answer(by_rubric, bundle))
    by_model = plan_issue(snap, bundle, planner=LLMPlanner(client_for(fake_openai)))
    assert by_model.comment.template == performance
    assert by_model.comment.body == bundle.templates.render(performance, author=snap.author)
    assert by_model.step(6).decision == Reproduction.NEEDS and by_model.step(6).by == "llm"


@pytest.mark.parametrize("title, body, performance", [
    ("FSDP2 training crashes with illegal memory access after upgrade",
     "Since 2.5 my fully_shard training crashes with CUDA illegal memory access during backward.", False),
    ("DDP: segfault in memory allocator during all_reduce", "The job dies with SIGSEGV on rank 3.", False),
    ("FSDP2 uses much more memory than FSDP1 for the same model",
     "Peak memory per GPU went from 30 GB to 45 GB with fully_shard.", True),
    ("DTensor redistribute has higher memory usage than expected", "Allocations double on every redistribute.",
     True),
])
def test_the_performance_request_is_for_amounts_of_time_or_memory_not_for_memory_errors(bundle, title, body,
                                                                                          performance):
    """A crash that names memory ("illegal memory access") is not a performance report: asking its reporter for
    timings instead of the error output of every rank was the wrong template (seen in the step summary's picture)."""
    plan = plan_issue(issue(title=title, body=body), bundle)
    assert plan.step(6).decision == Reproduction.NEEDS
    wanted = bundle.step_templates["needs_reproduction_performance" if performance else "needs_reproduction"]
    assert plan.comment.template == wanted


def _judge(by="test", **decisions) -> dict[int, Judgement]:
    return {step: Judgement(d if isinstance(d, str) else d[0], f"step {step} by {by}", by,
                            labels=() if isinstance(d, str) else tuple(d[1]))
            for step, d in ((int(k[1:]), v) for k, v in decisions.items())}


def test_a_route_whose_team_triages_further_skips_its_steps_whoever_routes(bundle):
    snap = issue(**CASES["classified"][1])
    stops = bundle.rubric.stop_after[0]
    done = procedure.run(snap, bundle, _judge(s2=stops, s3=("high", ["module: fsdp"]), s6="needs_reproduction"))
    decisions = {r.step: r.decision for r in done.results}
    assert decisions[2] == stops and decisions[3] == SKIPPED and decisions[6] == SKIPPED
    plan = procedure.fold(Plan(issue=snap.number), done.results, bundle)
    assert plan.outcome == Outcome.ROUTED and plan.comment is None


def test_a_module_of_another_route_is_not_taken_and_the_issue_goes_to_review(bundle):
    snap = issue(**CASES["classified"][1])
    other = next(l for l in bundle.labels.with_role(Role.MODULE) if bundle.labels.route(l) != "parallelisms")
    done = procedure.run(snap, bundle, _judge(s2="parallelisms", s3=("high", [other])))
    step3 = done.results[3]
    assert step3.decision == Confidence.LOW and step3.labels == (bundle.labels.review,)
    assert procedure.fold(Plan(issue=1), done.results, bundle).outcome == Outcome.NEEDS_REVIEW


def test_a_flag_a_person_dismissed_is_not_raised_again_by_any_planner(bundle):
    from dataclasses import replace

    snap = replace(issue(**CASES["high priority"][1]), review_dismissed=True)
    by_rubric = procedure.run(snap, bundle).results[5]
    by_model = procedure.run(snap, bundle, _judge(s5="flag")).results[5]
    assert by_rubric.decision == by_model.decision == Flag.NO_FLAG
    assert by_model.labels == () and "not flagged again" in by_model.reason


def test_a_request_is_never_asked_for_a_reproduction_whoever_says_it_is_missing(bundle):
    snap = issue(**CASES["request"][1])
    done = procedure.run(snap, bundle, _judge(s4="feature", s6="needs_reproduction"))
    assert done.results[4].decision == TypeKind.FEATURE and done.results[6].decision == Reproduction.REQUEST
    assert done.results[6].comment is None


def test_the_analysis_a_planner_already_has_is_used_not_read_again(bundle, monkeypatch):
    snap = issue(**CASES["classified"][1])
    first = procedure.run(snap, bundle)
    from triage.core import steps

    monkeypatch.setattr(steps, "analyse", lambda *a, **k: pytest.fail("the issue was read a second time"))
    again = procedure.run(snap, bundle, _judge(s1="distributed"), analysis=first.analysis)
    assert again.analysis is first.analysis and again.results[2:] == first.results[2:]


def test_classified_by_a_person_is_one_rule(bundle):
    labels, rubric = bundle.labels, bundle.rubric
    assert classification([Q, "module: fsdp", "oncall: distributed parallelisms"], labels, rubric).complete
    assert not classification([Q, "module: fsdp"], labels, rubric).complete
    assert classification([Q, "module: fsdp"], labels, rubric).partial
    assert not classification([Q], labels, rubric).partial


@pytest.mark.parametrize("facts, outcome", [
    (OutcomeFacts(flagged=True, not_in_queue=True), Outcome.HIGH_PRIORITY),
    (OutcomeFacts(not_in_queue=True, classified_by_person=True), Outcome.NOT_IN_QUEUE),
    (OutcomeFacts(classified_by_person=True), Outcome.ALREADY_TRIAGED),
    (OutcomeFacts(routed=False, modules=True), Outcome.NEEDS_REVIEW),
    (OutcomeFacts(route_stops=True), Outcome.ROUTED),
    (OutcomeFacts(modules=True, review=True), Outcome.NEEDS_REVIEW),
    (OutcomeFacts(modules=False), Outcome.NEEDS_REVIEW),
    (OutcomeFacts(modules=True), Outcome.CLASSIFIED),
])
def test_the_outcome_is_derived_in_one_place(facts, outcome):
    assert derive_outcome(facts) is outcome
