"""The model's prompt is faithful to the procedure (issue 18): step 5's seven criteria as the seed states them
(a flag asks a person to look; no "security" criterion; no "many users" narrowing), full route descriptions, the
routing edge cases and mislabel traps, the existing-sub-oncall rule, what to answer after not_distributed, rules
for truncated bodies and non-bug reports, the rubric's hints inside the fence; the schema's answers mean what the
procedure means; and the prompt is data per queue (pt2 has its own)."""
from __future__ import annotations

import re

import pytest
from llm_helpers import issue

from triage.config.bundle import load_bundle
from triage.planners.model.prompt import prompt_path, render
from triage.planners.model.schema import DECISIONS, REMOVAL_REASONS, criteria_names, plan_schema

# Step 5 of the procedure, verbatim (the seed: pytorch/pytorch .claude/skills/distributed-triage/SKILL.md, the
# project's specification; copied here so the test stands alone).
SEED_CRITERIA = (
    "Crash / segfault / illegal memory access in distributed code",
    "Silent correctness issue (wrong results from collectives, incorrect gradient sync)",
    "Regression from a prior version (e.g., FSDP worked in 2.x, broken in 2.y)",
    "Hang affecting multi-node training (NCCL timeout, deadlock in collectives)",
    "Data corruption during distributed checkpointing",
    "Internal assert failure in c10d or process group code",
    "Many users affected or core distributed component impacted",
)


@pytest.fixture(scope="module")
def prompt():
    return render(issue(body="It crashes with a segfault.\n" + "x" * 20_000), load_bundle(),
                  ["step 5: flag (matched 'segfault')", "step 2: parallelisms (matched 'fully_shard')"])


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_step5_states_the_seven_criteria_exactly_and_nothing_else(prompt):
    system = _flat(prompt.system)
    for criterion in SEED_CRITERIA:
        assert criterion in system, criterion
    assert "security" not in system.lower()
    assert not re.search(r"hitting many users|crash(es)? or hangs? (hitting|affecting) many", system, re.I)
    assert "not a verdict of severity" in system.lower() and "asks a person to look" in system.lower()
    assert "one report does not rule it out" in system.lower()  # the reading rule for "many users"
    # The procedure says "be conservative — when in doubt, add triage review"; no reading of a criterion narrower
    # than its words (a Python exception that kills a job is a crash in the reporter's words).
    assert "when in doubt whether a criterion is met, flag" in system.lower()
    assert not re.search(r"is not a crash|not shown to hit|a single user's setup", system, re.I)


def test_every_criterion_the_schema_offers_is_described(prompt):
    names = criteria_names(load_bundle())
    assert len(names) == 7
    for name in names:
        assert f"`{name}`" in prompt.system


def test_routes_are_described_in_full_with_edge_cases_and_traps(prompt):
    system = _flat(prompt.system)
    infra = system[system.index("`infra`"):]
    for word in ("process groups", "collectives", "NCCL, Gloo, MPI", "stores", "torchrun", "RPC",
                 "distributed tools", "DeviceMesh", "symmetric memory"):
        assert word in infra, word
    for case in ("NCCL timeout or watchdog error during FSDP", "ShardedStateDictConfig", "torchrun with DDP",
                 "init_process_group: infra", "checkpointing if it is about saving or loading"):
        assert case in system, case
    for trap in ("undefined symbol: ncclAlltoAll", "torch.nn.DataParallel", "root cause", "`module: dtensor`",
                 "Activation checkpointing (recomputation) is not distributed checkpointing"):
        assert trap in system, trap
    assert "EXISTING SUB-ONCALL" in system and "never another one" in system


def test_rules_for_later_steps_truncation_and_non_bug_reports(prompt):
    system = _flat(prompt.system)
    assert "After `not_distributed` the later steps are not used" in system
    assert "[... clipped, N more characters]" in system and "[... clipped," in prompt.user  # the body was clipped
    for kind in ("documentation", "usage question", "DISABLED or flaky-test"):
        assert kind in system, kind
    assert "`not_applicable`" in system


def test_hints_sit_inside_the_fence(prompt):
    fence = prompt.fence
    inside = prompt.user.split(f"<<<{fence}", 1)[1].split(f"{fence}>>>", 1)[0]
    assert "matched 'segfault'" in inside and "matched 'fully_shard'" in inside
    outside = prompt.user.replace(inside, "")
    assert "segfault" not in outside and "fully_shard" not in outside


def test_the_schema_means_what_the_procedure_means():
    schema = plan_schema(load_bundle())
    modules = schema["properties"]["modules"]["properties"]["decision"]["enum"]
    assert "not_applicable" in modules and "low" in modules  # no forced "low" for routes that do not classify
    high = schema["properties"]["high_priority"]["properties"]
    assert high["criteria"]["items"]["enum"] == criteria_names(load_bundle())
    assert high["removal_reason"]["enum"] == list(REMOVAL_REASONS) and REMOVAL_REASONS[0] == "none"
    assert set(DECISIONS["high_priority"]) == {"flag", "no_flag"}


def test_each_queue_has_its_own_prompt():
    pt2 = load_bundle(queue="pt2")
    assert prompt_path(pt2).parent.name == "pt2" and prompt_path(load_bundle()).parent.name == "distributed"
    rendered = render(issue(labels=("oncall: pt2",)), pt2, [])
    assert "`oncall: pt2`" in rendered.system and "distributed training" not in rendered.system
    for name in criteria_names(pt2):
        assert f"`{name}`" in rendered.system
    for route in pt2.rubric.routes:
        assert f"`{route}`" in rendered.system
