"""The seed's steps 0-6, one behaviour per test, on hand-written distributed issues.

Each test names the step it pins; removing that step's behaviour from the engine makes it fail.
"""

from __future__ import annotations

import pytest

from engine_helpers import (
    CKPT, HIGH, INFRA, MARKER, PAR, QUEUE, REPRO, REPRO_MARK, REVIEW, SUB_ONCALLS, bundle, fenced, plan_for, rest_comment, snap,
)
from triage.core import steps

FSDP_NAN = ("FSDP mixed precision gives nan loss",
            "When I enable FSDP MixedPrecision with bf16 the loss becomes nan after a few steps.")
REPRO_SCRIPT = fenced("""
import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
model = FSDP(net, mixed_precision=mp)
loss = model(x).sum()
""")


def oncalls(plan):
    return [l for l in plan.add_labels if l in SUB_ONCALLS]


# --- step 0 -------------------------------------------------------------------------------------------


def test_step0_module_and_sub_oncall_means_already_triaged_marker_only():
    plan = plan_for(*FSDP_NAN, labels=(QUEUE, "module: fsdp", PAR))
    assert plan.outcome == "already_triaged"
    assert plan.add_labels == (MARKER,)
    assert plan.comment is None
    assert plan.reasons[0].startswith("step 0")


def test_step0_infra_module_with_checkpointing_sub_oncall_also_counts():
    plan = plan_for("anything", "no text", labels=(QUEUE, "module: nccl", CKPT))
    assert plan.outcome == "already_triaged" and plan.add_labels == (MARKER,)


@pytest.mark.parametrize("existing", [("module: fsdp",), (PAR,)])
def test_step0_only_one_of_them_continues(existing):
    plan = plan_for(*FSDP_NAN, labels=(QUEUE, *existing))
    assert plan.outcome != "already_triaged"
    assert plan.sub_oncall == PAR
    assert "module: fsdp" in plan.modules
    assert MARKER in plan.add_labels


def test_step0_foreign_module_like_labels_do_not_count():
    # `module: cuda` is not in the allowlist, so it is not a distributed module classification
    plan = plan_for(*FSDP_NAN, labels=(QUEUE, "module: cuda", PAR))
    assert plan.outcome != "already_triaged"


def test_step0_function_reason():
    b = bundle()
    result = steps.step0_already_triaged(snap("t", labels=(QUEUE, "module: ddp")), b.labels)
    assert not result.stop and result.step == 0 and "module: ddp" in result.reason


# --- step 1 -------------------------------------------------------------------------------------------

IMPORT_SYMBOL = ("import torch fails with undefined symbol",
                 "After a pip install on one GPU, `import torch` fails:\n\n"
                 "```\nImportError: /site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclAlltoAll\n```\n"
                 "I do not use any distributed code.")


def test_step1_build_issue_is_not_distributed():
    plan = plan_for(*IMPORT_SYMBOL)
    assert plan.outcome == "not_distributed"
    assert set(plan.add_labels) == {REVIEW, MARKER}
    assert plan.comment is not None and plan.comment.template == "not_distributed"
    assert plan.sub_oncall is None and plan.modules == ()
    assert any(r.startswith("step 1: not distributed") and "trap-import-symbol" in r for r in plan.reasons)


def test_step1_undefined_nccl_comm_symbol_at_import_is_not_distributed():
    plan = plan_for("import torch fails: undefined symbol ncclCommInitRank",
                    "After pip install, `import torch` fails:\n\n"
                    "```\n>>> import torch\nImportError: /site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommInitRank\n```\n"
                    "I use a single GPU and no distributed code.")
    assert plan.outcome == "not_distributed"
    assert set(plan.add_labels) == {REVIEW, MARKER}


def test_step1_never_removes_the_queue_label():
    plan = plan_for(*IMPORT_SYMBOL, labels=(QUEUE, "oncall: pt2"))
    # a plan can only add: the queue label and oncall: pt2 stay because nothing removes them
    assert not hasattr(plan, "remove_labels")
    assert "remove_labels" not in plan.to_dict()
    assert QUEUE not in plan.add_labels


def test_step1_trap_with_strong_distributed_evidence_stays_distributed():
    # CUDA OOM is a single-GPU trap, but here it happens inside FSDP's all-gather: distributed
    plan = plan_for("CUDA out of memory in FSDP all_gather with FULL_SHARD",
                    "CUDA out of memory during FSDP forward.\n\n" + REPRO_SCRIPT)
    assert plan.outcome != "not_distributed"
    assert "module: fsdp" in plan.modules


# --- step 2 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title, body, route",
    [
        ("NCCL watchdog timeout while training with FSDP",
         "Training with FSDP on 16 GPUs, after two hours:\n\n```\n[rank3]:[E ProcessGroupNCCL.cpp:563] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=9, OpType=_ALLGATHER_BASE) ran for 600000 milliseconds\n```", INFRA),
        ("FSDP state_dict_type with ShardedStateDictConfig returns empty shards",
         fenced("from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType, ShardedStateDictConfig\n"
                "with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT, ShardedStateDictConfig()):\n"
                "    sd = model.state_dict()"), PAR),
        ("dcp.load cannot read a checkpoint written by dcp.save",
         fenced("import torch.distributed.checkpoint as dcp\ndcp.save(state, checkpoint_id=path)\ndcp.load(state, checkpoint_id=path)"), CKPT),
        ("torchrun rendezvous fails on the second node",
         "`torchrun --nnodes 2 --rdzv_backend c10d --rdzv_endpoint host:29500 train.py`\n\n"
         "```\ntorch.distributed.elastic.rendezvous.api.RendezvousConnectionError: connection to the store failed\n```", INFRA),
        ("DDP raises an error in the backward pass",
         "The job launches fine with torchrun. During the backward pass DDP raises:\n\n"
         "```\nRuntimeError: Expected to have finished reduction in the prior iteration\n```\n" + fenced("model = DDP(model)"), PAR),
        ("init_process_group fails with the gloo backend",
         fenced("import torch.distributed as dist\ndist.init_process_group(backend='gloo', init_method='tcp://127.0.0.1:1')") +
         "\n```\nRuntimeError: unsupported backend on this platform\n```", INFRA),
    ],
    ids=["nccl-timeout-during-fsdp", "fsdp-state-dict-config", "dcp-save-load", "torchrun-rendezvous",
         "ddp-after-launch", "backend-init"],
)
def test_step2_rubric_edge_cases(title, body, route):
    plan = plan_for(title, body)
    assert oncalls(plan) == [route]
    assert plan.sub_oncall == route
    assert any(r.startswith("step 2") for r in plan.reasons)


def test_step2_infra_and_checkpointing_stop_with_marker_and_no_module():
    for title, body in [("NCCL watchdog log lines are too verbose", "The watchdog prints a line for every all_reduce " + fenced("dist.all_reduce(t)")),
                        ("DCP async_save writes nothing", fenced("import torch.distributed.checkpoint as dcp\ndcp.async_save(sd, checkpoint_id=p)"))]:
        plan = plan_for(title, body)
        assert plan.outcome == "routed"
        assert plan.add_labels[-1] == MARKER
        assert not any(l.startswith("module: ") for l in plan.add_labels)
        assert plan.modules == () and plan.confidence is None
        assert plan.comment is None  # routed issues get no reproduction request from us
        assert any(r.startswith("stop:") for r in plan.reasons)


def test_step2_precedence_checkpointing_over_infra_over_parallelisms():
    # DCP save that fails with a gloo collective error under FSDP: all three routes have evidence
    plan = plan_for("DCP save of an FSDP model fails in a gloo all_gather",
                    fenced("import torch.distributed.checkpoint as dcp\nmodel = FSDP(net)\ndcp.save(model.state_dict(), checkpoint_id=p)") +
                    "\nThe collective all_gather_object in the gloo process group raises during dcp.save.")
    assert oncalls(plan) == [CKPT]
    infra_over_par = plan_for("NCCL error in all_reduce under DDP",
                              "```\ntorch.distributed.DistBackendError: NCCL error in ProcessGroupNCCL.cpp, ncclSystemError\n```\n" +
                              fenced("model = DDP(m)\ndist.all_reduce(t)"))
    assert oncalls(infra_over_par) == [INFRA]


def test_step2_defaults_to_parallelisms_when_unsure():
    plan = plan_for("Training misbehaves on several GPUs", "The numbers look different, not sure why.")
    assert oncalls(plan) == [PAR]
    assert any("by default" in r for r in plan.reasons)


@pytest.mark.parametrize("existing", [INFRA, CKPT])
def test_step2_existing_sub_oncall_is_kept_and_no_second_added(existing):
    # an FSDP issue a human already sent elsewhere: keep it, stop after routing
    plan = plan_for(*FSDP_NAN, labels=(QUEUE, existing))
    assert oncalls(plan) == []
    assert plan.sub_oncall == existing
    assert plan.outcome == "routed" and plan.add_labels == (MARKER,)
    assert any("keeps existing sub-oncall" in r for r in plan.reasons)


def test_step2_existing_parallelisms_continues_to_step3():
    plan = plan_for("NCCL watchdog log lines are too verbose", "The watchdog prints a line per collective " + fenced("model = FSDP(m)"),
                    labels=(QUEUE, PAR))
    assert oncalls(plan) == [] and plan.sub_oncall == PAR
    assert plan.outcome in ("classified", "needs_review")
    assert any(r.startswith("step 3") for r in plan.reasons)


# --- step 3 -------------------------------------------------------------------------------------------


def test_step3_high_confidence_adds_module_and_marker():
    plan = plan_for(FSDP_NAN[0], FSDP_NAN[1] + "\n" + REPRO_SCRIPT)
    assert plan.outcome == "classified" and plan.confidence == "high"
    assert plan.add_labels == (PAR, "module: fsdp", MARKER)


def test_step3_medium_confidence_from_one_clear_mention():
    plan = plan_for("Loss diverges after a few hundred steps", "This happens when I wrap the model in FSDP.\n" + fenced("train()"))
    assert plan.confidence == "medium"
    assert plan.modules == ("module: fsdp",) and REVIEW not in plan.add_labels


def test_step3_low_confidence_adds_review_and_no_module():
    plan = plan_for("Training misbehaves on several GPUs", "The numbers look different, not sure why.")
    assert plan.outcome == "needs_review" and plan.confidence == "low"
    assert REVIEW in plan.add_labels and MARKER in plan.add_labels
    assert not any(l.startswith("module: ") for l in plan.add_labels)
    assert any("no guess" in r for r in plan.reasons)


def test_step3_multiple_modules_fsdp2_with_dtensor_error():
    plan = plan_for("FSDP2 fully_shard: DTensor redistribute error in backward",
                    fenced("from torch.distributed.fsdp import fully_shard\nfully_shard(model)\nout = model(x)") +
                    "\n```\nRuntimeError: DTensor redistribute from Shard(0) to Replicate() is not supported\n```")
    assert set(plan.modules) == {"module: fsdp", "module: dtensor"}
    assert {"module: fsdp", "module: dtensor"} <= set(plan.add_labels)


def test_step3_a_module_tagged_in_the_title_is_chosen_whatever_its_share():
    # FSDP dominates the body (the script, the API, the words); DTensor is only the reporter's own title tag.
    body = ("fully_shard with reshard_after_forward fails in FSDP's backward under FSDP2.\n" +
            fenced("from torch.distributed.fsdp import fully_shard\nfully_shard(model, reshard_after_forward=2)\n"
                   "fully_shard(model.layers[0])\nout = model(x)"))
    tagged = plan_for("[DTensor][FSDP] error in backward with reshard_after_forward", body)
    assert set(tagged.modules) == {"module: fsdp", "module: dtensor"}
    # Named only in passing in the body, the same module is kept out by its small share.
    untagged = plan_for("[FSDP] error in backward with reshard_after_forward", body + "\nThe params are DTensors.")
    assert untagged.modules == ("module: fsdp",)


def test_step3_keeps_pt2_and_adds_modules_alongside():
    plan = plan_for("torch.compile of an FSDP2 model fails in dynamo",
                    fenced("from torch.distributed.fsdp import fully_shard\nfully_shard(model)\nmodel = torch.compile(model)"),
                    labels=(QUEUE, "oncall: pt2"))
    assert plan.outcome == "classified"  # not "not distributed": the compile issue has a distributed component
    assert "module: fsdp" in plan.add_labels and "oncall: pt2" not in plan.add_labels


def test_step3_dataparallel_is_not_ddp():
    dp = plan_for("nn.DataParallel gathers outputs on the wrong device",
                  fenced("model = torch.nn.DataParallel(net, device_ids=[0, 1])\nout = model(x)"))
    assert dp.modules == ("module: data parallel",)
    ddp = plan_for("DistributedDataParallel gathers buckets on the wrong device",
                   fenced("model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])\nout = model(x)"))
    assert ddp.modules == ("module: ddp",)


def test_step3_activation_checkpointing_is_not_distributed_checkpoint():
    plan = plan_for("checkpoint_wrapper with use_reentrant=False breaks backward",
                    "Activation checkpointing of a block gives a shape mismatch.\n" +
                    fenced("from torch.utils.checkpoint import checkpoint\nblock = checkpoint_wrapper(block)\nloss.backward()"))
    assert oncalls(plan) == [PAR]
    assert plan.modules == ("module: activation checkpointing",)


def test_step3_existing_module_label_counts_as_evidence():
    plan = plan_for("Loss diverges after some steps", "No idea why.", labels=(QUEUE, "module: pipelining"))
    assert plan.sub_oncall == PAR and "module: pipelining" in plan.modules
    assert "module: pipelining" not in plan.add_labels  # already there, never re-added


# --- step 4 -------------------------------------------------------------------------------------------


def test_step4_bug_report_gets_no_type_label():
    plan = plan_for(FSDP_NAN[0], FSDP_NAN[1] + "\n" + REPRO_SCRIPT)
    assert not {"feature", "enhancement", "module: performance"} & set(plan.add_labels)
    # Not a request; what weighed against one (the failure it reports) may be quoted.
    assert plan.step(4).decision == "none" and plan.step(4).reason.startswith("step 4: not a request")


def test_step4_feature_request():
    plan = plan_for("Add support for uneven sharding in FSDP",
                    "### 🚀 The feature, motivation and pitch\n\nPlease add a new API option so FSDP can shard parameters unevenly. "
                    "Nothing like this exists today.")
    assert "feature" in plan.add_labels and "enhancement" not in plan.add_labels
    assert REPRO not in plan.add_labels and plan.comment is None  # step 6: a request needs no repro


def test_step4_falls_back_to_slower_path_is_enhancement_with_performance():
    plan = plan_for("FSDP reduce-scatter falls back to a slower path for bf16 gradients",
                    "### 🚀 The feature, motivation and pitch\n\nCurrently FSDP falls back to an fp32 reduce-scatter for bf16 "
                    "gradients. Doing it natively in bf16 would improve throughput.")
    assert "enhancement" in plan.add_labels and "feature" not in plan.add_labels
    assert "module: performance" in plan.add_labels
    assert REPRO not in plan.add_labels and plan.comment is None


def test_step4_non_performance_enhancement_has_no_performance_label():
    plan = plan_for("Better error message when DDP finds unused parameters",
                    "DDP already works with find_unused_parameters, but the error message should be more helpful: improve the "
                    "error message to name the parameter.")
    assert "enhancement" in plan.add_labels
    assert "module: performance" not in plan.add_labels


# --- step 5 -------------------------------------------------------------------------------------------

HIGH_PRIORITY_CASES = {
    "segfault": ("Segmentation fault in FSDP forward", fenced("model = FSDP(net)\nmodel(x)") + "\nSegmentation fault (core dumped)"),
    "silent-wrong": ("DDP gradients are silently wrong across ranks",
                     "DDP gives wrong gradients without any error: gradients are not synchronized.\n" + fenced("model = DDP(m)")),
    "regression": ("FSDP training broken after upgrading to 2.6",
                   "This used to work in 2.5; since upgrading FSDP fails at the first step.\n" + fenced("model = FSDP(m)")),
    "multinode-hang": ("DDP job hangs on multi-node runs",
                       "With 4 nodes the DDP job hangs in the first all_reduce.\n" + fenced("model = DDP(m)")),
    "checkpoint-corruption": ("DCP checkpoint corrupted after async_save",
                              "After dcp.async_save the checkpoint is corrupted.\n" + fenced("dcp.async_save(sd, checkpoint_id=p)")),
    "internal-assert": ("all_reduce fails with an internal assert",
                        "```\nRuntimeError: t.is_cuda() INTERNAL ASSERT FAILED at torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:123\n```\n" +
                        fenced("dist.all_reduce(t)")),
}


@pytest.mark.parametrize("case", sorted(HIGH_PRIORITY_CASES))
def test_step5_possible_high_priority_goes_to_review_without_marker(case):
    plan = plan_for(*HIGH_PRIORITY_CASES[case])
    assert plan.outcome == "high_priority"
    assert REVIEW in plan.add_labels
    assert MARKER not in plan.add_labels
    assert HIGH not in plan.add_labels
    assert plan.comment is None
    assert any(r.startswith("step 5: possibly high priority") for r in plan.reasons)


def test_step5_high_priority_still_routes_and_classifies():
    plan = plan_for(*HIGH_PRIORITY_CASES["segfault"])
    assert plan.add_labels == (PAR, "module: fsdp", REVIEW)


def test_step5_plain_bug_is_not_high_priority():
    plan = plan_for(FSDP_NAN[0], FSDP_NAN[1] + "\n" + REPRO_SCRIPT)
    assert plan.outcome == "classified" and REVIEW not in plan.add_labels


# --- step 6 -------------------------------------------------------------------------------------------


def test_step6_no_reproduction_adds_label_and_comment():
    plan = plan_for(*FSDP_NAN)
    assert REPRO in plan.add_labels and plan.add_labels[-1] == MARKER
    assert plan.comment.template == "needs_distributed_reproduction"
    assert plan.comment.body.rstrip().endswith(REPRO_MARK)
    assert "step 6: no script, code or steps to reproduce" in plan.reasons


@pytest.mark.parametrize(
    "extra",
    [
        REPRO_SCRIPT,
        "Run it with `torchrun --nproc_per_node 2 train.py` on two GPUs.",
        "Steps:\n1. wrap the model with FSDP and bf16 MixedPrecision\n2. train ten steps\n3. the loss is nan",
        "The full multi-node script is at https://gist.github.com/someone/0123abcd",
    ],
    ids=["code-block", "launch-command", "steps", "script-link"],
)
def test_step6_any_reproduction_suppresses_the_request(extra):
    plan = plan_for(FSDP_NAN[0], FSDP_NAN[1] + "\n\n" + extra)
    assert REPRO not in plan.add_labels and plan.comment is None
    assert any(r.startswith("step 6: has a reproduction") for r in plan.reasons)


def test_step6_repro_in_a_human_comment_counts():
    comment = "Repro:\n\n" + REPRO_SCRIPT + "\nlaunched with `torchrun --nproc_per_node 2 repro.py`"
    plan = plan_for(*FSDP_NAN, comments=[comment])
    assert REPRO not in plan.add_labels and plan.comment is None


def test_step6_script_alone_in_a_human_comment_counts():
    plan = plan_for(*FSDP_NAN, comments=["Here is a repro:\n\n" + REPRO_SCRIPT])
    assert REPRO not in plan.add_labels


def test_step6_repro_in_a_bot_comment_does_not_count():
    bot = rest_comment("Repro:\n\n" + REPRO_SCRIPT + "\n`torchrun --nproc_per_node 2 repro.py`", login="helper[bot]", user_type="Bot")
    plan = plan_for(*FSDP_NAN, comments=[bot])
    assert REPRO in plan.add_labels


def test_step6_not_for_routed_issues():
    plan = plan_for("DCP load hits KeyError", "dcp.load fails with KeyError for the optimizer state.")
    assert plan.outcome == "routed" and REPRO not in plan.add_labels and plan.comment is None
