"""One coherent procedure text (issue 38): each place where blind readers of the model's prompt stopped, because two
sentences said different things, is a row here. A row names the contradiction, the resolved rule in the words the
rendered system prompt now states it (once), the sentences that contradicted it (no longer stated), where the rule
lives in the queue's data (the rubric's wording keys the prompt renders, or the queue's prompt template), and,
where the rubric's own reading follows the same rule, an invented issue the rubric decides by it.

The resolutions come from the procedure's own words (the seed's steps 4-6 and PyTorch's distributed-triage rubric
and label list); pt2's and the storage example's prompts state the ones that apply to them (last test)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from engine_helpers import bundle as distributed_bundle
from engine_helpers import fenced, rest_comment, rest_issue
from llm_helpers import issue

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue
from triage.planners.model.prompt import render
from triage.planners.model.schema import NO_FLAG_REASONS, no_flag_reasons

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = "template"  # the rule is the queue's prompt template's own sentence
SCRIPT = fenced("import torch.distributed as dist\nmodel = DDP(net)\nloss.backward()")


def flat(text: str) -> str:
    return " ".join(text.split())


def rubric_plan(title: str, body: str, comments: tuple[str, ...] = ()):
    snapshot = snapshot_from_json({"issue": rest_issue(title, body), "comments": [
        rest_comment(text, login=f"other{i}", cid=i + 1) for i, text in enumerate(comments)]})
    return plan_issue(snapshot, distributed_bundle())


# ---- what the rubric does under the same rule ------------------------------------------------------------------

def feature_or_enhancement_by_one_test():
    falls_back = rubric_plan("all_to_all for bf16 falls back to a slower path", "Today all_to_all_single with "
                             "bfloat16 currently works but falls back to a slower path through float32 copies. "
                             "Please add a native bf16 path.\n" + SCRIPT)
    assert falls_back.step(4).decision == "enhancement"
    absent = rubric_plan("Add a collective to resize a process group", "There is no way to resize a process group "
                         "today; nothing like this exists in c10d. Please add an API that grows a group in place.")
    assert absent.step(4).decision == "feature"


def slowdown_is_an_enhancement_or_against_a_version_a_regression():
    slow = rubric_plan("Gloo all_reduce is slow on large tensors", "Gloo all_reduce works, the results are correct, "
                       "it is just slow: 1.8 s for 1 GB where MPI takes 0.6 s on the same 25GbE network. Please make "
                       "the Gloo path faster.\n" + SCRIPT)
    assert "enhancement" in slow.add_labels and "module: performance" in slow.add_labels
    assert slow.step(5).decision == "no_flag"
    slower = rubric_plan("FSDP 30% slower after upgrading from 2.4 to 2.5", "The same script runs 30% slower on "
                         "torch 2.5 than it did on torch 2.4; the all-gather no longer overlaps with compute.\n"
                         + SCRIPT)
    assert slower.step(4).decision == "none" and slower.step(5).criteria == ("regression",)


def is_this_expected_asks_a_question():
    plan = rubric_plan("Is a 25% drop in throughput expected going from 2 to 4 nodes?", "We see 25% lower "
                       "throughput per GPU with DDP on 4 nodes than on 2. Is this expected? Any tuning advice?\n"
                       + SCRIPT)
    assert plan.step(4).decision == "none" and plan.step(5).decision == "no_flag"


def one_same_here_is_not_many_users():
    plan = rubric_plan("FSDP state_dict raises KeyError with use_orig_params", "```\nKeyError: 'layer.weight'\n```\n"
                       + SCRIPT, comments=("Same here, we hit this too.",))
    assert plan.step(5).decision == "no_flag"


def crash_is_a_dying_process_not_an_exception():
    exception = rubric_plan("DDP crashes at the first step", "Rank 2 crashes in the backward with this traceback:\n"
                            "```\nTraceback (most recent call last):\n  File \"train.py\", line 3\nValueError: "
                            "expected a tensor of shape [4, 4]\n```\n" + SCRIPT)
    assert exception.step(5).decision == "no_flag"
    terminate = rubric_plan("DDP job dies at the end of training", "At the end of training every rank prints\n```\n"
                            "terminate called after throwing an instance of 'c10::Error'\n```\nand the job exits.\n"
                            + SCRIPT)
    assert terminate.step(5).criteria == ("crash",)


def internal_assert_in_the_reducer_is_c10d():
    reducer = rubric_plan("DDP internal error in the reducer", "```\nRuntimeError: INTERNAL ASSERT FAILED at "
                          "\"/pytorch/torch/csrc/distributed/c10d/reducer.cpp\":700, please report a bug to "
                          "PyTorch.\n```\n" + SCRIPT)
    assert "internal_assert" in reducer.step(5).criteria
    elastic = rubric_plan("torchrun agent fails", "```\nRuntimeError: INTERNAL ASSERT FAILED at \"torch/distributed/"
                          "elastic/agent/server/api.py\":120, please report a bug to PyTorch.\n```\n"
                          + fenced("torchrun --nnodes=2 train.py"))
    assert "internal_assert" not in elastic.step(5).criteria


def hang_affecting_multi_node_training():
    one_node = rubric_plan("all_reduce hangs on one node with 8 GPUs", "With 8 GPUs on one node the all_reduce hangs "
                           "after an hour of training and the NCCL watchdog times out.\n" + SCRIPT)
    assert one_node.step(5).criteria == ("multinode_hang",)
    laptop = rubric_plan("barrier hangs", "The barrier hangs forever on my laptop with two processes (gloo).\n"
                         + SCRIPT)
    assert laptop.step(5).decision == "no_flag"


def a_bug_in_nccl_is_the_queues():
    plan = rubric_plan("Segfault inside NCCL during all_reduce", "Rank 0 segfaults inside ncclAllReduce: "
                       "Segmentation fault (core dumped). It looks like a bug in NCCL 2.18 itself.\n" + SCRIPT)
    assert plan.step(5).criteria == ("crash",)


def prose_steps_are_a_reproduction():
    steps = rubric_plan("DDP fails when one rank skips the optimizer step", "To reproduce:\n\n1. start two ranks "
                        "with torchrun --nproc_per_node=2\n2. skip the optimizer step on rank 1 and call backward\n\n"
                        "The job then raises an error about reduction.")
    assert steps.step(6).decision == "has_reproduction"
    told = rubric_plan("DDP fails when one rank skips the optimizer step", "Start two ranks and skip the optimizer "
                       "step on rank 1; the job then raises an error about reduction.")
    assert told.step(6).decision == "needs_reproduction"


def tensor_parallel_takes_dtensor():
    plan = rubric_plan("parallelize_module with ColwiseParallel raises a shape error", "parallelize_module(model, "
                       "mesh, {'w1': ColwiseParallel()}) raises a shape error in the forward.\n" + fenced(
                           "from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel\n"
                           "parallelize_module(model, mesh, {'w1': ColwiseParallel()})"))
    assert plan.step(2).decision == "parallelisms" and plan.step(3).labels == ("module: dtensor",)


def criteria_first_the_reporters_own_cause_meets_none():
    own = rubric_plan("Segfault in all_reduce after my custom kernel", "Rank 1 segfaults (Segmentation fault (core "
                      "dumped)) right after the all_reduce. Turned out it is our own CUDA kernel writing past the "
                      "buffer; with the kernel removed it works.\n" + SCRIPT)
    assert own.step(5).decision == "no_flag"
    # A request that tells of the limit it hits today reports no failure: no criterion (the answer keys agree: none of
    # their 275 requests is high priority); the rubric counts a request against a flag
    # (`high_priority.counter_evidence.request_weight`).
    asked = rubric_plan("Add a timeout to barrier", "Please add a timeout argument to dist.barrier(): when one of our 8 "
                        "nodes is slow, the other ranks wait in the barrier for hours and we have to kill the job by "
                        "hand. Something like dist.barrier(timeout=timedelta(minutes=5)).")
    assert asked.step(4).decision in ("feature", "enhancement") and asked.step(5).decision == "no_flag"


def running_out_of_memory_is_no_crash():
    killed = rubric_plan("Rank 3 killed by the OOM killer during FSDP training", "During FSDP training on 8 GPUs "
                         "the kernel OOM-killer takes the whole process down on rank 3 after 2 hours.\n"
                         + fenced("model = FSDP(net)\nloss.backward()"))
    assert killed.step(5).decision == "no_flag"
    asked = rubric_plan("Add a memory cap option to all_gather_into_tensor", "Please add an option to cap the memory "
                        "all_gather_into_tensor uses. Motivation: on our hosts the kernel OOM-killer takes the whole "
                        "process down when the gather buffers grow.\n" + SCRIPT)
    assert asked.step(4).decision in ("feature", "enhancement") and asked.step(5).decision == "no_flag"


def a_vpn_hang_on_one_laptop_is_not_flagged():
    plan = rubric_plan("gloo barrier hangs on my laptop when the VPN is on", "On literally one laptop (two processes, "
                       "gloo backend) dist.barrier() hangs forever, but only when my VPN is connected. Setting "
                       "GLOO_SOCKET_IFNAME=lo fixes it.\n" + fenced("dist.init_process_group('gloo', rank=rank, "
                                                                     "world_size=2)\ndist.barrier()"))
    assert plan.step(5).decision == "no_flag"


def composing_it_by_hand_does_not_make_it_exist():
    plan = rubric_plan("Add a prefix-sum collective", "We compute an exclusive prefix sum across ranks by hand with "
                       "all_gather and cumsum. Please add a scan collective to torch.distributed.\n" + SCRIPT)
    assert plan.step(4).decision == "feature"
    elsewhere = rubric_plan("Add a timeout option to barrier", "monitored_barrier already takes a timeout and works on "
                            "gloo. Please add the same timeout option to barrier.\n" + SCRIPT)
    assert elsewhere.step(4).decision == "enhancement"


def two_sub_teams_parts_go_by_the_order():
    # The rubric reads "about the communication layer" as the layer carrying the issue (`routing.routes.infra.
    # min_ratio`): where the collectives' part leads, infra; a wording where DDP's part carries most of the
    # evidence still routes to parallelisms there (not asserted).
    plan = rubric_plan("Support MPS tensors in all_reduce and broadcast", "Please add MPS support to the collectives: "
                       "all_reduce and broadcast on MPS tensors raise 'No backend type associated with device type "
                       "mps'. DDP on an MPS model needs it too.\n"
                       + fenced("dist.init_process_group('gloo')\ndist.all_reduce(t.to('mps'))"))
    assert plan.step(2).decision == "infra"


def one_more_case_of_an_existing_collective_is_an_enhancement():
    plan = rubric_plan("Add all_to_all with uneven splits without padding", "Today we pad every chunk to the largest "
                       "size and call all_to_all_single, then slice the padding off. Please add a native uneven "
                       "all_to_all.\n" + SCRIPT)
    assert plan.step(4).decision == "enhancement"


def dcp_load_is_a_core_component():
    plan = rubric_plan("dcp.load fails for every checkpoint on 2.6", "On torch 2.6 dcp.load raises KeyError for any "
                       "checkpoint, even one it has just saved; every user of DCP hits this.\n" + fenced(
                           "import torch.distributed.checkpoint as dcp\ndcp.save(sd, checkpoint_id='c')\n"
                           "dcp.load(sd, checkpoint_id='c')"))
    assert plan.step(5).criteria == ("many_users",)


def reading_what_an_older_version_wrote_is_a_regression():
    plan = rubric_plan("DCP load fails on a checkpoint saved with 2.4", "After upgrading to torch 2.5, dcp.load can "
                       "no longer read a checkpoint that torch 2.4 wrote: it raises KeyError: 'metadata'. Loading it "
                       "with 2.4 works.\n" + fenced("import torch.distributed.checkpoint as dcp\n"
                                                    "dcp.load(state_dict, checkpoint_id='ckpt')"))
    assert plan.step(5).criteria == ("regression",)


def what_fails_decides_step_1():
    remedy = rubric_plan("CUDA out of memory on one GPU", "Training my model on a single A100 fails with CUDA out of "
                         "memory at the first forward. Will FSDP on 4 GPUs just work for this?\n" + fenced(
                             "model = Net().cuda()\nout = model(x)\ntorch.cuda.OutOfMemoryError: CUDA out of "
                             "memory."))
    assert remedy.step(1).decision == "not_distributed" and "triage review" in remedy.add_labels
    question = rubric_plan("Will FSDP on 4 GPUs fit my 7B model?", "My 7B model does not fit on one A100. Will "
                           "fully_shard on 4 GPUs just work for it, and which settings should I use?")
    assert question.step(1).decision == "distributed" and question.step(4).decision == "none"


@dataclass(frozen=True)
class Row:
    contradiction: str
    rule: str  # the resolved rule, as the rendered system prompt states it
    gone: tuple[str, ...]  # what the prompt said that contradicted it
    where: str  # where the rule lives: a rubric wording key (dotted path) or TEMPLATE
    rubric: Callable[[], None] | None = None  # the rubric's own reading under the same rule


ROWS = [
    Row("feature or enhancement: 'the same thing for other cases exists -> enhancement' against 'nothing like it "
        "exists yet -> feature' and 'code the reporter writes themselves does not make it exist'",
        "The one test between the two: does what is asked exist today in PyTorch in any form (including a slower path "
        "it falls back to)? A form is anything PyTorch itself offers that does it: the same API or component for "
        "other cases (other dtypes, ops, devices, backends or arguments), another option or path, a fallback.",
        ("If nothing like it exists yet", "to get around its absence", "the same thing done slower or through a path"),
        TEMPLATE, feature_or_enhancement_by_one_test),
    # Round 3's blind readers, against the answer keys: 'it must exist for the case asked' turned support for one
    # more device or dtype of an existing collective into a feature (dev2's key: an enhancement), and 'a workaround
    # built from PyTorch's APIs shows it exists' turned new collectives into enhancements (the invented keys:
    # features). The seed's own examples (a native backend for an op that runs via a fallback) decide both.
    Row("feature or enhancement for one more case of an existing API (a device, a dtype, an option): 'it must exist "
        "for the case asked' against 'the same API for other cases is a form of it'",
        "Then it is an `enhancement` of that: a new option, argument or default on it, support for one more case in "
        "it, or making it faster, lighter or clearer",
        ("It must exist for the case asked", "unless some path runs the asked case today",
         "or support for a device or platform that no path runs on today", "an option for what no path in PyTorch"),
        TEMPLATE, one_more_case_of_an_existing_collective_is_an_enhancement),
    Row("enhancement: a new option or one more case of what works",
        "a new option or argument, or support for one more case (a dtype, op, device or argument), including a "
        "native backend for an op, dtype or device that already runs through a fallback",
        ("a new option or default of an existing API",), "types.enhancement.description"),
    Row("a workaround through PyTorch APIs: 'exists through another PyTorch API' against 'code the reporter writes "
        "themselves to get around the gap does not make it exist'",
        "Otherwise it is a `feature`, a new entry point (an API, collective, hook, tool, launcher or backend) "
        "whatever shape the request gives it: what the reporter composes by hand from other APIs (a prefix sum from "
        "all_gather and cumsum), their own kernel or extension, or another library does not make it exist.",
        ("code the reporter writes themselves to get around the gap", "Only PyTorch counts",
         "and so is a workaround the reporter builds only"),
        TEMPLATE, composing_it_by_hand_does_not_make_it_exist),
    Row("feature: a new entry point, even one a user could compose by hand",
        "that nothing in PyTorch provides, even when a user could compose it by hand from other APIs",
        (), "types.feature.description", composing_it_by_hand_does_not_make_it_exist),
    Row("a slowdown is 'a performance enhancement' (step 4) and 'a bug report' (step 5's no-criterion reason)",
        "Speed and memory: something that works but is slower or takes more memory than it should is a performance "
        "`enhancement`; slower or heavier than an earlier version was is a regression: a bug report (`none`) here "
        "and step 5's `regression`;",
        ("an unsupported case, a slowdown or extra memory", "a large slowdown"),
        TEMPLATE, slowdown_is_an_enhancement_or_against_a_version_a_regression),
    Row("a slowdown against an earlier version is the regression criterion",
        "a failure the earlier version did not have (an error, a crash, a hang, wrong results, or a slowdown or "
        "memory growth against that version)",
        (), "high_priority.criteria.regression.description"),
    Row("'is this expected?' about speed: a usage question or an enhancement",
        "A question whether a speed or memory figure is expected (\"is this expected?\", \"is a 25% drop normal on 4 "
        "nodes?\") that asks only for an answer or tuning advice is a usage question (`none`); one that says what in "
        "PyTorch should be faster or lighter (against another backend, algorithm or library, or what the hardware "
        "allows) asks for a performance `enhancement`.",
        (), TEMPLATE, is_this_expected_asks_a_question),
    Row("an error saying the thing is not supported yet is a request (step 4) and 'an unsupported case' a bug report "
        "meeting no criterion (step 5)",
        "quoting an error that says the thing is not supported yet, is still a request.",
        ("an unsupported case",), TEMPLATE),
    Row("does a fitting no_flag reason override a criterion that is met (a request whose motivation names a crash; a "
        "criterion met where the cause is the reporter's setup or code)",
        "A criterion is met by a failure in PyTorch's distributed code (its backends included) that the issue reports: "
        "what happened (or happens when the reporter runs it), not what might happen (\"it could hang\", \"if it "
        "crashes\", \"this would corrupt\"); a failure the issue shows the reporter's own code or setup causes is not "
        "PyTorch's and meets none. A request or a usage question reports no failure and meets no criterion "
        "(`not_a_bug_report`), even when it tells of the limit it hits today (a job that runs out of memory, a hang it "
        "wants a timeout for): what it asks for is step 4's. An issue that reports a failure of PyTorch's and also "
        "asks for a change is a bug report first, judged by its failure,",
        ("The doubt is about what the issue reports", "whatever else it is (a request, a question)",
         "a request's account of a failure it hits today included"), TEMPLATE,
        criteria_first_the_reporters_own_cause_meets_none),
    Row("crash: a process the kernel's OOM killer takes down (literally a signal)",
        "and so is running out of memory (a CUDA out-of-memory error, or the kernel's OOM killer or a scheduler ending "
        "the process for the memory or time it used; more memory than an earlier version used is a `regression`).",
        (), "high_priority.criteria.crash.description", running_out_of_memory_is_no_crash),
    Row("two no_flag reasons fit (a hang on one laptop that the reporter's VPN causes): the order picks setup, the "
        "example of `not_met_where_it_runs` suggested the other",
        "a network, VPN, driver or installation problem on their machines, such as one a setting like "
        "GLOO_SOCKET_IFNAME fixes",
        (), "high_priority.no_flag_reasons.reporter_setup_or_misuse", a_vpn_hang_on_one_laptop_is_not_flagged),
    Row("`not_met_where_it_runs`: only when no cause of the reporter's own is shown (the order and its example agree)",
        "the issue shows it does not happen there, with no cause of the reporter's own shown (e.g. a hang of a "
        "one-process job, or of processes on one personal machine",
        (), "high_priority.no_flag_reasons.not_met_where_it_runs"),
    Row("many_users: is the list of core components closed (does DCP load count)",
        "a core component (any part of torch.distributed a training job runs through: process groups, collectives, "
        "their backends and stores, torchrun, FSDP, DDP, DTensor, pipelining, DCP's save and load)",
        ("a core component (a process group, a collective, FSDP, DDP, DTensor)",),
        "high_priority.criteria.many_users.description", dcp_load_is_a_core_component),
    Row("regression or a compatibility break: this version cannot read what an older one wrote",
        "and this version failing to read what an earlier one wrote (a checkpoint, a saved state dict), which that "
        "version read; a message, log level or default that changed while nothing fails is not one.",
        ("a changed message, log level or default is not one",),
        "high_priority.criteria.regression.description", reading_what_an_older_version_wrote_is_a_regression),
    Row("several no-flag reasons fit at once, with no order between them",
        "Every `no_flag` gives its `no_flag_reason`, the first of these that fits, in this order, and a `quote` "
        "copied from the issue that shows it:",
        ("the one of these that says why no criterion is met",), TEMPLATE),
    Row("many_users: is one confirming commenter enough",
        "one other person saying \"same here\" is one more report, not many",
        ("other people confirming it in comments", "one report does not rule it out"),
        "high_priority.criteria.many_users.description", one_same_here_is_not_many_users),
    Row("crash: a Python exception the reporter calls a crash, a C++ `terminate called`, a watchdog's SIGABRT",
        "the process dies by a signal or an abort (a segfault, SIGABRT or SIGBUS, a core dump, a C++ `terminate "
        "called`, the NCCL watchdog aborting it: after a collective timed out across nodes or GPUs that is "
        "`multinode_hang` too, list both; a timeout message alone, with no abort or death shown, is `multinode_hang` "
        "only) or hits an illegal memory access, however it is reported; a Python exception raised with its message (a ValueError, a RuntimeError about shapes) is an error, not a crash, "
        "even when the reporter calls it one,",
        (), "high_priority.criteria.crash.description", crash_is_a_dying_process_not_an_exception),
    Row("internal_assert 'in c10d or process-group code': DDP's reducer (under c10d), the elastic rendezvous",
        "raised in c10d's code: process groups and their backends, collectives, stores, and DDP's reducer, which is "
        "c10d code; one raised elsewhere (the elastic agent or rendezvous handler, FSDP, DTensor, the reporter's "
        "code) is not this criterion.",
        (), "high_priority.criteria.internal_assert.description", internal_assert_in_the_reducer_is_c10d),
    Row("multinode_hang: the procedure says 'hang affecting multi-node training', the prompt said 'multi-node or "
        "multi-GPU'",
        "A hang affecting multi-node training (NCCL timeout, deadlock in collectives): a collective, the process "
        "group, a store or the training step blocks once the job runs, with processes on several nodes or on "
        "several GPUs of one node (each node of a multi-node job runs the same collectives), however many of its "
        "ranks are stuck; not a hang of a one-process job, of processes on one personal machine (a laptop or "
        "workstation) with no other node, or a wait before its processes have first met (connecting to the store, "
        "the first rendezvous); once they have (the first collective, creating a mesh or a subgroup, a re-rendezvous "
        "after a failure or a restart) a hang is one.",
        ("multi-node or multi-GPU training", "a hang in a multi-node or multi-GPU job",
         "multi-node or multi-GPU job"),
        "high_priority.criteria.multinode_hang.description", hang_affecting_multi_node_training),
    Row("whether a bug in NCCL itself is third-party code",
        "NCCL (RCCL on ROCm), Gloo, MPI, UCC and the other process-group backends are this queue's, not third-party "
        "code: a failure inside them is judged like PyTorch's own",
        (), "high_priority.no_flag_reasons.third_party_code", a_bug_in_nccl_is_the_queues),
    Row("reproduction: whether a prose list of steps counts",
        "a list of steps in prose counts when it says what to run and how (the commands, the settings)",
        (), TEMPLATE, prose_steps_are_a_reproduction),
    Row("reproduction: a body cut off without the clip marker",
        "Only the marker \"[... clipped, N more characters]\" says that text is not shown",
        (), TEMPLATE),
    # Round 3: where the fresh blind readers of the round-2 prompt (the answers of bench/model-answers) still stopped.
    Row("FSDP state dicts: a checkpoint load that fails in FSDP's own state-dict code is both 'loading a checkpoint' "
        "and 'FSDP's own state-dict handling'",
        "FSDP and state dicts: parallelisms when what fails is FSDP's own state-dict code (state_dict_type, "
        "FULL_STATE_DICT or SHARDED_STATE_DICT, ShardedStateDictConfig, full_optim_state_dict), even while it saves "
        "or loads a checkpoint; checkpointing when it is DCP, the state_dict utilities (get_/set_model_state_dict, "
        "get_/set_optimizer_state_dict) or the checkpoint's files themselves.",
        ("checkpointing when the problem is saving or loading a checkpoint; parallelisms when it",), TEMPLATE),
    Row("a bot's or DISABLED-test report that shows a real failure: 'whatever its log shows' against 'none of them "
        "outweighs a criterion that a reported failure meets'",
        "a documentation problem or a test-infrastructure report (a DISABLED or flaky test, a CI job) that shows no "
        "failure of what users run, whatever its log shows: the test's owners look at it; a report, a bot's "
        "included, that traces a failure to what users run",
        ("whatever its log shows: the test's owners look at it; not a bug in what users run",),
        "high_priority.no_flag_reasons.docs_or_test_report"),
    Row("a tracking issue: no type, no flag reason and no reproduction rule named it",
        "a tracking issue (a list of work to follow, asking for nothing itself)",
        (), TEMPLATE),
    Row("a tracking issue's no_flag_reason",
        "a usage question, or a tracking issue",
        (), "high_priority.no_flag_reasons.not_a_bug_report"),
    Row("an option that does not do what it says, or a leak: a performance enhancement or a bug report",
        "an option or feature that does not do what it says (a reshard that does not reshard, a prefetch that does "
        "not prefetch) and memory that grows without bound (a leak) are bug reports (`none`).",
        (), TEMPLATE),
    Row("a failure reported and then asked about ('is this a bug?'): a usage question or a bug report",
        "and so is one that reports a failure and then asks about it (\"is this a bug?\", \"how can I diagnose "
        "it?\"), whoever's the failure turns out to be",
        (), TEMPLATE),
    Row("the reporter's misuse that their own code shows, when nobody says it",
        "clears a criterion only when the reporter or a maintainer says it, or the reporter's own code, commands "
        "or log in the issue show it;",
        (), TEMPLATE),
    Row("a hang while the job is still starting: `not_met_where_it_runs` (first in the order) or `no_criterion_met`",
        "not a wait before the job's processes have first met (connecting to the store, the first rendezvous), which "
        "meets no criterion anywhere (`no_criterion_met`)",
        (), "high_priority.no_flag_reasons.not_met_where_it_runs"),
    Row("a script linked or attached but not shown",
        "so does a script the issue links or attaches (a gist, a file), shown or not.",
        (), TEMPLATE),
    Row("an inlined comment's author whose role is not known",
        "the reporter's only when the login is the reporter's, and another user's otherwise (its role is not known).",
        (), TEMPLATE),
    Row("tensor parallel has no module label",
        "Tensor and sequence parallel (torch.distributed.tensor.parallel: parallelize_module, ColwiseParallel, "
        "RowwiseParallel, SequenceParallel) have no module label of their own: they are built on DTensor and take "
        "`module: dtensor`.",
        (), TEMPLATE, tensor_parallel_takes_dtensor),
    Row("what to quote for a decision the procedure fixes: the route after `not_distributed` is fixed by step 1 too, "
        "and 'the route's quote' was circular there",
        "A decision the procedure fixes from an earlier step quotes the words that decided that step: after "
        "`not_distributed`, the route, modules `not_applicable` and the no_flag_reason `not_distributed` quote step "
        "1's quote; modules `not_applicable` on a route whose team classifies modules itself quotes the route's.",
        ("the route's quote, or step 1's",), TEMPLATE),
    Row("a request split across two sub-teams (collectives on MPS tensors: infra; DDP accepting an MPS model: "
        "parallelisms)",
        "A request or bug with parts for two sub-teams (collectives on MPS tensors, and DDP accepting a model on MPS): "
        "the order above decides it, here infra, for its communication-layer part.",
        (), TEMPLATE, two_sub_teams_parts_go_by_the_order),
    Row("step 1: a distributed question inside a non-distributed failure ('When in doubt, distributed' against 'read "
        "what actually fails')",
        "The doubt is about what fails: a failure on one device with no distributed code stays `not_distributed` when "
        "the issue also asks whether a distributed API would help (\"will FSDP on 4 GPUs just work?\"), as that asks "
        "about a remedy, not a distributed failure, and `not_distributed` still puts it before a person (the review "
        "label); an issue that only asks how to use a distributed API is this queue's (a usage question).",
        (), TEMPLATE, what_fails_decides_step_1),
    Row("a DISABLED or flaky-test report: stated in step 5's prose and in the reasons",
        "whatever its log shows: the test's owners look at it",
        ("A DISABLED or flaky-test report is a test-infrastructure report",),
        "high_priority.no_flag_reasons.docs_or_test_report"),
    # Round 4: where the fresh blind readers of round 4's prompt (the answers of bench/model-answers) still stopped.
    Row("feature or enhancement for a backend: 'a new entry point (... backend)' against 'the same API or component "
        "for other backends' (a Redis store, a file rendezvous backend)",
        "\"Other backends\" is the same API on a backend it does not run on yet (all_to_all on Gloo); a backend that "
        "does not exist yet (a new store, rendezvous or process-group backend) is a new entry point.",
        (), TEMPLATE),
    Row("multinode_hang: a re-rendezvous after a failure, or a subgroup created mid-run, against 'a wait while the job "
        "is still starting (rendezvous)'",
        "once they have (the first collective, creating a mesh or a subgroup, a re-rendezvous after a failure or a "
        "restart) a hang is one.",
        ("while the job is still starting", "while the job first starts"),
        "high_priority.criteria.multinode_hang.description"),
    # Round 5: where the fresh blind readers of round 5's prompt still stopped.
    # Round 6's answers, against the keys: 'a new flag or mode of torchrun is an option on it' typed new modes (a dry
    # run) as enhancements, where the invented keys say feature and dev2's only torchrun option (a restart
    # threshold) tunes what runs today: by what the flag does, both agree.
    Row("feature or enhancement: a new flag or mode of torchrun, 'a new option' against 'a new ... launcher mode'",
        "A flag or mode of a tool is judged by what it does: one that tunes what the tool already does (torchrun's "
        "number of restarts, a timeout) is an option on it; one that makes it do what it does not do at all today "
        "(a dry run that prints the layout, a report it does not write) is a new entry point.",
        ("launcher mode", "a new flag or mode of torchrun is an option on it"), TEMPLATE),
    Row("a failure the reporter shows is their own, then asked about: `not_a_bug_report` (first in the order) or "
        "`third_party_code`",
        "whoever's the failure turns out to be (the reporter's own kernel: `third_party_code`, not "
        "`not_a_bug_report`)",
        (), TEMPLATE),
    Row("a hang while the job starts: `not_met_where_it_runs` (first in the order) against its own 'a hang while the "
        "job first starts is `no_criterion_met`'",
        "which meets no criterion anywhere (`no_criterion_met`)",
        ("a hang while the job first starts is",), "high_priority.no_flag_reasons.not_met_where_it_runs"),
    Row("crash and multinode_hang: a watchdog's timeout line without the abort shown",
        "a timeout message alone, with no abort or death shown, is `multinode_hang` only",
        (), "high_priority.criteria.crash.description", hang_affecting_multi_node_training),
    Row("performance: a request for one more case or an option whose motive is speed or memory",
        "the enhancement's purpose, as the issue gives it, is speed or memory (making something faster or lighter, or "
        "an option or case whose point is to save time or memory), not only its background",
        ("the enhancement is about performance (speed or memory)",), "types.performance.description"),
]


@pytest.fixture(scope="module")
def system() -> str:
    return flat(render(issue(), load_bundle()).system)


def _data(where: str) -> str:
    """The rubric's value at a dotted wording key (types.feature.description, high_priority.no_flag_reasons.X)."""
    from triage.config.safe_yaml import compose_yaml

    path = ROOT / "queues" / "distributed" / "rubric.yaml"
    value, _ = compose_yaml(path.read_text(encoding="utf-8"), str(path))
    for part in where.split("."):
        value = value[part]
    return flat(value)


@pytest.mark.parametrize("row", ROWS, ids=[r.contradiction[:60] for r in ROWS])
def test_the_prompt_states_the_resolved_rule_once_and_not_the_contradicting_one(row, system):
    assert system.count(flat(row.rule)) == 1, row.rule
    for said in row.gone:
        assert said not in system, said
    if row.where == TEMPLATE:  # the template's own sentence (its step-1 answer words filled in)
        template = (ROOT / "queues" / "distributed" / "prompt.md.j2").read_text(encoding="utf-8")
        assert flat(row.rule) in flat(template.replace("{{ not_in_queue }}", "not_distributed"))
    else:  # in the queue's data: the rubric's wording key the prompt renders
        assert flat(row.rule) in _data(row.where), row.where


@pytest.mark.parametrize("row", [r for r in ROWS if r.rubric], ids=[r.contradiction[:60] for r in ROWS if r.rubric])
def test_the_rubric_reads_by_the_same_rule(row):
    row.rubric()


def test_the_no_flag_reasons_are_stated_in_the_order_the_queue_gives(system):
    reasons = no_flag_reasons(load_bundle())
    assert list(reasons) == list(load_bundle().rubric.high_priority.no_flag_reasons)
    assert next(iter(reasons)) == "not_distributed" and list(reasons)[-1] == "no_criterion_met"
    at = [system.index(f"`{name}`: {flat(text)}") for name, text in reasons.items()]
    assert at == sorted(at)


@pytest.mark.parametrize("queue", ["pt2", "storage"])
def test_the_other_queues_prompts_state_the_same_resolutions_in_their_own_words(queue):
    b = load_bundle(queue="pt2") if queue == "pt2" else load_bundle(queue=ROOT / "examples" / "queues" / "storage")
    text = flat(render(issue(), b).system)
    product = "PyTorch" if queue == "pt2" else "this system"
    assert text.count(f"The one test between the two: does what is asked exist today in {product} in any form") == 1
    assert "if nothing like it exists yet" not in text  # the old second test
    # Step 4: the asked case must exist; a new option is no enhancement by its shape (findings 3, 4, 7 of issue 38).
    assert "in any form (including a slower path it falls back to" in text
    assert "the same API" in text and "another option or path, a fallback" in text
    assert "It must exist for the case asked" not in text and "a workaround the reporter builds only" not in text
    for gone in ("or by the same API for other dtypes, ops or arguments", "or for other cases of the same thing",
                 "a new option or default of an existing API", "a script the reporter writes themselves"):
        assert gone not in text, gone
    assert "composes by hand from other APIs" in text
    # Step 5: the criteria first; the reporter's own cause meets none (finding 1).
    assert text.count("A request or a usage question reports no failure and meets no criterion") == 1
    assert "Decide the criteria before the no_flag reasons" in text
    assert "none of them outweighs a criterion that a reported failure meets" in text
    assert "whatever else it is (a request, a question)" not in text
    # Step 2: the precedence decides an issue with parts for two teams (finding 5).
    assert "(a request or bug with parts for two teams included), the first that applies wins:" in text
    assert "the first of these that fits, in this order" in text
    # What a fixed decision quotes: after step 1's answer, step 1's quote (finding 6).
    assert "quotes the words that decided that step: after `not_distributed`, the route, modules `not_applicable` " \
           "and the no_flag_reason `not_distributed` quote step 1's quote" in text
    assert "(the route's, or step 1's)" not in text
    assert "[... clipped, N more characters]" in text
    assert "slower than an earlier version was is" in text or "slower or heavier than an earlier version" in text
    # The reasons are the queue's: no distributed words in a queue that has no collectives.
    reasons = no_flag_reasons(b)
    assert set(reasons) == set(NO_FLAG_REASONS)
    for name, said in reasons.items():
        assert f"`{name}`: {flat(said)}" in text
        if queue == "storage":
            assert not any(word in said for word in ("rank", "collective", "multi-GPU", "kernel")), name
