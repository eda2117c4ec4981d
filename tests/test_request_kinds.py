"""Step 4 by what is asked, not by error words: a table of invented issues, one or more per kind of request the
procedure names, and controls that must get no type label.

A request is recognised by what the reporter asks for (add, support, allow — in any case —, expose, make ... faster,
a clearer message, an option); the bug template and error words weigh against it only where a failure is
reported, so a request whose subject is an error message, or one filed with the bug template, is still a request.
Feature vs enhancement turns on whether the thing exists today: "there is no way to ... today; please add an
option" is a feature, while "currently" alone says nothing either way.

Every issue here is written in our own words for the case it pins (none is copied from an eval set).
"""

from __future__ import annotations

import pytest

from engine_helpers import REPRO, fenced, plan_for

FEATURE, ENHANCEMENT, PERF = "feature", "enhancement", "module: performance"
BUG_TEMPLATE = "### 🐛 Describe the bug\n\n"
PITCH = "### 🚀 The feature, motivation and pitch\n\n"
VERSIONS = "\n\n### Versions\n\nPyTorch 2.9.0, CUDA 12.8, 8x H100"


def types(plan) -> set[str]:
    return {l for l in plan.add_labels if l in (FEATURE, ENHANCEMENT, PERF)}


# name -> (title, body, the type labels step 4 must add)
REQUESTS = {
    # --- feature: nothing like it exists today
    "feature-no-way-today": (
        "Per-rank memory snapshots from the launcher",
        "A job has no way to collect a memory snapshot from every rank today. Please add an option to the launcher "
        "that dumps one per rank when a worker is killed.",
        {FEATURE}),
    # What "works but is slow" is one of today's alternatives, not the thing asked for: still a feature.
    "feature-alternative-works-but-slow": (
        "Launcher store over a named pipe",
        PITCH + "Right now the choices are TCPStore or FileStore; the latter works but is noticeably slow during init. "
        "We'd like TCPStore to listen on a named pipe path instead.",
        {FEATURE}),
    "feature-new-backend": (
        "[RFC] A new communication backend for optical interconnects",
        PITCH + "We would like to introduce a new backend for our interconnect; currently we maintain it out of tree.",
        {FEATURE}),
    "feature-new-platform": (
        "torch.distributed on Windows with the NCCL-free TCP backend for multi-machine jobs",
        PITCH + "There is no way to run a multi-machine job from Windows hosts today. We would like a backend that "
        "works there.",
        {FEATURE}),
    "feature-mentions-a-crash": (
        "Add a way to dump every rank's Python stacks when one rank crashes",
        PITCH + "When a rank segfaults the others sit in their collectives and we lose what they were doing. No such "
        "facility exists; please add a hook that prints every rank's stack before the job is torn down.",
        {FEATURE}),
    "feature-absent-api": (
        "A collective to gather tensors of different shapes",
        "There is currently no API to all-gather tensors whose first dimension differs per rank; users pad by hand. "
        "Please add one.",
        {FEATURE}),
    "feature-no-tool-today": (
        "A way to find which rank arrives last at a collective",
        "We have no tool to tell which rank is late; please add one that reports it per call.",
        {FEATURE}),
    "feature-heading-and-absent": (
        "[Feature] in-network reduction for all_reduce",
        "No such backend exists in torch.distributed; switches that can sum in the network would halve the traffic.",
        {FEATURE}),
    # --- feature: the title IS a new artifact (a tool, a transport, a placement, a metric), not a change to one
    "feature-artifact-tool": (
        "tool to compare two sharded checkpoints tensor by tensor",
        PITCH + "When a resumed run diverges we cannot tell which saved tensors changed.",
        {FEATURE}),
    "feature-artifact-transport": (
        "RPC: shared-memory transport for same-host workers",
        PITCH + "Workers on one host talk over TCP loopback; a transport over shared memory would skip the sockets.",
        {FEATURE}),
    "feature-artifact-placement": (
        "DTensor: strided placement",
        PITCH + "We want to shard a dimension by every k-th element across the mesh.",
        {FEATURE}),
    "feature-platform-unsupported-error": (
        "ProcessGroupNCCL on HIP for the new MI cards",
        "Creating the group stops with\n```\nNotImplementedError: this device is not supported\n```\n"
        "Please add support for these GPUs.",
        {FEATURE}),
    # --- enhancement: improves what works
    "enhancement-noun-phrase-title": (
        "fully_shard: option to keep the fp32 master weights on CPU",
        "An option for this would let us fit a bigger model on the same GPUs.",
        {ENHANCEMENT}),
    "enhancement-new-option-lowercase-verb": (
        "[FSDP2] allow a per-module reduce dtype",
        "fully_shard already takes a MixedPrecisionPolicy; it would be useful to give each submodule its own.",
        {ENHANCEMENT}),
    "enhancement-expose-existing": (
        "Expose the store's key count on the Python side",
        "The C++ store knows how many keys it holds; we should expose it so users can check it in tests.",
        {ENHANCEMENT}),
    "enhancement-should-in-title": (
        "DeviceMesh slicing should accept a tuple of dim names in any order",
        "Today only the order the mesh was built with works. It would be nice to accept any order.",
        {ENHANCEMENT}),
    "enhancement-noun-phrase-with-ask": (
        "Configurable bucket sizes for the pipeline's send/recv batching",
        "I'd like to be able to tune the batching per stage; we could add an argument to the schedule for it.",
        {ENHANCEMENT}),
    # --- performance enhancement
    "perf-make-faster": (
        "Make DTensor redistribute from Shard to Replicate faster on a single node",
        "The all_gather it issues copies the result twice; the throughput of our training step drops by a third. "
        "We should reuse the output buffer.",
        {ENHANCEMENT, PERF}),
    "perf-unnecessary-copies": (
        "FSDP2 prefetching does unnecessary copies of the unsharded parameters",
        "The extra copies cost memory and make each step slower; an option to skip them would help.",
        {ENHANCEMENT, PERF}),
    "perf-overlap-communication": (
        "Overlap the pipeline's send/recv with the next microbatch's compute",
        "Each stage waits for its sends before starting the next forward, so a step is about 20% slower than it "
        "needs to be. Please make the schedule overlap them.",
        {ENHANCEMENT, PERF}),
    "perf-imperative-reuse": (
        "async_save: reuse the host buffers between checkpoints",
        "Each save allocates pinned host memory again, which costs several seconds per checkpoint.",
        {ENHANCEMENT, PERF}),
    "perf-redundant-work": (
        "broadcast_object_list serialises each object twice",
        "Profiling shows the pickling done a second time on the source rank; it is a third of the call's time.",
        {ENHANCEMENT, PERF}),
    "enhancement-native-instead-of-fallback": (
        "DTensor: a sharding rule for aten.cumsum instead of the replicate fallback",
        "Today the op is computed on the replicated tensor, which gathers everything first.",
        {ENHANCEMENT}),
    # --- asked by what it would buy, by whether it is planned, or by what every user rebuilds today
    "proposal-what-it-would-buy": (
        "DDP: skip non-persistent buffers in broadcast_buffers",
        "Leaving them out would cut the per-step broadcast in half and make our steps faster.",
        {ENHANCEMENT, PERF}),
    "proposal-is-it-planned": (
        "DCP: resumable uploads to object storage",
        "A failed upload of one shard restarts the whole checkpoint write. Is that planned?",
        {ENHANCEMENT}),
    "feature-every-team-rebuilds-it": (
        "checkpoint rotation in torch.distributed.checkpoint",
        "Every team reimplements keeping the last N checkpoints on top of DCP; a helper in the library would remove "
        "that code from every trainer.",
        {FEATURE}),
    "title-verb-after-prefix": (
        "FSDP2: start the next step's first all-gather during the optimizer step",
        "It hides 30 ms of exposed communication per step and makes each step faster.",
        {ENHANCEMENT, PERF}),
    "instead-of-timing-out": (
        "init_process_group: name the rank with a different world size instead of timing out",
        "A stale environment file gave one rank the wrong WORLD_SIZE and we waited thirty minutes.",
        {ENHANCEMENT}),
    "title-is-the-wish": (
        "It would be nice if DeviceMesh printed its dim names",
        "Today the repr shows only the ranks.",
        {ENHANCEMENT}),
    "would-you-accept-a-pr": (
        "Would you accept a PR that adds a timeout argument to monitored_barrier?",
        "We want a shorter wait than the process group's for one call.",
        {ENHANCEMENT}),
    "message-when-an-error-fires": (
        "DDP: print the unused parameters' names when the reduction error fires",
        "Today only their indices are printed unless a debug variable is set.",
        {ENHANCEMENT}),
    "artifact-title-with-prefix": (
        "torchrun: etcd-v3 native rendezvous backend",
        "Our clusters already run etcd v3 and the bundled handler speaks the v2 API only.",
        {FEATURE}),
    "message-subject-instead-of-a-generic-error": (
        "dcp.load: name the shard file instead of a generic planner error",
        "When one .distcp file is missing we only learn that planning failed.",
        {ENHANCEMENT}),
    "message-subject-quoted-error": (
        "DDP: list the parameter names in the 'Expected to have finished reduction' error",
        "Finding the parameter by its index takes a long time in a large model.",
        {ENHANCEMENT}),
    "message-subject-confusing": (
        "init_device_mesh: the error for a mesh larger than the world is confusing",
        "It reports a world size but not the mesh shape that was asked for.",
        {ENHANCEMENT}),
    # --- a clearer error message: the message is the subject, the error word is not a failure
    "clearer-error-when": (
        "Clearer error when init_process_group is given a world_size smaller than the rank",
        "Right now it fails much later with a socket timeout. A clearer message up front would save hours.",
        {ENHANCEMENT}),
    "error-should-be-raised-earlier": (
        "[DTensor] the missing-strategy error should be raised before shape propagation",
        "The error that an operator has no sharding strategy is hidden behind a confusing meta error today.",
        {ENHANCEMENT}),
    "improve-warning-message": (
        "Improve the warning message for an unused parameter in DDP",
        "The message does not say which parameter was unused; it should name it.",
        {ENHANCEMENT}),
    # --- filed with the bug template, but what is asked is new behaviour
    "bug-template-request": (
        "Support a different number of microbatches per stage",
        BUG_TEMPLATE + "The schedules assume every stage gets the same number of microbatches. Please support a "
        "per-stage count so uneven stages can be balanced." + VERSIONS,
        {ENHANCEMENT}),
    "bug-template-option-request": (
        "[DCP] allow skipping missing keys on load",
        BUG_TEMPLATE + "Loading a checkpoint saved before we added a layer stops at the first missing key. An "
        "option to skip keys that are not in the checkpoint would let us warm-start." + VERSIONS,
        {ENHANCEMENT}),
    # --- classes of phrasing read since round 3 (each in our own words)
    "perf-measured-change-tried": (
        "DDP: bucket rebuild walks every parameter for models with thousands of tiny ones",
        "Profiling shows the rebuild is a Python loop. Keeping a sorted index instead brings the "
        "rebuild to 40 ms on the same model, and the outputs are identical.",
        {ENHANCEMENT, PERF}),
    "perf-no-correctness-issue-just-overhead": (
        "DeviceMesh lookups dominate eager step time in small TP models",
        "Each lookup costs ~30 us of CPU and the step is CPU bound. Memoising the lookup cuts the step from 12 ms "
        "to 8 ms. No correctness issue, just overhead.",
        {ENHANCEMENT, PERF}),
    "feature-something-like-an-api": (
        "c10d store: notify waiters when a counter passes a value",
        "What we do today is poll the counter every 100 ms from every rank. What we want is something like\n\n"
        "```python\nstore.wait_until(key, at_least=8)\n```\n\nso ranks sleep until it is reached.",
        {FEATURE}),
    "feature-nowhere-to-hook": (
        "torchrun: a callback before each restart of the worker group",
        "Right now there is nowhere to hook a cleanup step in between; we have been patching the agent in our own "
        "launcher. Something like `--before-restart script.sh` would do.",
        {FEATURE}),
    "feature-but-nothing-for": (
        "A parallel style for grouped experts",
        "The tensor parallel styles cover linear and embedding layers, but nothing for grouped expert weights. Every "
        "team hand-writes the token exchange. It would be great to have one.",
        {FEATURE}),
    "feature-added-compat": (
        "DCP: signed checkpoints, verified on load",
        "Proposal: the writer signs each file and records the signature in the metadata; the reader checks it. "
        "Old checkpoints without signatures load as before. A small prototype costs under 1% of save time.",
        {FEATURE}),
    "enhancement-only-information-missing": (
        "Report which ranks the elastic agent dropped on scale-down",
        "The agent drops ranks on purpose when scaling down, but there is no way to find out which ones afterwards. "
        "Please log them, or return them from the call.",
        {ENHANCEMENT}),
    "enhancement-summary-only-first": (
        "elastic: the error summary only shows the first failure",
        "When many workers fail I end up opening every error file. What I would like the summary to show is every "
        "failed rank with its exit code.",
        {ENHANCEMENT}),
    # --- lab-notebook requests: findings listed, the ask said as what is needed or what is missing
    "feature-what-we-have-in-mind": (
        "Launcher: a per-node check before the job forms",
        "Findings:\n1. One bad node holds up every large job.\n2. There is currently no mechanism in the agent to "
        "run a site check before nodes join.\n\nA pluggable pre-join command is what we have in mind.",
        {FEATURE}),
    "feature-no-collective-exists": (
        "A segmented reduction across ranks",
        "Finding: no segmented, per-key reduction collective exists in c10d for any backend; we build it from "
        "all_gather and local sums.",
        {FEATURE}),
    "enhancement-works-its-time-is-the-issue": (
        "Checkpoint writes on a parallel filesystem",
        "The writer works correctly; the issue is only its time, 40 s per save at 256 ranks.",
        {ENHANCEMENT, PERF}),
    "enhancement-composite-path": (
        "all_to_all on our NPU goes through all_gather plus a local select",
        "The result is right. The vendor library has a native all_to_all that would move a quarter of the data.",
        {ENHANCEMENT}),
    "enhancement-measured-pair-is-not-a-version-pair": (
        "A prefix scan across ranks",
        "No scan collective exists in c10d. We build it from all_gather and a cumsum; it costs 2.4 ms vs 0.1 ms with "
        "the MPI call.",
        {FEATURE}),
    "enhancement-another-stack-on-the-same-machines": (
        "Process group setup at 4096 ranks takes 12 minutes",
        "Findings: the store is the bottleneck. MPI_Init on the same allocation returns in 5 s. A faster setup "
        "would let us restart jobs sooner.",
        {ENHANCEMENT, PERF}),
    "enhancement-works-but-each-call-costs": (
        "Pinned staging buffers are allocated anew on every save",
        "The async save works, but each call spends 30 s allocating the same pinned buffers. Reusing them across "
        "calls would leave only the first save paying for it.",
        {ENHANCEMENT, PERF}),
    "feature-an-exporter-asked": (
        "Ship flight recorder entries to our tracing system",
        "It would be nice to have a built-in exporter that sends each collective's record as a span. Today we "
        "scrape dump files by hand.",
        {FEATURE}),
    "feature-support-for-a-new-thing-in-the-title": (
        "Support for a pluggable per-node readiness probe",
        "Nodes with a bad link join and the job dies an hour in. A command the agent runs first would keep them out.",
        {FEATURE}),
    "enhancement-versions-same-gap-wanted-closed": (
        "Our all_gather reaches 60% of the vendor's standalone figure",
        "The 2.9.1 and 2.10.0 numbers are identical, so this is not a version regression; it is the gap to the "
        "standalone tests we want closed.",
        {ENHANCEMENT}),
    "feature-a-channel-that-would-let": (
        "Per-group hints for the backend",
        "There is currently no mechanism to pass a hint per group. A generic, opaque channel on the options would "
        "let each backend read it.",
        {FEATURE}),
    "enhancement-patches-ready": (
        "Native calls on the second vendor's path",
        "Each op works today through a fallback; the native call is skipped. We have patches for two of them ready.",
        {ENHANCEMENT}),
    "feature-another-scheduler": (
        "torchrun should read the PBS node file",
        "It would be nice if torchrun could take the hosts from the scheduler's file.",
        {FEATURE}),
    "enhancement-only-one-mask-but-correct": (
        "Load balancing is causal-only for context parallel",
        "With packed documents the ranks wait on each other. CP is correct but 30% slower than it could be.",
        {ENHANCEMENT, PERF}),
    "enhancement-unclear-error-title": (
        "Unclear error when the store host resolves to the wrong interface",
        "The job stops with a timeout that does not mention the address it tried. Please add the resolved "
        "address to the message.",
        {ENHANCEMENT}),
}

# name -> (title, body): no type label (bug reports, usage errors, questions, upkeep, tracking issues)
NON_REQUESTS = {
    "usage-error-with-clear-exception": (
        "init_process_group raises ValueError: world_size must be positive",
        BUG_TEMPLATE + fenced("import torch.distributed as dist\ndist.init_process_group('gloo', world_size=0, rank=0)")
        + "\n```\nValueError: world_size must be positive\n```" + VERSIONS),
    "question": (
        "How can I make all_reduce average instead of sum with gloo?",
        "I see ReduceOp.AVG is only supported on NCCL. Is there a recommended way on CPU?"),
    "bug-mentioning-support": (
        "FSDP2 with CPU offload crashes although the docs say it supports it",
        BUG_TEMPLATE + "Training dies in the first backward.\n```\nRuntimeError: Expected all tensors to be on the "
        "same device\n```" + VERSIONS),
    "bug-support-title-with-traceback": (
        "Support for bf16 all_to_all broken in 2.9",
        BUG_TEMPLATE + "```\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
        "RuntimeError: NCCL error: invalid usage\n```" + VERSIONS),
    "dependency-bump": (
        "Update gloo to 0.9 in the nightly builds",
        "The newer release fixes a socket leak on macOS."),
    "tracking-issue": (
        "[Tracking] FSDP2 feature parity with FSDP1",
        PITCH + "A list of what is left to port, with links to the PRs."),
    "removal": (
        "Deprecate the legacy pipeline sync API",
        PITCH + "Nobody should use it any more; we want to remove it in two releases."),
    "disabled-test": (
        "DISABLED test_all_gather_uneven (__main__.ProcessGroupNCCLTest)",
        "Platforms: linux\n\nThis test was disabled because it is failing on trunk. We should add it back once it "
        "passes again."),
    "oom-bigger-batch": (
        "FSDP runs out of memory when the batch size is doubled",
        BUG_TEMPLATE + "Batch 16 trains; batch 32 fails in the first forward.\n```\ntorch.OutOfMemoryError: CUDA out "
        "of memory. Tried to allocate 4.00 GiB\n```" + VERSIONS),
    "question-about-support": (
        "Does fully_shard support models with tied embeddings?",
        "I could not find it in the docs. Should I wrap the tied modules together?"),
    "design-doc-with-open-questions": (
        "RFC: a single timeout contract for every collective backend",
        "## Motivation\n\nBackends time out in different ways today.\n\n## Proposal\n\n1. One default timeout.\n"
        "2. Every backend raises the same error.\n\n## Non-goals\n\n- Changing the watchdog.\n\n"
        "## Open questions\n\n- Should the default depend on the backend?"),
    "tracking-checklist": (
        "[Tracking] DTensor ops that graph-break under compile",
        "- [x] the 1F1B schedule (fixed)\n- [ ] interleaved schedules fall back to eager\n- [ ] the zero-bubble "
        "schedule graph-breaks on the send\n\nWill update as PRs land."),
    "slowness-got-worse-with-a-version": (
        "all_gather got slower after the upgrade",
        BUG_TEMPLATE + "After upgrading to 2.9 the step gets to 40 ms; on 2.8 it was 25 ms." + VERSIONS),
    "memory-gets-full-and-crashes": (
        "FSDP2 step crashes once memory fills up",
        BUG_TEMPLATE + "Memory gets to 95% after 200 steps and then the job crashes with an OOM." + VERSIONS),
    "log-shows-something-like-an-error": (
        "all_to_all fails on 4 nodes with IB",
        BUG_TEMPLATE + "Rank 3 prints something like `NCCL WARN NET/IB: Got completion with error` and the job "
        "fails with a DistBackendError." + VERSIONS),
    "hang-with-no-way-to-tell-which-rank": (
        "barrier hangs on 8 nodes after checkpoint save",
        BUG_TEMPLATE + "The job hangs in the barrier and there is no way to tell which rank never arrived." + VERSIONS),
    "collective-named-but-not-missing": (
        "all_reduce on 8 nodes returns wrong sums",
        BUG_TEMPLATE + "No such error exists in the log, but the sums are wrong on rank 3." + VERSIONS),
    "works-fine-then-fails": (
        "DDP step fails after resuming",
        BUG_TEMPLATE + "The first run works fine; after the resume the job fails with a shape error.\n```\n"
        "RuntimeError: shape mismatch\n```" + VERSIONS),
    "like-to-understand-is-a-question": (
        "Resumed job loads a half-written shard",
        BUG_TEMPLATE + "After a preemption the resumed job loaded a shard with garbage in it and no error. We'd "
        "like to understand whether this is expected." + VERSIONS),
    "a-version-regression-with-times": (
        "reduce_scatter slower on 2.10",
        BUG_TEMPLATE + "After upgrading to 2.10 each call takes 3.1 ms vs 1.2 ms on 2.9; a regression." + VERSIONS),
    "no-crash-only-a-warning": (
        "fully_shard prints the same warning for each parameter",
        BUG_TEMPLATE + "No crash, the run goes on; the warning is printed 400 times at startup." + VERSIONS),
    "support-for-in-a-bug-title": (
        "Support for the gloo backend broken on 2.10",
        BUG_TEMPLATE + "init_process_group with gloo now raises at startup.\n```\nRuntimeError: gloo unavailable\n```"
        + VERSIONS),
    "a-fix-we-have-ready-for-a-crash": (
        "Segfault in allgather on the CPU partition",
        BUG_TEMPLATE + "Every rank dies with SIGSEGV in the first allgather.\n```\nSegmentation fault (core dumped)\n```"
        + VERSIONS),
    "plain-hang": (
        "all_reduce hangs on 16 nodes after the first epoch",
        BUG_TEMPLATE + "Every rank is stuck in the same all_reduce; py-spy shows them all waiting." + VERSIONS),
}


@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_a_request_gets_its_type(case):
    title, body, expected = REQUESTS[case]
    plan = plan_for(title, body)
    assert types(plan) == expected, plan.step(4).reason
    assert REPRO not in plan.add_labels  # step 6: a request needs no reproduction


@pytest.mark.parametrize("case", sorted(NON_REQUESTS))
def test_a_non_request_gets_no_type(case):
    title, body = NON_REQUESTS[case]
    plan = plan_for(title, body)
    assert not types(plan), plan.step(4).reason
    assert plan.step(4).decision == "none"


def test_the_table_covers_every_kind_several_times_and_the_controls():
    # several invented issues per request kind, and the controls issue 17's acceptance names
    kinds = [frozenset(expected) for _, _, expected in REQUESTS.values()]
    assert kinds.count(frozenset({FEATURE})) >= 3
    assert kinds.count(frozenset({ENHANCEMENT})) >= 3
    assert kinds.count(frozenset({ENHANCEMENT, PERF})) >= 3
    assert sum(name.startswith("bug-template") for name in REQUESTS) >= 2
    assert any("crash" in name for name in REQUESTS)
    for control in ("usage-error-with-clear-exception", "question", "disabled-test", "oom-bigger-batch"):
        assert control in NON_REQUESTS
