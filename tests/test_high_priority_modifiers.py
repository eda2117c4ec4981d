"""Step 5 reads what happened, not its words: one table per class of false flag the issue names, each with controls.

Every issue here is invented for this file, in its own wording (nothing is copied from a dataset). Each class has
rows that carry a criterion's words without meeting it, and controls that say nearly the same thing and do meet it,
so a rule that drops the words altogether fails the controls:
- negation: the criterion denied ("no crash", "does not hang", "nothing was corrupted");
- hypothetical: supposed, feared or guarded against ("if the barrier hangs we want ...");
- attribution: the reporter puts the failure on their own side (their mistake, their own kernel or backend, a
  collective only one rank called), in the description or in a later comment;
- scope: one laptop or one machine for a hang, one device or one process for any criterion;
- count vs version: "from 1 GPU to 8" is not a version change;
- quantifier: "every config in the docs" is not many users;
- wrong object: the documentation's printed output is wrong, not a collective;
- belief: a guess, a fear or a first thought later checked ("I first thought it was a regression");
- yes/no question: "Is the checkpoint corrupted, or ...?" asks, it does not say;
- setting: a timeout named as a configured value ("the default watchdog timeout of 30 minutes"), not one that fired.
The rubric (`modifiers:` and `high_priority:` in queues/distributed/rubric.yaml) must judge every row.
"""

from __future__ import annotations

import pytest

from engine_helpers import MARKER, REVIEW, fenced, plan_for

SCRIPT = fenced("import torch.distributed as dist\ndist.init_process_group('nccl')\nrun(model)")


def flagged(plan) -> bool:
    return plan.outcome == "high_priority" and REVIEW in plan.add_labels and MARKER not in plan.add_labels


# class -> (rows that must NOT be flagged, controls that MUST be flagged), each (title, body, comments)
TABLE: dict[str, tuple[list[tuple], list[tuple]]] = {
    "negation": (
        [
            ("Checkpoint save raises IndexError with an empty param group",
             "Saving fails before anything is written. Nothing was lost and no checkpoint got corrupted; I only "
             "cannot save while the group is empty.\n" + SCRIPT, ()),
            ("Recompilation every step with fully_shard and compile",
             "Every step recompiles. The job does not hang and there is no crash, only the step time grows.\n"
             + SCRIPT, ()),
            ("Gradients after no_sync look right",
             "After leaving no_sync the gradients are never wrong in my tests; I only want to confirm the "
             "documented contract.\n" + SCRIPT, ()),
        ],
        [
            ("Checkpoint save corrupts the shard files",
             "After saving, two shard files of the checkpoint are truncated and the reload fails.\n" + SCRIPT, ()),
            ("barrier hangs on two nodes",
             "No error is printed, but the barrier hangs on two nodes after the first epoch.\n" + SCRIPT, ()),
            ("Gradients after no_sync are silently wrong",
             "Leaving no_sync silently drops the gradients of the last bucket.\n" + SCRIPT, ()),
        ],
    ),
    "hypothetical": (
        [
            ("Ask: dump every rank's stack before the watchdog kills a job",
             "In case the all_reduce hangs on our cluster, we would like the watchdog to dump all stacks before "
             "killing the job.\n" + SCRIPT, ()),
            ("Question about DCP saves interrupted midway",
             "If the job is killed during dcp.save the checkpoint could be corrupted, I suppose. Is that handled?\n"
             + SCRIPT, ()),
        ],
        [
            ("all_reduce hangs when the job spans two nodes",
             "If we launch on two nodes, the all_reduce hangs after ten minutes.\n" + SCRIPT, ()),
            ("dcp.save leaves a corrupted checkpoint",
             "When the job is preempted during dcp.save the checkpoint is corrupted and cannot be loaded.\n"
             + SCRIPT, ()),
        ],
    ),
    "belief": (
        [
            ("DTensor cat along dim 1 raises an AssertionError (same on 2.8 and 2.9)",
             "I first thought this was a regression from the 2.10 upgrade, so I installed 2.8.0 and 2.9.1 in fresh "
             "environments: they raise exactly the same.\n" + SCRIPT, ()),
            ("How long must async_save be awaited before exit?",
             "I was worried my last checkpoint would be corrupt when the job ends mid-write; I killed a job to "
             "test it and the load was fine.\n" + SCRIPT, ()),
            ("mAP stays at zero with the detection reference scripts",
             "I thought maybe the distributed evaluation merges the results wrong, so I ran the evaluation on one "
             "process as well: exactly the same zeros.\n" + SCRIPT, ()),
        ],
        [
            ("DTensor cat along dim 1 raises since the 2.10 upgrade",
             "This is a regression from the 2.10 upgrade: 2.9.1 runs the same script without error.\n" + SCRIPT, ()),
            ("async_save leaves a corrupt checkpoint when the job ends mid-write",
             "I was worried about exits, and indeed: the last checkpoint is corrupt when the job ends mid-write.\n"
             + SCRIPT, ()),
        ],
    ),
    "yes-no-question": (
        [
            ("dcp.load fails after resharding from 16 to 8 GPUs: missing optimizer key",
             "Loading the optimizer state raises a missing key error. Is the checkpoint corrupted, or do I need to "
             "convert the optimizer state when the number of GPUs changes?\n" + SCRIPT, ()),
            ("DDP buffers differ across ranks with broadcast_buffers=False, is that expected?",
             "With broadcast_buffers=False the running stats of BatchNorm differ between the ranks.\n" + SCRIPT, ()),
            ("all_gather_object order differs between runs on 2 nodes, expected?",
             "The order of the gathered objects on two nodes is not the same from one launch to the next.\n" + SCRIPT,
             ()),
            ("Gradient sync question for no_sync",
             "Does the gradient of the last micro-batch get dropped when no_sync wraps every step but the last? "
             "I could not tell from the docs.\n" + SCRIPT, ()),
        ],
        [
            ("dcp.load returns a corrupted optimizer state after resharding",
             "After resharding, the checkpoint is corrupted: two shards of the optimizer state hold zeros. Is there "
             "a way to repair it?\n" + SCRIPT, ()),
            ("all_reduce after the first epoch",
             "Why does the all_reduce hang on two nodes after the first epoch? It never returns.\n" + SCRIPT, ()),
            # a report that only ends with a question mark tells what happened
            ("all_reduce AVG on a subgroup of 2 divides by the world size (4) instead of 2?",
             "With a new_group of two ranks, ReduceOp.AVG returns the sum divided by 4: the averaged values are "
             "wrong, and nothing is raised.\n" + SCRIPT, ()),
        ],
    ),
    "setting": (
        [
            ("Initialisation and steady state fail differently",
             "The default NCCL watchdog timeout of 30 minutes is longer than the store timeout of 5 minutes, so "
             "initialisation and steady state fail differently.\n" + SCRIPT, ()),
        ],
        [
            ("all_reduce waits until the NCCL watchdog timeout on two nodes",
             "The all_reduce hangs on two nodes until the default NCCL watchdog timeout of 30 minutes fires.\n"
             + SCRIPT, ()),
        ],
    ),
    "attribution": (
        [
            ("Segfault in allreduce with our registered backend",
             "allreduce segfaults about once in fifty calls on our accelerator.\n" + SCRIPT,
             ("Found it: the segfault is in our own backend library, we freed the work object too early. Sorry!",)),
            ("Illegal memory access in backward with fully_shard on 8 GPUs",
             "CUDA error: an illegal memory access was encountered, only with 8 shards.\n" + SCRIPT,
             ("It was my own Triton kernel reading past the end of the shard. Not a PyTorch bug.",)),
            ("all_gather_object hangs after evaluation on 2 nodes",
             "After evaluation the job hangs forever in all_gather_object.\n" + SCRIPT,
             ("You were right: only rank 0 calls all_gather_object in our code. My mistake.",)),
            ("torchrun's failure summary has no traceback with --redirects",
             "When one of my workers dies (this time it was my own bug: a KeyError in the config, so rank 2 crashed "
             "in the all_reduce) the summary shows no traceback.\n" + SCRIPT, ()),
            ("Out-of-tree c10d backend: gaps we hit",
             "Our backend segfaulted at shutdown because our Work objects outlived it; that one was our bug (we held "
             "a raw pointer), fixed on our side.\n" + SCRIPT, ()),
            ("Segfault with fully_shard and my fused Triton kernel",
             "The process dies with a segmentation fault in the first forward. With gdb: it's dying inside my "
             "launcher where I compute raw pointers from data_ptr() by hand.\n" + SCRIPT, ()),
            ("Crash in the all_reduce with our network plugin",
             "The segfault happens inside our own NCCL net plugin, not in PyTorch; filing it for visibility.\n"
             + SCRIPT, ()),
            ("Two nodes sat in the all_reduce for 30 minutes",
             "My bad: only rank 0 called all_reduce, so the job hung on two nodes until the timeout.\n" + SCRIPT,
             ()),
        ],
        [
            ("Segfault in allreduce with the NCCL backend",
             "allreduce segfaults about once in fifty calls.\n" + SCRIPT,
             ("We rebuilt our own training image from scratch and it still segfaults the same way.",)),
            ("all_gather_object hangs after evaluation on 2 nodes",
             "After evaluation the job hangs forever in all_gather_object on every rank.\n" + SCRIPT,
             ("Every rank calls it; I checked with TORCH_DISTRIBUTED_DEBUG=DETAIL.",)),
            # symptoms told in words that also attribute: a rank that never reached the barrier, a hang not in NCCL
            ("barrier hangs on 4 nodes after a checkpoint",
             "The job hangs on 4 nodes: one rank never reached the barrier because it is stuck in the previous "
             "all_gather. The hang is not in NCCL but in the store.\n" + SCRIPT, ()),
            ("Rank 2 segfaults in the all_reduce with the NCCL backend",
             "Rank 2 dies with a segmentation fault in the all_reduce; our bug tracker has the core dump.\n"
             + SCRIPT, ()),
        ],
    ),
    "scope": (
        [
            ("barrier never returns with gloo on Windows",
             "On my laptop with two processes the gloo barrier blocks forever; I have no other machine.\n" + SCRIPT,
             ()),
            ("Training hangs at the first forward with 2x RTX 3090",
             "Hobbyist with a home rig here; torchrun with two processes, and the first all_gather hangs until the "
             "NCCL timeout.\n" + SCRIPT, ()),
            ("sharding_strategy is ignored by FSDP when a process group of size 1 is passed in",
             "FSDP falls back to NO_SHARD without saying so.\n" + SCRIPT, ()),
            ("NaN loss with GradScaler",
             "One GPU (A10), fp16 autocast with GradScaler. After some thousand steps the loss is wrong: nan, "
             "silently, with no warning.\n" + SCRIPT, ()),
        ],
        [
            ("barrier never returns with gloo across two machines",
             "With two machines over TCP the gloo barrier blocks forever.\n" + SCRIPT, ()),
            ("all_reduce hangs on 2 nodes, fine on one machine",
             "The same script works on one machine and hangs in the first all_reduce on two nodes.\n" + SCRIPT, ()),
            ("barrier with world_size=1 works, with two nodes it hangs",
             "With world_size=1 it works; with two ranks on two nodes the barrier hangs forever.\n" + SCRIPT, ()),
            ("FSDP loss differs from the single-GPU run",
             "With FSDP the loss after 100 steps differs from the single-GPU reference by 20%, with no error.\n"
             + SCRIPT, ()),
        ],
    ),
    "count-vs-version": (
        [
            ("DDP with 8 GPUs is slower per GPU than 1 GPU",
             "We moved the training from 1 GPU to 8 GPUs and each GPU is slower than before. Expected?\n" + SCRIPT,
             ()),
            ("Throughput per GPU drops when going from 2 to 4 nodes",
             "We moved from 2 nodes to 4 nodes and the throughput per GPU is 25% lower.\n" + SCRIPT, ()),
        ],
        [
            ("DDP all_reduce fails after moving to 2.6",
             "We moved from 2.5.1 to 2.6.0 and every all_reduce fails with an NCCL error; same script.\n" + SCRIPT,
             ()),
        ],
    ),
    "quantifier": (
        [
            ("FULL_SHARDED typo in the FSDP docs",
             "I tried every config in the docs page and each one fails with an AttributeError: FULL_SHARDED.\n"
             + SCRIPT, ()),
        ],
        [
            ("torchrun miscounts GPUs with UUID device lists",
             "Every user of our framework on these clusters hits it; we had about 30 user reports this month.\n"
             + SCRIPT, ()),
        ],
    ),
    "wrong-object": (
        [
            ("Docs: the reduce_scatter_tensor example prints the wrong output",
             "The collective itself is fine; only the printed output in the docs example is wrong for rank 1.", ()),
            ("[docs] all_gather example shows the wrong values",
             "The docstring example shows the wrong output values after all_gather.", ()),
            ("all_gather example output",
             "The last lines are wrong: both ranks end with their own tensor twice. The collective is correct, only "
             "the printed output in the example is wrong.", ()),
            # the reporter's verdict that the difference is what should happen
            ("DDP loss between 1 and 4 GPUs",
             "The loss differs in the 4th decimal between the 1-GPU run and the 4-GPU DDP run. Probably the "
             "reduction order; I think it's expected.\n" + SCRIPT, ()),
            # a compiler's exception makes the failure loud
            ("DTensor parameters under compiled autograd",
             "It looks like we are incorrectly generating the proxy for the grad input.\n```\n"
             "torch._dynamo.exc.Unsupported: call_method GetAttrVariable(TensorVariable(), grad) add_\n```\n"
             + SCRIPT, ()),
            # what a checkpoint costs, not what it holds
            ("DCP shards are plain bytes on shared storage",
             "Encrypting every shard ourselves after dcp.save doubles checkpoint time and needs local disk.\n"
             + SCRIPT, ()),
        ],
        [
            ("dcp.load doubles the weights",
             "After dcp.load the checkpoint's weights are doubled: every value is twice the saved one.\n" + SCRIPT,
             ()),
            ("Reduced values on rank 1",  # trust in one's own code is no verdict on the docs
             "I'm sure my code is correct, but the reduced values are wrong on rank 1 and nothing is raised.\n"
             + SCRIPT, ()),
            ("DDP gradients wrong with the bf16 comm hook",  # a verdict on the control is no verdict on the result
             "Without DDP the loss matches the reference, which is expected. With DDP and the bf16 hook the "
             "gradients are wrong after step 2.\n" + SCRIPT, ()),
            ("reduce_scatter_tensor returns the wrong values for rank 1",
             "The output on rank 1 is wrong after reduce_scatter_tensor, the docs say it should hold the sum.\n"
             + SCRIPT, ()),
        ],
    ),
}

ROWS = [(name, i) for name, (rows, _) in TABLE.items() for i in range(len(rows))]
CONTROLS = [(name, i) for name, (_, rows) in TABLE.items() for i in range(len(rows))]


@pytest.mark.parametrize("name,index", ROWS, ids=[f"{n}-{i}" for n, i in ROWS])
def test_words_without_the_fact_are_not_flagged(name, index):
    title, body, comments = TABLE[name][0][index]
    plan = plan_for(title, body, comments=comments)
    assert not flagged(plan), plan.step(5).reason if plan.step(5) else plan.reasons


@pytest.mark.parametrize("name,index", CONTROLS, ids=[f"{n}-{i}" for n, i in CONTROLS])
def test_controls_the_fact_is_still_flagged(name, index):
    title, body, comments = TABLE[name][1][index]
    plan = plan_for(title, body, comments=comments)
    assert flagged(plan), plan.step(5).reason if plan.step(5) else plan.reasons


def test_every_class_has_rows_and_controls():
    assert all(rows and controls for rows, controls in TABLE.values())
    assert {"negation", "hypothetical", "attribution", "scope", "count-vs-version", "quantifier",
            "wrong-object", "belief", "yes-no-question", "setting"} <= set(TABLE)
