"""Step 2/3 vocabulary, by what the procedure says each sub-oncall and module covers, however a reporter names it:
plurals and plain words for a component ("Elastic agents", "the elastic launcher"), names inside longer identifiers
(a test `test_async_save_...`, a class `TestXStateDictStager`), newer components (DTensor's `LocalTensorMode`,
`local_map`), and the checkpointing boundary as the procedure states it (DCP and the state_dict utilities go to
checkpointing; FSDP's own state-dict configuration stays with parallelisms), and which module an issue is about
when it names two: DDP named as the yardstick of another wrapper is not the subject, and DTensor named beside FSDP
is FSDP's parameter type unless DTensor's own machinery (placements, redistribute) is named as well.

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
    "elastic-agent-class-family": (
        "SimpleElasticAgent reports success although two workers exited non-zero",
        "The job's exit status hides the failures from our scheduler.",
        INFRA, (), ()),
    "device-meshes-plural": (
        "Two DeviceMeshes built over the same ranks take twice the host memory",
        "Building a second mesh for evaluation should reuse what the first one set up.",
        INFRA, (), ()),
    "distributed-checkpoints-plural": (
        "Distributed checkpoints written on 8 ranks lose the LR scheduler state when read on 4",
        "The scheduler restarts from step zero after resharding.",
        CKPT, (), ()),
    "storage-writer-family": (
        "HuggingFaceStorageWriter writes bf16 tensors as fp32 in the safetensors header",
        "The consolidated file is twice the expected size.",
        CKPT, (), ()),
    # The procedure's own words for checkpointing, and plain words for pipelining.
    "async-checkpointing-plain-words": (
        "Asynchronous checkpointing stalls the training loop while staging",
        "Each save pauses the step for several seconds although it is meant to run in the background.",
        CKPT, (), ()),
    "checkpoint-resharding-reversed": (
        "Checkpoint resharding from a 2-D to a 1-D mesh drops the optimizer moments",
        "Saving on one mesh shape and loading on another leaves exp_avg empty.",
        CKPT, (), ()),
    "state-dict-utils-private-module": (
        "_state_dict_utils gathers every tensor on rank 0 before offloading",
        "Peak host memory is the whole model on one rank.",
        CKPT, (), ()),
    "pipeline-schedules-plain-words": (
        "Pipeline schedules: the interleaved schedule stalls with three stages per rank",
        "With two stages per rank it runs.",
        PAR, ("module: pipelining",), ()),
    "dtensors-plural": (
        "Adding two DTensors with different meshes returns a tensor on the first mesh",
        "No error, the second operand's mesh is ignored.",
        PAR, (DTENSOR,), ()),
    # Component names inside test names: the underscore is no word boundary for `\b`.
    "dtensor-inside-a-test-name": (
        "test_dtensor_ops_sharding is flaky on ROCm", "One shard comes back transposed once in fifty runs.",
        PAR, (DTENSOR,), ()),
    "pipelining-inside-a-test-name": (
        "test_pipeline_schedule_runtime fails with 4 GPUs", "The last stage never receives its input.",
        PAR, ("module: pipelining",), ()),
    "device-mesh-inside-a-test-name": (
        "test_device_mesh_slicing fails on 2 GPUs", "Slicing by a dim name returns the wrong ranks.",
        INFRA, (), ()),
    "distributed-checkpoint-inside-a-test-name": (
        "test_distributed_checkpoint_resharding fails on the new runners", "Loading on half the ranks raises.",
        CKPT, (), ()),
    "state-dict-utils-inside-a-test-name": (
        "test_state_dict_utils.py fails with cpu_offload", "The offloaded copy keeps a reference on the GPU.",
        CKPT, (), ()),
    "checkpoint-wrapper-inside-a-test-name": (
        "test_checkpoint_wrapper_kwargs fails", "Keyword arguments do not reach the wrapped forward.",
        PAR, (AC,), ()),
    "elastic-inside-a-test-name": (
        "test_elastic_launch_agent timeout", "The agent waits for workers that never start.",
        INFRA, (), ()),
    # FSDP's own flag that says it represents shards as DTensors is no DTensor mention.
    "fsdp-use-dtensor-flag-is-fsdp": (
        "FSDP sharded state dict ignores _use_dtensor after set_state_dict_type",
        fenced("model = FSDP(model, device_mesh=mesh)\nFSDP.set_state_dict_type(model, StateDictType.SHARDED_STATE_DICT)"),
        PAR, (FSDP,), (DTENSOR,)),
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
    "state-dict-utils-option-lowercase-is-checkpointing": (
        "get_model_state_dict with full_state_dict=True on an FSDP2 model returns DTensors",
        fenced("sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))"),
        CKPT, (), ()),
    "saving-a-state-dict-is-checkpointing": (
        "Saving the DTensor state dict with torch.save writes an empty file on rank 1",
        "Only rank 0's file has content; the model is a TP-sharded transformer.",
        CKPT, (), ()),
    "dcp-files-are-checkpointing": (
        "Missing __1_0.distcp after a preempted job",
        "The .metadata file lists four shards but only three files exist.",
        CKPT, (), ()),
    "dcp-inside-a-camelcase-name": (
        "DISABLED test_reshard_world_size (__main__.TestDCPLoadPlanner)",
        "Platforms: linux",
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
    # FSDP1's own state-dict types and internals are FSDP's, even where a state_dict utility is named: the edge case
    # covers all three types (full, sharded, local) and the flat parameter inside longer attribute names.
    "fsdp-local-state-dict-stays-parallelisms": (
        "LOCAL_STATE_DICT keys cannot be mapped back to the unwrapped model's names",
        "summon_full_params(recurse=False) on the root still hands back a flat parameter, so the per-layer names never "
        "line up with the original module's.",
        PAR, (FSDP,), ()),
    "fsdp-flat-param-inside-a-name": (
        "Optimizer keys point at encoder.layer0._flat_param after wrapping",
        "The parameter names after wrapping are unusable for our per-layer learning rates.",
        PAR, (FSDP,), ()),
    "fully-shard-inside-a-test-name": (
        "test_fully_shard_mixed_precision_casts fails on the new runners",
        "The reduce dtype is bf16 where the policy asked for fp32.",
        PAR, (FSDP,), ()),
    "fsdp-module-class": (
        "FSDPModule.unshard returns before the all-gather finished when async_op is off",
        "Reading a parameter right after unshard() gives the local shard on some ranks.",
        PAR, (FSDP,), ()),
    # DDP as the yardstick of another wrapper is not the subject.
    "ddp-as-a-comparison-is-not-a-module": (
        "FSDP2 should check that every rank starts from the same weights, similar to DDP",
        "DDP broadcasts rank 0's module states at construction; fully_shard trusts every rank to have them already.",
        PAR, (FSDP,), (DDP,)),
    "slower-than-ddp-is-not-ddp": (
        "HYBRID_SHARD step time is 30% slower than DDP on two nodes",
        "For a model that fits on one GPU, FSDP with hybrid sharding should not cost more than plain replication.",
        PAR, (FSDP,), (DDP,)),
    "works-with-ddp-fails-with-fsdp": (
        "Works with DDP, fails with FSDP: BatchNorm buffers differ across ranks",
        "Switching from DDP to FSDP leaves each rank with its own running statistics.",
        PAR, (FSDP,), (DDP,)),
    "migrating-from-ddp": (
        "Migrating from DDP to FSDP2 doubles the step time of a small model",
        "The step ran fine with DDP at 80 ms; fully_shard on the same 300M model "
        "takes 160 ms.",
        PAR, (FSDP,), (DDP,)),
    "ddp-named-as-the-subject-stays-ddp": (
        "DDP with static_graph=True skips the allreduce of a parameter used twice",
        "The second use's gradient never arrives on the other ranks, unlike the FSDP run of the same model.",
        PAR, (DDP,), ()),
    # DTensor named with FSDP in a title is FSDP's parameter type; DTensor's own machinery named too gets both.
    "dtensor-as-fsdp-parameter-type": (
        "FSDP2 loses requires_grad=False on DTensor parameters after reshard",
        "Frozen embeddings start receiving gradients once fully_shard re-creates the sharded parameters.\n"
        + fenced("fully_shard(model)\nmodel.embed.weight.requires_grad_(False)"),
        PAR, (FSDP,), (DTENSOR,)),
    "fsdp-hitting-a-dtensor-bug-gets-both": (
        "FSDP2 + DTensor: redistribute of a sharded parameter to Replicate() gives the wrong shape",
        "Calling redistribute on a parameter fully_shard produced returns Shard(0) placements with a shape that "
        "ignores the padding; the sharding propagation for view seems to drop it.\n"
        + fenced("fully_shard(model, mesh=mesh)\nfull = model.weight.redistribute(mesh, [Replicate()])"),
        PAR, (FSDP, DTENSOR), ()),
    "context-parallel-inside-a-longer-name": (
        "context_parallel_unshard returns the chunks in load-balanced order",
        "After unsharding the sequence is permuted, so the loss on the gathered logits is wrong.",
        PAR, ("module: context parallel",), ()),
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
