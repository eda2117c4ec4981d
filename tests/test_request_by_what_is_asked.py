"""Step 4 in the procedure's terms, read from what an issue says rather than from its stock words.

First, request or report: a request states a goal the reporter cannot reach today, a cost they want removed, or a
change they want; a report states what happened against what should have happened. Most requests here use none of
the stock words (add, support, please, feature, would be nice): they say what is missing, what it costs, what the
reporter does by hand, or write out the API they wish existed. The controls are reports that borrow a request's
words ("could not save the log", "we would rather not restart", "if it hangs we want a dump") and stay reports.

Then, of a request, feature vs enhancement by whether the thing exists today in any form: the same subject asked
both ways, once as something absent ("there is no way to", "nothing in X does this", a new backend, placement or
primitive) and once as a change to something that works ("currently", "falls back to", an existing flag, slower
than it should be, a clearer message). `module: performance` goes beside an enhancement about speed or memory.

Every issue is written here in our own words for the case it pins; none is copied from an eval set.
"""

from __future__ import annotations

import pytest

from engine_helpers import fenced, plan_for

FEATURE, ENHANCEMENT, NONE = "feature", "enhancement", "none"
PERF = "module: performance"
BUG = "### 🐛 Describe the bug\n\n"


def step4(title: str, body: str, comments=()):
    plan = plan_for(title, body, comments=comments)
    return plan.step(4), plan


# --- request or report ------------------------------------------------------------------------------------------

# name -> (title, body, the decision step 4 must reach). No stock request word in any of them.
ASKED_WITHOUT_STOCK_WORDS = {
    "goal-said-as-what-we-want": (
        "Restarting a 512-GPU job to change the learning-rate schedule",
        "What we want is a way to change a few trainer settings in a running elastic job without tearing the "
        "workers down. Nothing in torchrun or the agent does this today; we kill the job and reload the checkpoint.",
        FEATURE),
    "cost-of-today-and-its-remedy": (
        "Every DDP restart recomputes the same bucket layout",
        "Each restart spends about 30 s rebuilding buckets that come out identical every time, which is 6 GPU-hours "
        "a day across our jobs. Handing DDP the layout from the previous run would remove it.",
        ENHANCEMENT),
    "imagined-api-in-code": (
        "Per-group timeouts after a process group exists",
        "What I'd like to write:\n\n" + fenced("pg.set_timeout(timedelta(minutes=2))  # imagined")
        + "\n\nToday the timeout is fixed when the group is created and the only way to change it is a new group.",
        ENHANCEMENT),
    "done-by-hand-today": (
        "Comparing the collective order of two ranks from their flight-recorder dumps",
        "Today we load both dumps in a notebook and diff them by hand; every team we know keeps its own copy of "
        "that notebook. A subcommand of the analyzer that prints the first op where two ranks differ is what we "
        "are after.",
        FEATURE),
    "terse-non-native-want": (
        "need option for keep fp32 master weight on cpu in fsdp2",
        "we want a option to keep the fp32 master weight on cpu and only bf16 on gpu. now fully_shard keep all on "
        "gpu, our 70b model not fit. will be good if offload policy can do it.",
        ENHANCEMENT),
    "terse-hope-pytorch-can": (
        "gloo all_reduce on big cpu tensor use one thread only",
        "results is correct, only slow: 800MB all_reduce take 3 s on 100Gb link. hope pytorch can use more thread "
        "for one big tensor.",
        ENHANCEMENT),
    "nothing-broken-just-noisy": (
        "torchrun prints the same environment banner once per worker",
        "Nothing crashes and nothing hangs; this is about log volume. With 64 workers per host the banner is 64 "
        "copies of the same lines. Printing it once per agent would cut our logs by a third.",
        ENHANCEMENT),
    "works-correctly-just-slow": (
        "DTensor redistribute from Shard(0) to Replicate copies twice on one node",
        "The result is correct, it just costs an extra copy: 14 ms where a plain all_gather takes 7 ms. A direct "
        "path for this case would halve it.",
        ENHANCEMENT),
    "question-about-a-capability": (
        "Could DCP write one file per node instead of one per rank?",
        "Our object store bills per object and 4096 ranks make 4096 objects per checkpoint. Grouping the ranks of "
        "a node would cut that by 8.",
        ENHANCEMENT),
    "absent-primitive": (
        "A barrier that only some ranks of a group take part in",
        "There is no way to synchronise a subset of a process group without creating a new group for it, and "
        "creating groups on the fly is collective over the whole world.",
        FEATURE),
    "problem-statement-title-absent-placement": (
        "Fused QKV weights cannot be sharded per logical matrix with Shard(0)",
        "Each rank needs a slice of each of the three matrices, not a slice of their concatenation. No placement "
        "expresses this today, so we split the weight by hand before parallelize_module.",
        FEATURE),
    "offer-to-contribute": (
        "Checksums for DCP shards, verified on load",
        "We wrote our own validator that hashes every shard before save and after load; it lives outside DCP and "
        "cannot tell which byte range is bad. We would be glad to upstream it if the design fits.",
        FEATURE),
    "user-story": (
        "Per-job isolation of the c10d store",
        "As a platform team running many jobs on shared nodes, we need each job's store to reject clients of other "
        "jobs. Any process that knows the port can read and write keys.",
        ENHANCEMENT),
    "new-thing-by-what-it-would-do": (
        "Gradient clipping across a 2-D mesh",
        "clip_grad_norm_ on a model sharded over dp and tp computes the norm per mesh; we compute the total by hand "
        "with two all_reduces. A helper in torch.distributed that does it for any mesh would remove that code.",
        FEATURE),
    "wish-to-have": (
        "Rank-ordered results from all_gather_object after a restart",
        "It would be great to have a mode where all_gather_object returns results in rank order even when ranks "
        "join in another order after an elastic restart.",
        ENHANCEMENT),
}

# name -> (title, body): reports that borrow a request's words; step 4 adds no type label.
REPORTS_WITH_REQUEST_WORDS = {
    "could-not-save-the-log": (
        "FSDP2 training dies with SIGSEGV in the backward of the embedding",
        BUG + "Rank 5 segfaults in the backward after about 2k steps. I could not save the log of that rank, the "
        "node was reclaimed; the other ranks then time out.\n\n```\nFatal Python error: Segmentation fault\n```"),
    "we-would-rather-not": (
        "all_gather hangs after the first checkpoint save on 4 nodes",
        BUG + "After dcp.save returns, the next all_gather never completes on any rank. We would rather not "
        "restart every few hours; py-spy shows all ranks waiting in the collective."),
    "if-it-hangs-we-want": (
        "init_process_group raises Connection refused on the second node",
        "The second node fails right away:\n\n```\ntorch.distributed.DistNetworkError: Connection refused\n```\n\n"
        "If it hangs instead we want a dump, but here it simply errors out. The port is open in the firewall."),
    "workaround-in-a-bug-report": (
        "DDP gradients differ between ranks with gradient_as_bucket_view=True",
        BUG + "After the second step the gradients on rank 0 and rank 1 are different. As a workaround we set "
        "gradient_as_bucket_view=False, which costs memory.\n\n" + fenced("ddp = DDP(model, gradient_as_bucket_view=True)")),
    "expected-vs-actual": (
        "reduce_scatter_tensor returns the wrong chunk on rank 1",
        "Expected behavior: rank 1 gets elements 4..7. Instead it gets 0..3.\n\n"
        + fenced("dist.reduce_scatter_tensor(out, inp)\nprint(rank, out)")),
    "slower-than-the-previous-version": (
        "all_to_all_single is 3x slower in 2.9 than in 2.8",
        "Same script, same cluster: 12 ms per call on 2.8, 36 ms on 2.9. Nothing else changed."),
    "would-be-nice-to-understand": (
        "NCCL watchdog timeout after 30 minutes in all_reduce on 8 nodes",
        "The job hangs at step 1200, then the watchdog kills it. It would be nice to understand why. Logs attached."),
    "usage-question": (
        "How do I load a DCP checkpoint into a model on fewer GPUs?",
        "I saved on 16 GPUs and want to evaluate on 2. Is there an example somewhere?"),
}


@pytest.mark.parametrize("case", sorted(ASKED_WITHOUT_STOCK_WORDS))
def test_a_request_without_stock_words_is_a_request_of_the_right_kind(case):
    title, body, expected = ASKED_WITHOUT_STOCK_WORDS[case]
    result, _ = step4(title, body)
    assert result.decision == expected, result.reason


@pytest.mark.parametrize("case", sorted(REPORTS_WITH_REQUEST_WORDS))
def test_a_report_with_request_words_gets_no_type(case):
    title, body = REPORTS_WITH_REQUEST_WORDS[case]
    result, plan = step4(title, body)
    assert result.decision == NONE, result.reason
    assert not {"feature", "enhancement", PERF} & set(plan.add_labels)


def test_could_not_save_is_no_proposal_but_could_save_is():
    """The classic false reading: "could … save" is a proposal only when nothing negates it."""
    report = step4("DDP job dies with SIGABRT in the reducer", "Rank 3 aborts. I could not save the core dump.")[0]
    assert report.decision == NONE and "could not save" not in report.reason
    proposal = step4("Cache the global save plan in DCP",
                     "The plan is identical between saves. Caching it could save 3 minutes per checkpoint.")[0]
    assert proposal.decision == ENHANCEMENT, proposal.reason


def test_a_negated_failure_is_not_evidence_of_a_report():
    """ "Nothing crashes" names a crash and denies it: against a request it weighs nothing."""
    said = step4("torchrun startup takes 9 minutes on 256 nodes",
                 "No hang and no error: every job does start, it just takes minutes. Rendezvous dominates.")[0]
    assert said.decision == ENHANCEMENT, said.reason
    assert "req-frame-failed" not in said.reason


# --- feature vs enhancement: does the thing exist today in any form? --------------------------------------------

# subject -> ((title, body) asked as absent -> feature, (title, body) asked as a change to what works -> enhancement)
SAME_SUBJECT_BOTH_WAYS = {
    "rendezvous backend": (
        ("Rendezvous from the Kubernetes API",
         "We would like a rendezvous backend that reads membership from the Kubernetes API; none of the existing "
         "backends can do this and we do not want to run etcd."),
        ("c10d rendezvous: retry the store connection instead of failing at once",
         "The c10d backend currently gives up after the first refused connection while the store pod starts. A few "
         "retries with backoff would let the workers wait for it.")),
    "sharding": (
        ("Uneven shard sizes per rank in fully_shard",
         "Shards are always equal today. There is no way to give ranks with more memory a bigger share of the "
         "parameters, so a mixed 40G/80G pool is sized for the 40G cards."),
        ("fully_shard: pick the shard dimension per parameter with a callable",
         "shard_placement_fn already exists in FSDP2, but it is read once at wrap time. Letting it see the "
         "parameter's FQN would be enough for us.")),
    "diagnostics": (
        ("Report which NCCL transport each peer uses",
         "Please add a Python API on the process group that reports, per peer, which transport NCCL picked. Today "
         "the only source is the NCCL_DEBUG text log, which we parse per rank."),
        ("The watchdog timeout message should name the collective's sequence number",
         "The existing message says a collective timed out but not which one; adding the sequence number and the "
         "group's name would save us the flight-recorder round trip.")),
    "checkpoint writes": (
        ("Incremental checkpoints in DCP",
         "What we are missing is a way for a checkpoint to point at tensors in an earlier one, so frozen weights are "
         "written once. Nothing like this exists in DCP as far as we can see."),
        ("dcp.save spends most of its time planning on 4096 ranks",
         "Writes take 2 minutes, planning takes 9. The plans are identical between saves, so caching the global "
         "plan would remove most of it.")),
}


@pytest.mark.parametrize("subject", sorted(SAME_SUBJECT_BOTH_WAYS))
def test_feature_when_absent_enhancement_when_it_exists(subject):
    absent, existing = SAME_SUBJECT_BOTH_WAYS[subject]
    new = step4(*absent)[0]
    assert new.decision == FEATURE, new.reason
    changed = step4(*existing)[0]
    assert changed.decision == ENHANCEMENT, changed.reason


def test_an_option_can_add_what_does_not_exist():
    """The shape of the ask (an option, a flag) does not decide: what it enables does."""
    absent = step4("An option to make all_reduce sum in rank order on any topology",
                   "Nothing in NCCL or c10d gives a result that depends only on the ranks and not on the ring NCCL "
                   "picks; we would like a deterministic mode for it.")[0]
    assert absent.decision == FEATURE, absent.reason
    existing = step4("An option to set the bucket size of DDP per module",
                     "bucket_cap_mb currently applies to the whole model; setting it per module would let us fit "
                     "the large embedding in one bucket.")[0]
    assert existing.decision == ENHANCEMENT, existing.reason


def test_performance_goes_beside_an_enhancement_about_speed_or_memory_only():
    _, slow = step4("DTensor dispatch costs 40 us per op in our decode loop",
                    "Output is identical to plain tensors, but each op spends 40 us on the CPU in sharding "
                    "propagation even on a cache hit. A faster path for cache hits would make decode 3x faster.")
    assert ENHANCEMENT in slow.add_labels and PERF in slow.add_labels, slow.step(4).reason
    _, message = step4("The rendezvous timeout message should list the nodes that never joined",
                       "It says the rendezvous timed out, nothing more; with 64 nodes we look for the missing one by "
                       "hand. The existing state already knows which joined.")
    assert ENHANCEMENT in message.add_labels and PERF not in message.add_labels, message.step(4).reason
    _, new = step4("A bandwidth probe between nodes after rendezvous",
                   "One slow link makes the whole ring slow. Nothing in torchrun measures the links before training "
                   "starts; we want the agent to probe them and name the slow node.")
    assert "feature" in new.add_labels and PERF not in new.add_labels, new.step(4).reason


# --- the vocabulary is checked like step 5's: its own slots, examples run, names known --------------------------


def _storage_with_step4_frames(tmp_path, frame: dict, slots: dict):
    """The storage example queue with a step-4 vocabulary and one request frame (tests/test_rubric_machinery.py's
    copy-and-edit helper, over `types:` instead of `high_priority:`)."""
    from test_rubric_machinery import queue_with

    def mutate(data):
        data["types"].setdefault("slots", {}).update(slots)
        data["types"]["request"].setdefault("frames", []).append(frame)
    return queue_with(tmp_path, mutate)


WANTED = {"wanted": {"match": r"\b(what we want is)\b",
                     "examples": {"match": ["what we want is a store"], "not": ["we want to train"]}}}


def test_a_step4_frame_reads_step4s_slots_and_an_unknown_one_is_named_at_its_line(tmp_path):
    from test_rubric_machinery import line_of, problems

    queue = _storage_with_step4_frames(tmp_path, {"id": "req-wanted", "all": ["wanted"], "none": ["faild"],
                                                  "weight": 3}, WANTED)
    rubric = queue / "rubric.yaml"
    (msg,) = problems(queue)
    assert msg == (f"{rubric}:{line_of(rubric, '- faild')}: frame 'req-wanted' names slot 'faild', "
                   "which types.slots does not define")


def test_a_broken_step4_example_fails_validate(tmp_path):
    from test_rubric_machinery import problems

    ok = _storage_with_step4_frames(tmp_path / "ok", {"id": "req-wanted", "all": ["wanted"], "weight": 3,
                                                      "examples": {"match": ["What we want is a store."]}}, WANTED)
    assert problems(ok) == []
    drifted = {"wanted": {**WANTED["wanted"], "examples": {"match": ["what we are after is a store"]}}}
    broken = _storage_with_step4_frames(tmp_path / "broken", {"id": "req-wanted", "all": ["wanted"], "weight": 3},
                                        drifted)
    (msg,) = problems(broken)
    assert "slot 'wanted' does not match its example 'what we are after is a store'" in msg
