"""Step 1 sends not-distributed issues away and keeps real distributed bugs: a table in this file's own words.

Every issue is invented here (nothing is copied from a dataset). The rows are the procedure's signs that an issue is
not distributed: a single GPU with no distributed code (said outright, or found by the reporter in a later comment),
a CUDA OOM on one device, a build or packaging failure, a pure torch.compile problem, a domain library, an install
question. The controls carry the same words and are distributed bugs: a single GPU as the run that works, an OOM
under FSDP, an undefined NCCL symbol inside a process group's traceback, a checkpoint loaded in one process, a
comparison that removes DDP and sees the failure go away.
"""

from __future__ import annotations

import pytest

from engine_helpers import fenced, plan_for

DIST_SCRIPT = fenced("import torch.distributed as dist\ndist.init_process_group('nccl')\n"
                     "model = DDP(model, device_ids=[rank])\nloss = model(x).sum()\nloss.backward()")

# (title, body, comments)
AWAY: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "single-gpu-said": (
        "bf16 matmul gives different numbers on two GPU models",
        "I cut our trainer down to a single GPU, no distributed code at all, and the difference stays.\n"
        + fenced("y = torch.nn.Linear(64, 64).cuda().bfloat16()(x)"), ()),
    "single-gpu-in-a-comment": (
        "Training stalls at the start of every epoch",
        "Our job stalls for minutes when an epoch starts. We thought NCCL was the cause.", 
        ("Update: it still hangs without DDP, in a plain python process on one GPU. The loader workers are stuck.",)),
    "oom-one-device": (
        "CUDA out of memory on the second epoch",
        "Single GPU (A10, 24 GB), no DDP. The second epoch runs out of memory with the same batch size.\n"
        + fenced("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"), ()),
    "no-collectives-involved": (
        "fp16 conv output off on one accelerator model",
        "Seen first in a DDP job on two nodes, but no collectives are involved: the reduction below is single-device.\n"
        + fenced("y = torch.nn.functional.conv2d(x.half(), w.half())"), ()),
    "independent-processes": (
        "Loader workers stuck on a shared filesystem",
        "Each of the 16 processes trains its own small model for a sweep, with no communication between processes; "
        "the loader workers stop after an hour.", ()),
    "the-piece-itself-runs-on-one-device": (
        "bf16 GEMM throughput below the vendor figure",
        "The production job spans nodes, but this benchmark is one device: the kernel picked for the second shape "
        "is the slow one.", ()),
    "export-only": (
        "torch.export fails on a model with a dynamic branch",
        "Exporting the model trips on a data-dependent guard; we plan to serve it on many hosts later.", ()),
    "laptop-backend": (
        "layernorm gives nan on mps for fp16",
        "On my macbook the fp16 layernorm returns nan; cpu is fine.", ()),
    "packaging-symbol": (
        "import torch fails: undefined symbol ncclCommSplit",
        "Right after installing the new wheel, `import torch` fails. I am not doing any distributed training.\n"
        + fenced("ImportError: libtorch_cuda.so: undefined symbol: ncclCommSplit"), ()),
    "compile-only": (
        "torch.compile produces wrong gradients for a custom autograd.Function",
        "This is reproducible in a single process with no process group: the compiled backward differs from eager.",
        ()),
    "domain-library": (
        "torchvision decode_jpeg segfaults in DataLoader workers",
        "It reproduces with a single process, no process group, just the DataLoader and decode_jpeg.", ()),
    "install-question": (
        "Which pytorch wheel for a cluster whose driver is CUDA 12.2?",
        "We want to run distributed training later; which binary should we install for this driver?", ()),
    # One GPU named and nothing distributed anywhere: a weak trap is enough.
    "one-gpu-and-nothing-else": (
        "Loss turns NaN after some thousand steps with fp16",
        "One GPU (A10), fp16 autocast with GradScaler. After 6k steps the loss is nan with no error.", ()),
    # The reporter's own word, in the ways people say it.
    "nothing-written-yet": (
        "libtorch_cuda.so: undefined symbol ncclMemAlloc right after installing",
        "I haven't even written any distributed code yet; python dies as soon as I import torch. NCCL is the "
        "distributed thing, so I figured this is the right place.", ()),
    "not-using-any-of-it": (
        "Loss NaN with bf16 autocast",
        "Plain single-process training on one A100; I'm not using DDP or FSDP at all. The loss is NaN at step 2k.", ()),
    "none-whatsoever": (
        "Model gives different results on CPU and GPU",
        "A single device comparison, no distributed training whatsoever: the logits differ in the third decimal.", ()),
    "no-distributed-clause-end": (
        "Notebook keeps grabbing the first GPU",
        "I only want to train a small model on the second card of our shared machine, no multi-GPU stuff, no "
        "distributed. It still allocates memory on the first card.", ()),
    "removed-ddp-same-error": (
        "Inductor assert when compiling our DDP model",
        "torch.compile of the DDP-wrapped model asserts on the first step.\n" + DIST_SCRIPT,
        ("Update: I removed DDP and ran it on one GPU without init_process_group: same assert, same line.",)),
    "question-after-the-finding": (
        "compile crash with masked conv",
        "I stripped it down: the crash happens on one GPU with no DDP and no process group at all, so maybe this "
        "is more of a compiler thing?", ()),
    "a-domain-library-problem-said": (
        "Detection references: evaluation prints AP 0.000",
        "Training runs with torchrun, the evaluation prints zeros. I think this is a torchvision references "
        "problem, happy to move it to pytorch/vision.\n" + fenced("torchrun --nproc-per-node=2 train.py", "bash"),
        ()),
    "nothing-distributed-running": (
        "import torch aborts with undefined symbol ncclMemAlloc after a conda update",
        "`import torch` aborts straight away. I'm not running anything distributed, it is only the import.\n"
        + fenced("ImportError: libtorch_cuda.so: undefined symbol: ncclMemAlloc")
        + fenced("ldd libtorch_cuda.so | grep nccl", "bash"), ()),
    "not-using-ddp-yet": (
        "Dataloader stalls after the first epoch",
        "One workstation, one GPU; I'm not using DDP yet, I plan to next quarter. With num_workers=0 it is fine.",
        ()),
    "ci-report-for-a-test-elsewhere": (
        "DISABLED test_softmax_half (__main__.TestNNCUDA)",
        "Platforms: linux\n\nThis test was disabled because it is failing in CI.\n\nTest file path: `test_nn.py`",
        ()),
}

KEPT: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "one-device-as-the-control": (  # the one-device run is the control; the distributed run fails
        "DDP on 8 GPUs returns wrong grads",
        "On one device the grads match; with DDP on 8 GPUs they are off by a factor of 8.\n" + DIST_SCRIPT, ()),
    "a-rank-issues-no-collectives": (  # one rank leaves a collective out: the job is distributed, the others wait
        "all_reduce waits forever on three ranks of four",
        "Rank 3 takes an early-exit branch, so no collectives are issued by it and the other ranks hang.\n"
        + DIST_SCRIPT, ()),
    "not-using-ddp-yet-but-fsdp": (  # the distributed code that is run is named
        "FSDP2 hangs in the first all-gather on two nodes",
        "We are not using DDP yet, only fully_shard across 2 nodes; the first all-gather never returns.\n"
        + DIST_SCRIPT, ()),
    "ci-report-for-a-distributed-test": (
        "DISABLED test_all_gather_uneven (__main__.ProcessGroupNCCLTest)",
        "Platforms: linux\n\nThis test was disabled because it is failing in CI.\n\n"
        "Test file path: `distributed/test_c10d_nccl.py`", ()),
    "single-gpu-as-control": (
        "DDP loss differs from the single-GPU run",
        "On one GPU the loss goes down as expected; with DDP on 8 GPUs it is off by a factor of 8.\n" + DIST_SCRIPT,
        ()),
    "without-ddp-it-works": (
        "Segfault in backward with DDP and our fused kernel",
        "Without DDP (single GPU) everything works; with DDP the backward segfaults.\n" + DIST_SCRIPT, ()),
    "oom-under-fsdp": (
        "FSDP2 runs out of memory where FSDP1 did not",
        "CUDA out of memory with fully_shard on 8 GPUs; the same model fit with FSDP1.\n" + DIST_SCRIPT, ()),
    "nccl-symbol-in-a-pg": (
        "ProcessGroupNCCL fails with undefined symbol when creating a communicator",
        "init_process_group works, then the first all_reduce fails on every rank.\n" + DIST_SCRIPT
        + fenced("RuntimeError: NCCL error in ProcessGroupNCCL.cpp: undefined symbol: ncclCommInitRankConfig"), ()),
    "checkpoint-in-one-process": (
        "Loading a 64-rank DCP checkpoint in a single process for evaluation",
        "Our eval runs in a single Python process, no torchrun, no process group. dcp.load of the FSDP2 "
        "checkpoint written by 64 ranks fails with a planner error; DCP should support this.\n"
        + fenced("import torch.distributed.checkpoint as dcp\ndcp.load(state_dict, checkpoint_id=path)"), ()),
    "single-gpu-is-great": (  # "it's great" names the run that works
        "Segfault with fully_shard and our fused RMSNorm kernel",
        "On a single GPU without FSDP it's great, 12% faster than eager. With fully_shard the process dies with a "
        "segmentation fault in the first forward.\n" + DIST_SCRIPT, ()),
    "removed-ddp-and-it-works": (
        "Loss diverges with DDP and gradient accumulation",
        "The loss diverges after a few hundred steps.\n" + DIST_SCRIPT,
        ("I removed DDP and ran on one GPU: the loss is fine, so it is the sync.",)),
    "one-gpu-per-rank": (  # the same words, with the distributed run named
        "Loss turns NaN after some thousand steps with fp16",
        "One GPU per rank, 8 ranks with DDP, fp16 autocast with GradScaler. After 6k steps the loss is nan.", ()),
    "asked-not-told": (  # a maintainer's question is not the reporter's finding
        "all_gather hangs on two nodes",
        "The all_gather hangs after an hour on two nodes.",
        ("Does it still hang without DDP, on one GPU?",)),
}


@pytest.mark.parametrize("name", sorted(AWAY))
def test_a_not_distributed_issue_is_sent_away(name):
    title, body, comments = AWAY[name]
    plan = plan_for(title, body, comments=comments)
    assert plan.outcome == "not_distributed", plan.step(1).reason


@pytest.mark.parametrize("name", sorted(KEPT))
def test_controls_a_distributed_bug_with_the_same_words_stays(name):
    title, body, comments = KEPT[name]
    plan = plan_for(title, body, comments=comments)
    assert plan.outcome != "not_distributed", plan.step(1).reason


def test_a_not_distributed_outcome_is_never_flagged():
    """Step 1 stops the procedure: whatever crash, hang or wrong-result words the issue carries, no flag."""
    plan = plan_for("Segfault and silently wrong results in torchvision transforms",
                    "It crashes with a segfault and the outputs are silently wrong. It reproduces in a single "
                    "process, no process group.")
    assert plan.outcome == "not_distributed"
    assert "high priority" not in plan.add_labels and all(s.step != 5 for s in plan.steps)
