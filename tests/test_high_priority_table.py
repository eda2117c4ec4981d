"""Step 5 on invented issues that state a criterion the indirect way reporters do, and controls that must not flag.

Every issue here is invented for this table, in this file's own wording (nothing is copied from a dataset): each
criterion of the procedure's step 5 stated several ways, mostly without the textbook word (a version comparison
instead of "regression", a consequence instead of "silent corruption", a stall instead of "hang", a signal or an
exit code instead of "crash"), and controls that carry the same words but do not meet a criterion: an OOM from a
bigger batch, a usage error with a clear exception, a disabled test, a question, a request that mentions a crash.
The rubric (`queues/distributed/rubric.yaml`: `high_priority.slots` and the frames under each criterion) must
judge every row right, and name the criterion it met.
"""

from __future__ import annotations

import pytest

from engine_helpers import MARKER, REVIEW, fenced, plan_for

SCRIPT = fenced("import torch.distributed as dist\ndist.init_process_group('nccl')\nrun(model)")

# criterion -> [(title, body)], each stating the criterion indirectly.
MEETS: dict[str, list[tuple[str, str]]] = {
    "regression": [
        ("DDP training fails with an NCCL error on torch 2.7",
         "The same script ran fine on 2.6.0 last week; only the torch version changed.\n" + SCRIPT),
        ("FSDP2 checkpoint loading raises KeyError",
         "After upgrading from 2.3 to 2.5, loading the sharded optimizer state raises.\n" + SCRIPT),
        ("torchrun launch errors on newer builds",
         "Launching with torchrun used to work in ≤ 2.5; now every launch exits with a rendezvous error.\n" + SCRIPT),
        ("reduce_scatter rejects bf16 inputs",
         "This happens on 2.6.0 but does not reproduce on 2.4.1 with an identical environment.\n" + SCRIPT),
        ("DTensor redistribute broke in the nightly",
         "Shard(0) to Replicate() raised nothing before; with today's nightly it errors out.\n" + SCRIPT),
        ("torchrun no longer honours --max-restarts",
         "Since the last release the agent gives up at the first worker failure.\n" + SCRIPT),
        ("new_group timeout argument refused",
         "Since 2.2, passing a timeout to new_group fails with an unexpected keyword error.\n" + SCRIPT),
        # A comparison told without the word, an exception in the report (a regression may raise).
        ("ok with 2.4, raises with 2.6: ShardedTensor metadata",
         "```\nKeyError: 'shard_md'\n```\nEverything else is identical between the two environments.\n" + SCRIPT),
        # A culprit commit instead of versions.
        ("gloo allgather_coalesced throws after #151234",
         "git bisect points at that PR; the parent commit is fine.\n" + SCRIPT),
        # Versions as a list with a verdict each, and as an arrow.
        ("DTensor matmul with a Partial input", "- 2.4.1: passes\n- 2.5.0: raises a sharding error\n" + SCRIPT),
        ("Peak memory 20% higher with FSDP after 2.5 -> 2.6", "Same model and batch.\n" + SCRIPT),
        # A value measured on two versions; the version isolated as the only change.
        ("Pipeline step time", "Step time 410 ms on 2.4.1 vs 690 ms on 2.6.0 for the same schedule.\n" + SCRIPT),
        ("Agents give up early", "Same cluster except the torch wheel: every agent now exits at the first "
         "barrier.\n" + SCRIPT),
        ("rendezvous gives up after ten minutes", "We moved the image to 2.7.0 (nothing else changed) and the early "
         "nodes now leave.\n" + SCRIPT),
        ("P2P sends to a peer on another host",
         "Our test job trains okay on 2.5.1 and fails on the first isend since the newest nightly.\n" + SCRIPT),
        # "anymore" carries its own denial; an older version as the fix; values told version first; a cost up.
        ("Store clients time out with hostnames",
         "After moving our env from torch 2.9.1 to 2.10.0, none of our multi-host jobs start anymore.\n" + SCRIPT),
        ("Hostname rendezvous", "What makes it work again: going back to torch 2.9.1 with the same scripts.\n"
         + SCRIPT),
        ("DDP benchmark", "Only the wheel differs: 2.9.1 -> 412 ms/step, 2.10.0 -> 538 ms/step.\n" + SCRIPT),
        ("DDP step time up 30% after our torch bump", "Same model, same cluster.\n" + SCRIPT),
        # The same script said to run on the older version, in the title's own clause.
        ("fully_shard raises on 2.11, same training script passes with 2.10.1",
         "Nothing else differs between the two environments.\n" + SCRIPT),
    ],
    "silent_correctness": [
        ("all_gather_into_tensor output scrambled for non-contiguous inputs",
         "The gathered values come back in the wrong order on rank 2, and no error is raised.\n" + SCRIPT),
        ("FSDP vs single GPU training",
         "Training the same model with FSDP and on one GPU should give the same loss, but they are not even close "
         "after ten steps.\n" + SCRIPT),
        ("ReduceOp.AVG on gloo",
         "With the gloo backend every rank's gradients end up summed instead of averaged.\n" + SCRIPT),
        ("Replicas drift apart under DDP",
         "Parameters on rank 0 and rank 1 no longer match after a few steps, although DDP should keep them "
         "in sync.\n" + SCRIPT),
        ("no_sync context and the last bucket",
         "Leaving the no_sync context silently drops the gradients of the last bucket.\n" + SCRIPT),
        ("Gradients of tied weights under FSDP",
         "The gradient of the shared embedding is exactly half of what the single-GPU run computes.\n" + SCRIPT),
        ("broadcast leaves rank 1's tensor as it was",
         "After dist.broadcast(t, src=0), rank 1 still holds its old contents and nothing is raised.\n" + SCRIPT),
        ("Partial placement numbers",
         "The reduced output is completely off compared with computing the same thing locally.\n" + SCRIPT),
        # A reduction that computes another one.
        # Compared with a run that is right by construction.
        ("FSDP2 grad norm", "The grad norm on 4 GPUs is 1/4 of the single-GPU baseline for the same global batch.\n"
         + SCRIPT),
        ("DDP replicas drift apart under gradient accumulation", "Checked every 50 steps: no error, no warning.\n"
         + SCRIPT),
        ("all_gather_object on mixed dtypes", "expected on rank 1: 4.0 6.0\nactual on rank 1: 2.0 2.0\n" + SCRIPT),
        ("TP output for Colwise layers", "The sharded output is off by exactly the world size, every time.\n" + SCRIPT),
        ("ReduceOp.PRODUCT on int64 tensors", "With NCCL, PRODUCT gives the sum of the tensors on every rank.\n"
         + SCRIPT),
        # A multiple in words; replicas that must agree and do not.
        ("Comm hook with static_graph", "From the second step on the grads are exactly world_size times the "
         "reference.\n" + SCRIPT),
        ("Comm hook plus no_sync: parameters silently diverge across ranks", "Found in evaluation.\n" + SCRIPT),
        # Another parallelism as the yardstick; one reduction given for another.
        ("FSDP2 training drifts away", "With the same seed and data the FSDP2 loss is 0.3 higher than DDP's after 200 "
         "steps.\n" + SCRIPT),
        ("DDP gradients not averaged with no_sync and static_graph",
         "After the sync step the grads are the sum, not the mean.\n" + SCRIPT),
        ("scatter_object_list on CPU tensors",
         "current output:\n[tensor([2., 2.]), tensor([2., 2.])]\n\nexpected output:\n[tensor([1., 2.]), "
         "tensor([3., 4.])]\n" + SCRIPT),
        ("Gradient accumulation with a compression hook",
         "After a few hundred steps the weights end up different on different ranks.\n" + SCRIPT),
    ],
    "multinode_hang": [
        # The first collective once the group is up: setup is done, the collective waits.
        ("Barrier on 48 hosts", "The first `dist.barrier()` after `init_process_group` never returns on 48 "
         "nodes.\n" + SCRIPT),
        # An intransitive "blocks" and a watchdog that ends the job: the collective waited past its timeout.
        ("new_group blocks on three hosts", "Nothing prints; after half an hour the job is killed by the NCCL "
         "watchdog on 3 nodes.\n" + SCRIPT),
        # the reporter rules out the usual cause of their own making: not an attribution
        ("NCCL watchdog timeout in reduce_scatter after hours on 8 nodes",
         "Every rank logs the same sequence number, so it does not look like a rank skipped a collective.\n" + SCRIPT),
        ("Job makes no progress after the first all_to_all on 16 nodes",
         "Every rank sits at 100% GPU utilisation and nothing is logged.\n" + SCRIPT),
        ("rank 0 waits forever in barrier when one worker exits early",
         "The other ranks leave, rank 0 stays.\n" + SCRIPT),
        ("TCPStore get never returns",
         "When a late rank sets the key, the get on rank 0 is never answered.\n" + SCRIPT),
        ("Watchdog metric on our cluster",
         "Our monitoring shows `allreduce_hang_detected=1` on 4 nodes every night.\n" + SCRIPT),
        ("Training freezes at step 1000 on 32 nodes",
         "All ranks stop making progress inside the same collective; no error is printed.\n" + SCRIPT),
        ("First broadcast across machines",
         "We hit an NCCL timeout during the first broadcast when the job spans two machines.\n" + SCRIPT),
        ("Replacing a node", "After the swap the remaining agents sit in rendezvous for hours.\n" + SCRIPT),
        ("our 8-node DDP run", "After about two hours the 8-node job never made progress again; GPUs idle at 0%.\n"
         + SCRIPT),
    ],
    "crash": [
        ("Worker exits with code -11 during gradient bucketing", "Only with DDP on 8 GPUs.\n" + SCRIPT),
        ("Process dies with SIGABRT inside ProcessGroupGloo", "Happens at the end of the epoch.\n" + SCRIPT),
        ("destroy_process_group at shutdown",
         "The python process is killed by signal 11 when destroying the process group.\n" + SCRIPT),
        ("Rank 3 goes away", "torchrun reports exitcode: -6 for rank 3 and tears the job down.\n" + SCRIPT),
        ("dcp.save then exit", "Every rank segfaults on exit after dcp.save returns.\n" + SCRIPT),
    ],
    "checkpoint_corruption": [
        ("Reloaded DCP checkpoint has the wrong step's weights",
         "The saved checkpoint holds the values after the optimizer update instead of the ones at the save call.\n"
         + SCRIPT),
        ("Resuming from a sharded checkpoint",
         "Resuming from the sharded checkpoint gives weights that differ from what was saved.\n" + SCRIPT),
        ("DCP load gives back what the model started with",
         "After dcp.load the weights equal their freshly initialised values, not the saved ones.\n" + SCRIPT),
        ("Optimizer state saved with async_save",
         "The checkpoint's optimizer state is from the next step: it holds the moments after the update.\n"
         + SCRIPT),
        ("async_save shards", "Some shards of the saved state_dict are all zeros after async_save.\n" + SCRIPT),
        ("Two ranks write one path", "Checkpoint files come out truncated when two ranks write the same path.\n"
         + SCRIPT),
        ("Continuing a run from its sharded checkpoint",
         "After the restart the loss jumps back to its value at step 0, as if nothing had been loaded.\n" + SCRIPT),
        ("Resuming a 13B run", "Validation loss spikes to 9.1 after loading the sharded checkpoint; before the "
         "save it was 2.2.\n" + SCRIPT),
        ("Reloaded weights after async_save", "The reloaded weights match the *following* step, not the saved one.\n"
         + SCRIPT),
        ("torch.save of a gathered state dict", "The written state dict is truncated on rank 0 for large models.\n"
         + SCRIPT),
        # Another step's values by number.
        ("async_save and the next optimizer step",
         "When we load those checkpoints, a few shards hold parameters from step N+1 instead of step N.\n" + SCRIPT),
    ],
    "internal_assert": [
        ("allgather on gloo",
         "```\nRuntimeError: false INTERNAL ASSERT FAILED at \"../torch/csrc/distributed/c10d/ProcessGroupGloo.cpp\":"
         "2101, please report a bug to PyTorch.\n```\n" + SCRIPT),
        ("INTERNAL ASSERT FAILED in ProcessGroupNCCL during split_group", "Seen on every run.\n" + SCRIPT),
        ("Store check trips when a rank rejoins",
         "The TCPStore server aborts with `TORCH_INTERNAL_ASSERT(num_workers == expected)` once a restarted rank "
         "connects again.\n" + SCRIPT),
        ("reduce_scatter_tensor with a subgroup",
         "With a subgroup of two ranks:\n```\nProcessGroupGloo.cpp:412] Check failed: output.numel() == "
         "input.numel() * group_size (4 vs. 16)\n```\n" + SCRIPT),
        # The message's own tail, paraphrased by a reporter who lost the log.
        ("work.wait on a completed recv",
         "The second wait ends with a message from ProcessGroupNCCL asking me to report a bug to PyTorch.\n" + SCRIPT),
        ("AssertionError in distributed_c10d.new_subgroups", "Creating subgroups twice in one process.\n" + SCRIPT),
        ("Reducer bucket check on the first backward",
         "```\nRuntimeError: bucket.ready Expected to be true, but got false. Exception raised from "
         "mark_variable_ready at ../torch/csrc/distributed/c10d/reducer.cpp:815\n```\n" + SCRIPT),
        ("symmetric memory rendezvous", "CUDASymmetricMemory aborts with an assertion on the peer count.\n" + SCRIPT),
    ],
    "many_users": [
        # "our side of the socket" is one end of a connection, not the reporter owning the fault
        ("TCPStore drops connections during large launches",
         "Most launches at 512 nodes failed this week, across 5 teams. The accept queue overflows, so the limit is "
         "on our side of the socket, in the store server.\n" + SCRIPT),
        ("All of our DDP jobs fail after the cluster driver update", "Nothing else changed.\n" + SCRIPT),
        ("FSDP2 saving", "Every model we train with FSDP2 fails to save at the end.\n" + SCRIPT),
        ("init_process_group is completely broken on the release candidate", "Any backend.\n" + SCRIPT),
        ("torchrun and IPv6", "Many users report that torchrun does not work at all on IPv6-only hosts.\n" + SCRIPT),
        ("fully_shard and the new wheel", "Loading a checkpoint fails for any fully_shard model we have.\n" + SCRIPT),
        ("c10d import on Python 3.14", "init_process_group is broken on Python 3.14: the extension fails to load.\n"
         + SCRIPT),
        ("import order", "All of our FSDP2 + TP jobs fail at import since this morning.\n" + SCRIPT),
        ("fully_shard with ZeRO-3 style offload", "Anyone using CPU offload hits this; 40 people on the forum "
         "report the same error.\n" + SCRIPT),
        ("DeviceMesh slicing", "This blocks 2.10 for every user of 2-D parallelism: slicing the mesh fails.\n"
         + SCRIPT),
        # People counted by what they are, others with the same traceback, a confirmation in a comment.
        ("torchrun on the lab machines", "About 60 students hit this in the first week.\n" + SCRIPT),
        ("clip_grad_norm_ across meshes",
         "We have 25+ reports from users and four other threads with the same traceback.\n" + SCRIPT),
        # Broken whatever it is given: a core launcher that fails on any input.
        ("torchrun on the new Python", "torchrun fails immediately on any script, even an empty one, so nothing "
         "can be launched with it.\n" + SCRIPT),
    ],
}

# Controls: the same words, and no criterion met (or counter-evidence that the procedure gives).
CONTROLS: dict[str, tuple[str, str]] = {
    "the-fault-was-on-our-side": (
        "TCPStore drops connections during large launches",
        "Most launches at 512 nodes failed this week, across 5 teams. Never mind, it was on our side: a firewall "
        "rule.\n" + SCRIPT),
    "a-rank-skipped-told-as-what-happened": (
        "NCCL watchdog timeout in reduce_scatter after hours on 8 nodes",
        "We found that one rank skipped the collective because of our early-exit branch.\n" + SCRIPT),
    "quantity-correct-only-its-display-wrong": (
        "DeviceMesh repr prints the dim names in the wrong order",
        "The gathered values and the mesh are correct; only the printed string is wrong, which misled us while "
        "debugging.\n" + SCRIPT),
    "own-fix-then-runs-fine-on-a-version": (
        "Docs example for hybrid sharding raises AttributeError",
        "The snippet uses a misspelled enum member. After fixing the name it runs fine on torch 2.9.0.\n" + SCRIPT),
    "oom-bigger-batch": (
        "CUDA out of memory with FSDP when the batch size goes from 8 to 16",
        "With batch 8 it trains; with 16 every rank is killed.\n```\ntorch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB\n```\n" + SCRIPT),
    "usage-error-clear-exception": (
        "all_gather with tensors of different sizes",
        "Passing tensors of different sizes to all_gather fails straight away.\n```\nValueError: all tensors "
        "must have the same size, got 4 and 6\n```\n" + SCRIPT),
    "disabled-test": (
        "DISABLED test_ddp_uneven_inputs_join (__main__.TestDistBackendWithSpawn)",
        "Platforms: linux\n\nThis test was disabled because it stalls in barrier on the NCCL backend in CI."),
    "question": (
        "How can I make all_reduce deterministic across nodes?",
        "Is there a way to get bitwise identical results from all_reduce on different cluster sizes?"),
    "feature-request-mentioning-a-crash": (
        "Add a flight recorder dump when a rank segfaults",
        "### 🚀 The feature, motivation and pitch\n\nWhen a rank segfaults inside a collective we lose the context. "
        "Please add an option to dump the flight recorder before the process dies."),
    "oom-longer-sequences": (
        "DDP OOM after raising the sequence length to 8k",
        "At 4k tokens the job fits; at 8k every rank runs out of memory in the first forward and the job exits.\n"
        "```\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB\n```\n" + SCRIPT),
    "usage-error-type-error": (
        "broadcast_object_list given a tuple",
        "Passing a tuple instead of a list stops at once with a message that says what to do.\n```\nTypeError: "
        "object_list must be a list\n```\n" + SCRIPT),
    "disabled-test-crash": (
        "DISABLED test_fsdp_cpu_offload_segfault (__main__.TestFSDPOffload)",
        "Platforms: rocm\n\nThis test was disabled because it is failing in CI; the worker dies with SIGSEGV."),
    "question-about-a-hang": (
        "Why would barrier wait forever if one rank never calls it?",
        "Is this the expected behaviour of barrier, or should it time out? I am learning how collectives work."),
    "feature-request-about-hangs": (
        "[RFC] Detect and report a stuck collective before the NCCL timeout",
        "### 🚀 The feature, motivation and pitch\n\nToday a hang in all_reduce is only noticed when the watchdog "
        "kills the job after 30 minutes. We propose a lightweight progress monitor that reports the stuck rank "
        "early."),
    "frozen-parameters-memory": (
        "FSDP2 with frozen parameters uses more memory than expected",
        "When the embeddings are frozen the job still keeps their gradients; each rank freezes a different layer "
        "in our setup.\n" + SCRIPT),
    "plain-bug-nan-loss": (
        "FSDP mixed precision gives nan loss", "The loss becomes nan after a few steps with bf16.\n" + SCRIPT),
    "loss-varies-between-runs": (
        "Loss curve differs between runs with DDP", "Two runs with the same seed give slightly different curves.\n"
        + SCRIPT),
    "an-older-version-fails-too": (
        "reduce_scatter raises on 2.10", "Going back to torch 2.9.1 does not help: same error.\n" + SCRIPT),
    # The reporter withdraws the report: the cause was theirs (an apology, a forgotten default, a misconfiguration).
    "withdrawn-with-an-apology": (
        "Sharded checkpoint cannot be read back after a 4-node run",
        "The saved shards are truncated on load.\n" + SCRIPT + "\nFound it, our copy job had stopped half way. Sorry "
        "for the noise."),
    "forgot-the-default": (
        "reduce gives a tenfold value on 10 ranks",
        "The reduced metric is wrong on every rank.\n" + SCRIPT + "\nNevermind, I forgot that the default op adds "
        "them up."),
    "our-misconfiguration": (
        "all_gather hangs on 8 nodes after the network change",
        "The first all_gather never returns on 8 nodes.\n" + SCRIPT + "\nResolved: it was our misconfiguration of "
        "the interface names."),
    "a-rank-zero-guard-fixed-it": (
        "Saved file corrupted by a 2-node DDP job",
        "The checkpoint cannot be loaded after the run.\n" + SCRIPT + "\nEvery rank was writing the same path; "
        "putting it under if rank == 0 fixed it."),
    "the-stock-launcher-works": (
        "Regression in 2.9: our wrapper's jobs cannot join the rendezvous",
        "After upgrading to 2.9.0 the jobs started by our in-house launcher fail. With plain torchrun and the same "
        "arguments on 2.9.0 the job runs fine.\n" + SCRIPT),
    "only-rank-zero-runs-the-long-step": (
        "Watchdog timeout in barrier while validating",
        "Only rank 0 runs the validation loop (40 minutes); the other ranks hit the collective timeout in the "
        "barrier.\n" + SCRIPT),
    "a-verdict-not-a-finding": (
        "FSDP example wraps nothing",
        "We believe this is a regression in 2.8, and it probably affects many users.\n" + SCRIPT),
    "a-one-rank-mesh": (
        "Sum on a 1-rank mesh differs slightly from a plain tensor",
        "On a mesh of size 1 the result is off by 2e-6 in float32.\n" + SCRIPT),
    "a-scheduler-time-limit-called-a-crash": (
        "FSDP training crashed after two days on 32 nodes",
        "The FSDP training job crashed at step 90000 with no traceback.\n```\nslurmstepd: error: *** JOB 77 "
        "CANCELLED AT 2026-02-01T00:00:00 DUE TO TIME LIMIT ***\n```\n" + SCRIPT),
    "a-cgroup-memory-kill-called-a-crash": (
        "DDP job crashed while saving",
        "The DDP job crashed in the save on 16 nodes.\n```\nDetected 2 oom_kill event in StepId=5.0\n```\n"
        + SCRIPT),
    "scaling-loss-with-one-version": (
        "Throughput regression from 4 to 32 nodes with DDP",
        "Torch 2.9.1 in all runs; efficiency falls from 98% to 70% as nodes are added.\n" + SCRIPT),
    "another-library-upgraded-torch-held": (
        "FSDP wrapping broken after upgrading our model library",
        "After upgrading the model library from 3.1 to 4.0 (torch unchanged at 2.9.1), auto-wrap no longer finds "
        "the layers.\n" + SCRIPT),
    "two-runs-of-one-script": (
        "Loss curves of repeated DDP jobs",
        "Two DDP runs of the same script give a different loss after 500 steps.\n" + SCRIPT),
    "batch-size-differs-between-the-runs": (
        "DDP loss on 4 GPUs differs from the one-GPU loss",
        "The loss on 4 GPUs differs from the single-GPU loss at step 50. The effective batch size is 128 vs 32.\n"
        + SCRIPT),
    "rounding-level-difference": (
        "FSDP loss differs from the single-GPU loss by 2e-4",
        "Close curves, bf16 parameters.\n" + SCRIPT),
    "asked-of-a-named-thing": (
        "DTensor sum on two ranks",
        "Is DTensor computing wrong results when the shards are uneven? I have no reference to compare with.\n"
        + SCRIPT),
    "version-in-a-plain-report": (
        "DDP raises on torch 2.5 with find_unused_parameters",
        "On torch 2.5 DDP raises when some parameters are unused.\n" + SCRIPT),
}


def flagged(plan) -> bool:
    return plan.outcome == "high_priority" and REVIEW in plan.add_labels and MARKER not in plan.add_labels


CASES = [(criterion, i) for criterion, rows in MEETS.items() for i in range(len(rows))]


@pytest.mark.parametrize("criterion,index", CASES, ids=[f"{c}-{i}" for c, i in CASES])
def test_a_criterion_stated_indirectly_is_flagged_and_named(criterion, index):
    plan = plan_for(*MEETS[criterion][index])
    assert flagged(plan), plan.step(5).reason
    assert plan.step(5).reason.startswith(f"step 5: possibly high priority — {criterion} "), plan.step(5).reason


@pytest.mark.parametrize("case", sorted(CONTROLS))
def test_controls_are_not_flagged(case):
    plan = plan_for(*CONTROLS[case])
    assert not flagged(plan), plan.step(5).reason


def test_the_table_covers_every_criterion_several_times():
    from triage.config.bundle import load_bundle

    names = {c.name for c in load_bundle().rubric.high_priority.criteria}
    assert set(MEETS) == names
    assert all(len(rows) >= 3 for rows in MEETS.values())
    assert sum(len(rows) >= 4 for rows in MEETS.values()) >= 5


# The fact that meets a criterion, told in a later comment (the bundled rubric weighs a comment like the
# description at step 5); each with the same comment as a question, which meets nothing.
IN_A_COMMENT = [
    ("regression", "DeviceMesh slicing a sliced mesh raises KeyError",
     "Slicing the 2-D mesh again fails.\n" + SCRIPT,
     "It works on 2.4.1 with the same script; it broke after the upgrade to 2.5.1.",
     "Did it work on 2.4.1 with the same script, or is this new code?"),
    ("silent_correctness", "all_gather_into_tensor with a subgroup",
     "We gather activations over a subgroup of two ranks.\n" + SCRIPT,
     "Checked again: the gathered values are wrong on rank 1, and no error is raised.",
     "Are the gathered values wrong on rank 1 for you too, or only on our cluster?"),
]


@pytest.mark.parametrize("criterion,title,body,fact,question", IN_A_COMMENT, ids=[r[0] for r in IN_A_COMMENT])
def test_a_fact_told_in_a_comment_meets_the_criterion(criterion, title, body, fact, question):
    plan = plan_for(title, body, comments=[fact])
    assert flagged(plan) and plan.step(5).reason.startswith(f"step 5: possibly high priority — {criterion} "), \
        plan.step(5).reason
    assert not flagged(plan_for(title, body, comments=[question]))
