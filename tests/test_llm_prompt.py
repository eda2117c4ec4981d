"""The model's prompt states the configured procedure (issue 28): one procedure text, rendered from the data the
rubric runs on (which routes stop, which steps run on every route, step 5's criteria and their descriptions, step
4's definitions, the reasons an issue is not flagged); each bundled queue's prompt and configuration say the same
thing; no sentence tells the model to skip a step the procedure runs; the system part is the same for every issue
(the fence and the issue are in the user part) and the user part carries the issue only, no rubric finding. Also
(issue 18): a flag asks a person to look, full route descriptions, the routing edge cases and mislabel traps, the
existing-sub-oncall rule, truncated bodies and non-bug reports; and the prompt is data per queue."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from llm_helpers import issue

from triage.config.bundle import load_bundle
from triage.planners.model.prompt import procedure_context, prompt_path, render, route_rule
from triage.planners.model.schema import DECISIONS, NO_FLAG_NONE, NO_FLAG_REASONS, NO_FLAG_VALUES, criteria_names, \
    no_flag_reasons, plan_schema

ROOT = Path(__file__).resolve().parents[1]
QUEUES = {"distributed": lambda: load_bundle(), "pt2": lambda: load_bundle(queue="pt2"),
          "storage": lambda: load_bundle(queue=ROOT / "examples" / "queues" / "storage")}


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def prompt():
    return render(issue(body="It crashes with a segfault.\n" + "x" * 20_000), load_bundle())


@pytest.mark.parametrize("queue", QUEUES)
def test_each_queue_prompt_says_what_its_configuration_says(queue):
    bundle = QUEUES[queue]()
    system = _flat(render(issue(), bundle).system)
    facts = procedure_context(bundle)
    assert _flat(facts["route_rule"]) in system
    for c in bundle.rubric.high_priority.criteria:  # step 5: every criterion, with the rubric's description
        assert f"`{c.name}`" in system and (not c.description or _flat(c.description) in system), c.name
    for kind in ("request", "feature", "enhancement", "performance"):  # step 4 in the configuration's words
        assert _flat(getattr(bundle.rubric, kind).description) in system, kind
    reasons = no_flag_reasons(bundle)  # the closed list a no_flag answers from, in the queue's words and order
    assert set(reasons) == set(NO_FLAG_REASONS)
    at = [system.index(f"`{name}`: {_flat(text)}") for name, text in reasons.items()]
    assert at == sorted(at), "the reasons are stated in the order the first that fits is taken"
    for route in bundle.rubric.routes:
        assert f"`{route}`" in system
    # Only step 1 stops the procedure for every later step; no route is said to skip a step the procedure runs.
    assert not re.search(r"no later steps|later steps are not used|triages? further \(no modules", system, re.I)
    assert len(re.findall(r"no later part is used|no later part", system)) <= 1


def test_the_route_rule_follows_stop_after_and_checks_on_every_route():
    rule = _flat(route_rule(["infra", "checkpointing"], [4, 5]))
    assert rule.startswith("On routes `infra` and `checkpointing` the sub-team triages further itself")
    assert "does not decide module labels (step 3) or a reproduction (step 6)" in rule
    assert "still checks the type (step 4) and possible high priority (step 5)" in rule
    assert "does not decide module labels (step 3) or the type (step 4) or possible high priority (step 5) or " \
           "a reproduction (step 6)" in route_rule(["infra"], []) and "still checks" not in route_rule(["infra"], [])
    assert route_rule([], [4, 5]) == "On every route the procedure runs every later step (3 to 6)."


def test_a_changed_configuration_changes_the_prompt_with_it():
    bundle = load_bundle()
    rubric = replace(bundle.rubric, stop_after=("infra",), checks_on_every_route=("high_priority",))
    system = _flat(render(issue(), replace(bundle, rubric=rubric)).system)
    assert "On route `infra` the sub-team triages further itself" in system
    assert "does not decide module labels (step 3) or the type (step 4) or a reproduction (step 6)" in system
    assert "still checks possible high priority (step 5) there" in system
    assert "`checkpointing` the sub-team" not in system


def test_the_distributed_prompt_keeps_high_priority_and_type_on_the_routes_that_stop(prompt):
    system = _flat(prompt.system)
    assert set(load_bundle().rubric.checks_on_every_route) == {"types", "high_priority"}
    assert ("On routes `infra` and `checkpointing` the sub-team triages further itself: the procedure does not "
            "decide module labels (step 3) or a reproduction (step 6) there, and it still checks the type (step 4) "
            "and possible high priority (step 5) there, as on every route.") in system
    assert "Answer every part anyway, each judged on the issue itself" in system


def test_step4_in_the_procedures_words(prompt):
    system = _flat(prompt.system)
    assert "`feature`: wholly new functionality that does not exist today in any form" in system
    assert "does what is asked exist today in PyTorch in any form" in system
    assert "Then it is an `enhancement` of that: a new option, argument or default on it, support for one more " \
           "case in it" in system
    assert "Otherwise it is a `feature`, a new entry point" in system
    # A workaround does not make it exist: what the reporter composes by hand from other APIs, their own kernel or
    # another library (a blind reader of an earlier prompt, told that "a manual workaround" counts as existing,
    # typed nearly every feature request as an enhancement); what PyTorch itself offers for other cases does.
    assert "what the reporter composes by hand from other APIs (a prefix sum from all_gather and cumsum), their " \
           "own kernel or extension, or another library does not make it exist" in system
    assert "It must exist for the case asked" not in system
    assert "manual workaround" not in system
    assert "a new option, default, message or speed-up of an existing thing is an `enhancement`" not in system
    for kind in ("usage question", "documentation problem", "DISABLED or flaky-test"):
        assert kind in system, kind


def test_step5_a_flag_asks_a_person_and_no_flag_gives_a_reason_and_a_quote(prompt):
    system = _flat(prompt.system)
    assert "security" not in system.lower()
    assert "not a verdict of severity" in system.lower() and "asks a person to look" in system.lower()
    assert "is met by one report on one setup: none needs many users" in system.lower()
    assert "when in doubt whether a criterion is met, or whose failure it is, flag" in system.lower()
    assert "Every `no_flag` gives its `no_flag_reason`, the first of these that fits, in this order" in system
    assert "a `quote` copied from the issue" in system
    assert f"A flag's no_flag_reason is `{NO_FLAG_NONE}`" in system


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
    for case in ("NCCL timeout or watchdog error during training with a parallelism", "ShardedStateDictConfig",
                 "torchrun with DDP",
                 "init_process_group: infra", "checkpointing if it is about saving or loading"):
        assert case in system, case
    for trap in ("undefined symbol: ncclAlltoAll", "torch.nn.DataParallel", "root cause", "`module: dtensor`",
                 "Activation checkpointing (recomputation) is not distributed checkpointing"):
        assert trap in system, trap
    assert "EXISTING SUB-ONCALL" in system and "never another one" in system


def test_truncation_and_what_to_answer_after_not_distributed(prompt):
    system = _flat(prompt.system)
    assert "after step 1 answers `not_distributed`, the procedure stops" in system
    assert "high_priority `no_flag` with no criteria and the no_flag_reason `not_distributed`" in system
    assert "[... clipped, N more characters]" in system and "[... clipped," in prompt.user  # the body was clipped
    assert "`not_applicable`" in system and "at most 3" in system  # the policy's module cap, stated


@pytest.mark.parametrize("queue", QUEUES)
def test_the_system_part_is_the_same_for_every_issue_and_the_fence_is_in_the_user_part(queue):
    bundle = QUEUES[queue]()
    one = render(issue(7, "DDP hangs", "all_reduce never returns"), bundle)
    two = render(issue(8, "FSDP2 loses grads", "```python\nfully_shard(m)\n```", labels=("oncall: distributed",
                                                                                           "module: fsdp")), bundle)
    assert one.system == two.system
    assert one.fence != two.fence and one.fence not in one.system
    assert f"<<<{one.fence}" in one.user and f"{one.fence}>>>" in one.user
    assert "#7" not in one.system and "DDP hangs" not in one.system


def test_the_user_part_carries_the_issue_only():
    bundle = load_bundle()
    snapshot = issue(body="It crashes with a segfault in all_reduce on 2 nodes.")
    user = render(snapshot, bundle).user
    assert "RUBRIC" not in user.upper() and "hint" not in user.lower() and "matched" not in user
    inside = user.split("<<<", 1)[1].split(">>>", 1)[0]
    assert "segfault in all_reduce" in inside
    outside = user.replace(inside, "")
    assert "segfault" not in outside


def test_the_schema_means_what_the_procedure_means():
    schema = plan_schema(load_bundle())
    modules = schema["properties"]["modules"]["properties"]["decision"]["enum"]
    assert "not_applicable" in modules and "low" in modules  # no forced "low" for routes that do not classify
    high = schema["properties"]["high_priority"]["properties"]
    assert high["criteria"]["items"]["enum"] == criteria_names(load_bundle())
    assert high["no_flag_reason"]["enum"] == list(NO_FLAG_VALUES) and NO_FLAG_VALUES[-1] == NO_FLAG_NONE
    for name, text in no_flag_reasons(load_bundle()).items():  # each value explained in the schema too
        assert f"{name}: {_flat(text)}" in high["no_flag_reason"]["description"]
    assert set(DECISIONS["high_priority"]) == {"flag", "no_flag"}


def test_each_queue_has_its_own_prompt():
    pt2 = load_bundle(queue="pt2")
    assert prompt_path(pt2).parent.name == "pt2" and prompt_path(load_bundle()).parent.name == "distributed"
    rendered = render(issue(labels=("oncall: pt2",)), pt2)
    assert "`oncall: pt2`" in rendered.system and "distributed training" not in rendered.system
    for name in criteria_names(pt2):
        assert f"`{name}`" in rendered.system
    for route in pt2.rubric.routes:
        assert f"`{route}`" in rendered.system


def test_a_rubric_states_its_own_type_definitions():
    """`types.<kind>.description` is rubric data (the procedure's words when absent), and the prompt says it."""
    from triage.config.rubric import DEFAULT_TYPE_DESCRIPTIONS, compile_rubric
    from triage.config.safe_yaml import compose_yaml

    bundle = load_bundle()
    path = bundle.rubric.path
    data, _ = compose_yaml(Path(path).read_text(encoding="utf-8"), path)
    assert bundle.rubric.feature.description.startswith(DEFAULT_TYPE_DESCRIPTIONS["feature"])
    del data["types"]["request"]["description"]  # absent: the procedure's words
    assert compile_rubric(data, path).request.description == DEFAULT_TYPE_DESCRIPTIONS["request"]
    data["types"]["feature"]["description"] = "a capability nobody can reach today"
    rubric = compile_rubric(data, path)
    assert rubric.feature.description == "a capability nobody can reach today"
    system = _flat(render(issue(), replace(bundle, rubric=rubric)).system)
    assert "`feature`: a capability nobody can reach today." in system
