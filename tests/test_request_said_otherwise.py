"""Step 4 for requests said otherwise than as a request: asked as a question, told after the reporter's own mistake,
told in hindsight, or labelled by the reporter themself. Each class with controls that must stay what they are.

- A question put to the project about what it could do, or why it must do what it does ("could the error say
  which rank?", "why does the writer have to use one thread by default?"), asks for a change; a question about
  the reporter's own use ("can I ...?", "how do I ...?"), a guess at a cause ("could the driver be the problem?")
  and a question about a failure ("why does it hang?") do not.
- A failure the reporter puts on their own side ("my mistake", "our fault") reports nothing wrong in PyTorch: what
  the issue then asks for (a clearer message, a check) decides, and with no ask it stays no request.
- Hindsight in a post-mortem ("a rank list would have saved us a day") is what a change would buy.
- The reporter's own verdict ("not a bug really, more of a wish") supports a request; "not a bug, just a question"
  is a question, and a list of questions for an answer is a question issue.
- Feature vs enhancement by existence, said in other words: "I couldn't find any placement that", "the only path
  we have today is", "I can't build it myself with a hook", "isn't a thing", "X only supports A" (asking for B),
  "it's CUDA-only" (asking for CPU) say the thing is absent; a change to how an existing default or message
  behaves is an enhancement, and so is a native path for a case that runs today by a fallback (the procedure's own
  example).

Every issue here is written in our own words for the case it pins; none is copied from an eval set.
"""

from __future__ import annotations

import pytest

from engine_helpers import fenced, plan_for

FEATURE, ENHANCEMENT, NONE = "feature", "enhancement", "none"
PERF = "module: performance"


def decision(title: str, body: str) -> str:
    return plan_for(title, body).step(4).decision


def reason(title: str, body: str) -> str:
    return plan_for(title, body).step(4).reason


# name -> (title, body, the decision step 4 must reach)
QUESTIONS = {
    # --- asked of the project: a request
    "could-the-component-say-it": (
        "Gloo barrier timed out on my desktop (my mistake, a wrong rank) — could the error say so?",
        "I gave two processes the same RANK by accident. The barrier waited the full timeout and the message only "
        "said the store wait timed out. Could the store tell that two clients registered the same rank and name it?",
        ENHANCEMENT),
    "why-must-it-by-default": (
        "Why does the DCP reader have to load every shard on rank 0 by default?",
        "Loading a 30 GB checkpoint on rank 0 takes 4 minutes and the other ranks sit idle. With the planner "
        "option that spreads reads it takes 50 s, so the capability is there; the default is what we trip over.",
        ENHANCEMENT),
    "could-the-other-ranks-go-on": (
        "Elastic job with one very slow host: could the agent drop it and go on with the rest?",
        "One host in our pool is often throttled and the whole job runs at its pace. What I am imagining is a "
        "policy where the agent removes a host that stays twice as slow as the median for ten minutes. Nothing "
        "in the agent measures per-host speed today, and I don't see any way to add this through its hooks.",
        FEATURE),
    "are-there-plans": (
        "Are there plans to support the MPS device in ProcessGroupGloo?",
        "Two Mac minis on a Thunderbolt bridge, gloo over TCP. MPS tensors are rejected by every collective.",
        FEATURE),
    "why-not-make-it-the-default": (
        "Async checkpoint staging into pinned memory",
        "async_save with pinned staging takes 3 s against 11 s without it on our nodes. Why not make pinned staging "
        "the default when the memory is there?",
        ENHANCEMENT),
    "wouldnt-it-be-simpler": (
        "DeviceMesh slices hold a reference to the parent's groups",
        "Each slice keeps the parent's process groups alive. Wouldn't it be simpler to create the slice's groups "
        "lazily when they are first used?",
        ENHANCEMENT),
    # --- asked about the reporter's own use, a guessed cause, or a failure: no request
    "how-do-i": (
        "How do I resume an FSDP2 job on fewer GPUs?",
        "I saved with dcp.save on 16 GPUs and want to load on 8. Do I need to reshard by hand or does dcp.load "
        "handle it? Is there an example?",
        NONE),
    "guessed-cause": (
        "all_gather hangs on 4 nodes after the driver update — could the driver be the problem?",
        "Since the cluster moved to the new driver every job hangs in the first all_gather across 4 nodes. Could "
        "the new driver be the cause, or is it NCCL? Logs attached.",
        NONE),
    "why-does-it-fail": (
        "Why does my DDP job hang on the second epoch?",
        "Two nodes, 16 GPUs. The first epoch finishes, the second hangs in backward until the watchdog fires. "
        "Script below.\n\n" + fenced("model = DDP(model)\nfor epoch in range(2):\n    train(model)"),
        NONE),
    "help-asked-of-the-team": (
        "DCP load hangs on 4 nodes after resharding — could the team take a look?",
        "Saving on 32 GPUs and loading on 16 hangs in the first read on every rank. Could the maintainers look into "
        "it? Logs from all ranks are attached.",
        NONE),
    "cause-guessed-as-could-x-explain-it": (
        "Loss differs between 1 and 2 nodes with FSDP2",
        "After 500 steps the loss on 2 nodes is 3% higher than on 1 node, same seed. Could the reduce-scatter "
        "order explain this? Could the same happen with DDP?",
        NONE),
    "why-does-it-need-to-how-it-works": (
        "Why does DDP need to broadcast buffers before every forward?",
        "I am reading the DDP notes and see that buffers are broadcast from rank 0 each iteration. What is this "
        "for, if every rank computes the same buffers?",
        NONE),
    "state-guessed": (
        "FSDP2 loss diverges on 2 nodes: could the ranks be out of sync?",
        "Same seed, same data order. On 2 nodes the loss goes to nan at step 300; on 1 node it does not. Could the "
        "parameters be different across ranks after the first optimizer step?",
        NONE),
    "reason-asked-for-a-failure": (
        "Is there a reason my FSDP job hangs after the first checkpoint?",
        "Two nodes, 16 GPUs. After dcp.save at step 1000 every rank waits in the next all_gather until the watchdog "
        "fires. Script and logs attached.",
        NONE),
    "absence-asked-about-a-how-to": (
        "Is there really no way to run DDP from a notebook?",
        "Every tutorial launches a script with torchrun. I only have a notebook on the lab server with 2 GPUs. How "
        "do people do this? Do I have to write a script?",
        NONE),
}


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_a_question_is_a_request_when_it_asks_the_project_for_a_change(name):
    title, body, expected = QUESTIONS[name]
    assert decision(title, body) == expected, reason(title, body)


# name -> (title, body, decision)
OWN_FAULT = {
    "my-mistake-then-a-clearer-message": (
        "Hang at init because of my own world_size mistake; the timeout said nothing useful",
        "Totally my mistake: my config set world_size to 8 while torchrun started 4 processes. Every rank waited "
        "in init_process_group for 30 minutes and then failed with a generic store timeout. I wish the timeout "
        "error said how many ranks joined and how many were expected.",
        ENHANCEMENT),
    "our-fault-then-a-safer-save": (
        "A failed checkpoint save leaves a directory our resume code takes for a good one",
        "The disk filled up during dcp.save, which raised, and the job died: our fault for not watching the quota. "
        "The half-written directory stayed behind and the restart tried to load it. Could DCP write into a "
        "temporary directory and rename it only once the save is complete?",
        ENHANCEMENT),
    # Control: the reporter's own fault and no ask at all: no request.
    "my-mistake-and-no-ask": (
        "NCCL error when two processes share a GPU",
        "It was my mistake: I forgot to call torch.cuda.set_device with the local rank, so both processes used "
        "GPU 0 and NCCL failed with a duplicate GPU error. Fixed now, closing for reference.",
        NONE),
    # Control: a crash with no attribution and no ask stays a report.
    "crash-without-fault-or-ask": (
        "FSDP2 segfaults in backward on 2 nodes",
        "Every run segfaults in the first backward on 2 nodes, 16 GPUs. Stack trace and script attached.",
        NONE),
}


@pytest.mark.parametrize("name", sorted(OWN_FAULT))
def test_a_failure_on_the_reporters_side_does_not_weigh_against_what_they_ask(name):
    title, body, expected = OWN_FAULT[name]
    assert decision(title, body) == expected, reason(title, body)


def test_hindsight_in_a_post_mortem_is_what_a_change_would_buy():
    post_mortem = ("Post-mortem: a week of slow steps caused by our own network setting",
                   "Cause: our own environment. One host had the wrong interface name, so its ranks used the slow "
                   "path. PyTorch did what it should. If the startup log had named the transport each rank picked, "
                   "we would have been done in minutes; a per-rank transport line would have saved us a week.")
    assert decision(*post_mortem) == ENHANCEMENT, reason(*post_mortem)
    # Control: a report that says a change would not have helped is no request.
    denied = ("Checkpoint load fails with a shape mismatch after a refactor",
              "dcp.load raises a size mismatch for layer 3 after we changed the hidden size. A bigger timeout would "
              "not have helped; the error is raised at once. Script attached.")
    assert decision(*denied) == NONE, reason(*denied)


VERDICTS = {
    "not-a-bug-more-of-a-wish": (
        "Every rank prints the same deprecation warning at every save",
        "Not a bug really, more of a wish: with 64 ranks the log holds 64 copies of one warning per checkpoint. "
        "Could the warning be emitted once per process?",
        ENHANCEMENT),
    "quality-of-life": (
        "torchrun: show the local rank in each log line prefix",
        "A small quality-of-life thing. With 8 workers per host the interleaved output is hard to read; the "
        "prefix already has the global rank.",
        ENHANCEMENT),
    # Control: "not a bug, just a question" is a question.
    "not-a-bug-just-a-question": (
        "Does DTensor keep the placement after a view?",
        "Not a bug, just a question: after x.view(-1) on a Shard(0) DTensor, is the result still Shard(0)? I could "
        "not find it in the docs.",
        NONE),
}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_the_reporters_own_verdict(name):
    title, body, expected = VERDICTS[name]
    assert decision(title, body) == expected, reason(title, body)


def test_questions_listed_for_an_answer_are_a_question_not_a_request():
    listed = ("DataParallel on 4 GPUs is slower than 1 GPU",
              "No crash, no errors, the loss converges; it is just slow: 300 img/s on 1 GPU, 280 on 4.\n\n"
              "Questions:\n1. Is this expected with DataParallel?\n2. Should I switch to DDP on one machine?")
    assert decision(*listed) == NONE, reason(*listed)
    # Control: the same cost told as an ask is a request (about speed).
    asked = ("DataParallel on 4 GPUs is slower than 1 GPU",
             "No crash, no errors, the loss converges; it is just slow: 300 img/s on 1 GPU, 280 on 4. Could "
             "DataParallel scatter the inputs from pinned memory instead of GPU 0? It would remove the bottleneck.")
    plan = plan_for(*asked)
    assert plan.step(4).decision == ENHANCEMENT and PERF in plan.add_labels, plan.step(4).reason


def test_information_wanted_is_not_functionality_wanted():
    info = ("Contract of a custom backend's allgather outputs",
            "Our own backend crashes inside allgather_into_tensor_coalesced; very likely our bug. What we need is "
            "the contract: are the output tensors contiguous, and may the backend write them on a side stream?")
    assert decision(*info) == NONE, reason(*info)
    wanted = ("A contiguity flag on allgather outputs for custom backends",
              "What we need is a flag on the work object that says whether the outputs are contiguous, so our "
              "backend can take the fast path.")
    assert decision(*wanted) != NONE, reason(*wanted)


# Feature vs enhancement by whether the thing exists today, said in other words. name -> (title, body, decision)
EXISTENCE = {
    "could-not-find-any": (
        "DTensor: uneven shard sizes chosen by the user",
        "I want rank 0 to hold 60% of the rows and rank 1 the rest, and have every op respect it. I couldn't find "
        "any placement that carries explicit per-rank sizes; from_local accepts uneven chunks but ops assume even.",
        FEATURE),
    "the-only-path-today": (
        "Rebinding DDP to a new process group after a membership change",
        "The only path we have today is to tear down the group and wrap the model again, which rebroadcasts 20B "
        "parameters. What we're after is a method that points an existing wrapper at a new group.",
        FEATURE),
    "cannot-build-it-myself": (
        "Skipping a straggler rank's gradients for one step",
        "What I'm imagining: ranks that miss a deadline are left out of that step's average. I can't build this "
        "myself with a comm hook either, since hooks run after every rank joined the bucket.",
        FEATURE),
    "not-a-thing": (
        "Collectives on MPS tensors",
        "backend='mps' isn't a thing, and gloo rejects MPS tensors. We'd like DDP to accept an MPS model on two "
        "Macs, even if it copies through the CPU underneath.",
        FEATURE),
    "only-other-cases-today": (
        "Tensor parallel styles for Conv1d",
        "parallelize_module with RowwiseParallel on an nn.Conv1d raises NotImplementedError: RowwiseParallel only "
        "supports nn.Linear and nn.Embedding. Please add Conv1d; splitting on channels is the same idea.",
        FEATURE),
    "only-other-devices-today": (
        "Symmetric memory between processes of one host, on CPU",
        "The symmetric memory API is exactly the model we want for our CPU workers, but it is CUDA-only. We'd like "
        "the same rendezvous and peer buffers over shared memory on the host.",
        FEATURE),
    "options-listed-and-the-ask-is-neither": (
        "Rendezvous over a Unix domain socket for single-host jobs",
        "Our hosts forbid listening on TCP ports. Today the options are TCPStore, which needs a port, or FileStore, "
        "which works but is slow to set up many groups. We'd like the store to listen on a socket path instead.",
        FEATURE),
    "no-built-in-way": (
        "Per-rank checksums in DCP",
        "There is no built-in way to tell that a shard was truncated on the way to storage. We'd like dcp.save to "
        "record a checksum per file and dcp.load to verify it.",
        FEATURE),
    # Controls: a change to what exists, asked in the same voices.
    "an-os-error-is-no-missing-capability": (
        "A failed save leaves a checkpoint directory that looks complete",
        "The disk filled up and dcp.save raised, our fault. The restart then failed with\n\n"
        + fenced("FileNotFoundError: [Errno 2] No such file or directory: 'ckpt/step_9/.metadata'", "text")
        + "\n\nCould the error say that the checkpoint looks incomplete and name the missing file?",
        ENHANCEMENT),
    "says-less-than-asked": (
        "dcp.load names only the first unexpected key",
        "The error names only the first key it cannot place; after a refactor we relaunch ten times. Please list "
        "every key that has no match, as a dry run would.",
        ENHANCEMENT),
    "options-listed-and-the-ask-is-one-of-them-faster": (
        "FileStore is slow when a mesh creates many groups",
        "Today the options are TCPStore or FileStore. FileStore works but takes 40 s to set up 600 groups on one "
        "host, against 2 s for TCPStore. Please make FileStore faster for many groups.",
        ENHANCEMENT),
    "only-other-cases-but-a-fallback-runs": (
        "Native Gloo path for all_to_all_single with uneven splits",
        "The Gloo backend only supports even splits natively; uneven ones fall back to a send/recv loop that is 5x "
        "slower. We'd like a native path for uneven splits.",
        ENHANCEMENT),
    "default-of-an-existing-option": (
        "Why does FileSystemWriter have to use one thread by default?",
        "With thread_count=8 our saves take 6 minutes instead of 40, so the option works. We'd like the default to "
        "follow the number of CPUs.",
        ENHANCEMENT),
    "message-of-an-existing-check": (
        "dcp.load names only the first missing key",
        "The existing check stops at the first key. We'd like it to list every missing key at once, like "
        "load_state_dict does.",
        ENHANCEMENT),
}


@pytest.mark.parametrize("name", sorted(EXISTENCE))
def test_feature_by_existence_in_other_words(name):
    title, body, expected = EXISTENCE[name]
    assert decision(title, body) == expected, reason(title, body)


def test_a_message_said_to_be_unhelpful_is_asked_to_be_better():
    unhelpful = ("NCCL error 'unhandled cuda error' is not helpful when a rank sees no GPU",
                 "Our scheduler gives each process one visible GPU, and a script that calls set_device(local_rank) "
                 "gets an unhandled cuda error from NCCL. Not a bug of course, but checking the index against the "
                 "visible device count first and saying so would save our users an hour each time.")
    assert decision(*unhelpful) == ENHANCEMENT, reason(*unhelpful)
    # Control: an error in the title that is reported, not judged, is a bug report.
    reported = ("NCCL error 'unhandled cuda error' on 2 nodes since the driver update",
                "Every job on 2 nodes fails at the first all_reduce with an unhandled cuda error. Logs attached.")
    assert decision(*reported) == NONE, reason(*reported)


def test_a_how_to_question_with_an_unsupported_op_error_stays_a_question():
    question = ("How to register a sharding rule for my custom op with DTensor",
                "My op raises: Operator mylib.norm.default does not have a sharding strategy registered. What is the "
                "intended API to say the output keeps the input placement? An example would help a lot.")
    assert decision(*question) == NONE, reason(*question)
    asked = ("Sharding strategy for aten.cummax on DTensor",
             "aten.cummax.default does not have a sharding strategy registered. Please add one: Replicate -> "
             "Replicate at least, and Shard on a non-scanned dim.")
    assert decision(*asked) == ENHANCEMENT, reason(*asked)


def test_the_reporters_tag_of_kind_and_a_version_bump():
    tagged = ("[Perf] Overlap the reduce-scatter of the last layer with the optimizer step", "")
    plan = plan_for(*tagged)
    assert plan.step(4).decision == ENHANCEMENT and PERF in plan.add_labels, plan.step(4).reason
    # Controls: a component tag is no kind; a dependency bump is upkeep, even with a wish.
    assert decision("[FSDP] The reduce-scatter of the last layer hangs", "It hangs on 2 nodes, every run.") == NONE
    bump = ("Update NCCL to 2.29 in the nightly wheels",
            "We would like the nightly wheels to ship NCCL 2.29, which has the fix for our IB adapters.")
    assert decision(*bump) == NONE, reason(*bump)


def test_what_an_incident_cost_is_not_what_the_request_is_about():
    """`module: performance` goes beside an enhancement about speed or memory, not beside one whose text counts the
    hours a failure cost."""
    incident = ("The rendezvous timeout should name the nodes that never joined",
                "Post-mortem. Cause: our own environment, a wrong interface name on two hosts. Cost: ~3 hours of 256 "
                "GPUs idle while we bisected the host list. The error should list the missing nodes.")
    plan = plan_for(*incident)
    assert plan.step(4).decision == ENHANCEMENT and PERF not in plan.add_labels, plan.step(4).reason
    slow = ("Rendezvous takes 4 minutes on 256 nodes",
            "Nothing fails, it is just slow: the store host is CPU bound and each round trip costs 30 ms. A "
            "batched barrier would cut it to seconds.")
    plan = plan_for(*slow)
    assert plan.step(4).decision == ENHANCEMENT and PERF in plan.add_labels, plan.step(4).reason
