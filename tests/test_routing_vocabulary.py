"""Step 2/3 vocabulary, by what the procedure says each sub-oncall and module covers, however a reporter names it:
plurals and plain words for a component ("Elastic agents", "the elastic launcher"), names inside longer identifiers
(a test `test_async_save_...`, a class `TestXStateDictStager`), newer components (DTensor's `LocalTensorMode`,
`local_map`), and the checkpointing boundary as the procedure states it (DCP and the state_dict utilities go to
checkpointing; FSDP's own state-dict configuration stays with parallelisms).

Every issue here is invented for the case it pins, in our own words (none is copied from an eval set).
"""

from __future__ import annotations

import pytest

from engine_helpers import CKPT, INFRA, PAR, fenced, plan_for

FSDP, DDP, DTENSOR, AC = "module: fsdp", "module: ddp", "module: dtensor", "module: activation checkpointing"

# name -> (title, body, expected sub-oncall, modules that must be added, modules that must not)
ROUTES = {
    "elastic-agents-plural": (
        "Elastic agents leave zombie workers behind when a node is preempted",
        "After a spot node disappears the surviving agents keep their old worker processes around.",
        INFRA, (), ()),
    "elastic-launcher-plain-words": (
        "[elastic launcher] a worker that dies during import is restarted forever",
        "Every restart fails the same way; the launcher never gives up.",
        INFRA, (), ()),
    "elastic-job-words": (
        "torch elastic jobs ignore the restart budget",
        "I set the budget to two restarts and the job kept restarting.",
        INFRA, (), ()),
    "dcp-inside-a-test-name": (
        "TestCheckpointStaging.test_async_save_keeps_pinned_buffers is failing on the new runners",
        "The test trips its own leak check on the new machines.",
        CKPT, (), ()),
    "dcp-stager-class": (
        "StateDictStager copies tensors twice when pinned memory is on",
        "Staging a large model takes twice the host memory it should.",
        CKPT, (), ()),
    "dcp-private-helper": (
        "_dcp_utils flattening drops empty optimizer states",
        "After loading, Adam's step counters are missing for params without grads.",
        CKPT, (), ()),
    "state-dict-utility-is-checkpointing": (
        "set_optimizer_state_dict rejects a dict produced by get_optimizer_state_dict on another world size",
        "Saving on 8 ranks and loading on 4 raises a KeyError.",
        CKPT, (), ()),
    "fsdp-state-dict-config-stays-parallelisms": (
        "FSDP with StateDictType.SHARDED_STATE_DICT returns unflattened names for tied weights",
        fenced("with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):\n    sd = model.state_dict()"),
        PAR, (FSDP,), ()),
    "local-tensor-mode-is-dtensor": (
        "[LocalTensorMode] random ops draw the same values on every simulated rank",
        "Under the simulation all ranks get identical dropout masks, which a real run would not.",
        PAR, (DTENSOR,), ()),
    "local-map-is-dtensor": (
        "local_map drops the gradient placement of its second output",
        "The second output comes back Replicate although I declared Shard(0).",
        PAR, (DTENSOR,), ()),
    "activation-checkpointing-alone": (
        "checkpoint_wrapper recomputes the forward twice with use_reentrant=False",
        fenced("from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper\n"
               "block = checkpoint_wrapper(block)"),
        PAR, (AC,), ()),
    # The rubric: label activation checkpointing only when the issue is about it; wrapped around FSDP it is context.
    "activation-checkpointing-as-context-of-fsdp": (
        "FSDP fails to shard a block that is wrapped in checkpoint_wrapper",
        "With FSDP over a checkpoint_wrapper block, FSDP raises that the flat parameter is missing.\n"
        + fenced("model = FSDP(checkpoint_wrapper(block), use_orig_params=True)"),
        PAR, (FSDP,), (AC,)),
    "collective-timeout-in-fsdp-is-infra": (
        "NCCL watchdog timeout on all_gather during FSDP training after an hour",
        "Watchdog caught collective operation timeout: WorkNCCL(OpType=_ALLGATHER_BASE) ran for 1800000 ms.",
        INFRA, (), ()),
}


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_route_and_modules_follow_the_procedure(case):
    title, body, route, must, must_not = ROUTES[case]
    plan = plan_for(title, body)
    assert route in plan.add_labels, plan.step(2).reason
    for label in must:
        assert label in plan.add_labels, plan.step(3).reason
    for label in must_not:
        assert label not in plan.add_labels, plan.step(3).reason
