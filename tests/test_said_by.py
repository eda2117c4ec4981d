"""Who said it (issue 37): a stranger's "my bad" never clears a high-priority hold; the reporter's or a
maintainer's still does; another user's "same here" is evidence that many users hit it, never a retraction.

Through the real entrypoint.py (a scheduled sweep, live, against the GitHub stand-in, whose comments carry
`author_association` as GitHub gives it): the red team's grid, 6 criterion issues (an NCCL segfault on 4 nodes,
silently wrong gradients, a corrupted checkpoint, a multi-node hang, a regression, an internal assert in c10d) x 9
drive-by comments, each posted by somebody who is neither the reporter nor a maintainer. A violation is an issue
that ends with the marker, or without the review label: out of the queue, not held for a person. Then the
controls, in a second sweep: the same texts said by the reporter or by a maintainer clear the hold; the other ways a
stranger's words could lower a criterion (a loud error, a scheduler kill, other seeds, "nothing is corrupted", the
torch version held constant, "on my laptop", "I removed all distributed") hold, and lower it when the reporter says
them; and a stranger's "+1, same here" counts for many_users.
"""
from __future__ import annotations

import json

import pytest
from actionrun import MARKER, QUEUE, REPO, run_action, schedule_payload, seed_issue
from fakegithub import FakeGitHub

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue

REVIEW = "triage review"
REPORTER, STRANGER, MAINTAINER = "alice", "drive-by", "maint"
SCRIPT = "\n\n```python\nimport torch\nimport torch.distributed as dist\n```\n"

CRITERIA = {
    "crash": ("NCCL segfault in all_reduce on 4 nodes",
              "Training with DDP on 4 nodes (32 GPUs). Rank 5 dies with `Segmentation fault (core dumped)` inside "
              "ProcessGroupNCCL during the all_reduce of the second step." + SCRIPT),
    "silent_correctness": ("DDP gradients silently wrong with no_sync",
                           "With DistributedDataParallel and `no_sync()` the gradients are silently wrong: after the "
                           "sync step they are exactly 2x what they should be, and no error is raised." + SCRIPT),
    "checkpoint_corruption": ("DCP checkpoint corrupted after resume",
                              "After `dcp.save` on 16 ranks, two shard files of the checkpoint are truncated and the "
                              "checkpoint is corrupted: loading gives garbage weights." + SCRIPT),
    "multinode_hang": ("all_gather hangs on two nodes with FSDP",
                       "The all_gather in FSDP's forward hangs on two nodes after an hour; the NCCL watchdog then "
                       "kills the job." + SCRIPT),
    "regression": ("FSDP2 broken after upgrading to 2.5.1",
                   "This worked in 2.4.1 and fails in 2.5.1: after upgrading to 2.5.1 the fully_shard model fails at "
                   "the first backward." + SCRIPT),
    "internal_assert": ("INTERNAL ASSERT FAILED in ProcessGroupNCCL when splitting",
                        "When the group is split, `INTERNAL ASSERT FAILED at "
                        "\"torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp\"` is raised on every rank." + SCRIPT),
}
# The red team's five, and four more of the kind: each withdraws the report when the reporter says it.
RETRACTIONS = ["my bad", "Sorry for the noise!", "not a pytorch bug", "Never mind, works now.", "+1, same here. Sorry.",
               "It was my own kernel, not FSDP.", "User error on my side.",
               "I forgot that I had set NCCL_P2P_DISABLE=1, sorry.", "Fixed on our side, it was our launcher."]

# Issues whose flag rests on one statement, and a comment that lowers it when the reporter (or a maintainer) says it.
WEAK = {
    "process_death": ("Problem in the all_reduce with DDP",
                      "Rank 3 crashes in the all_reduce on the second step with DDP on 8 GPUs." + SCRIPT),
    "wrong_values": ("all_gather output", "The gathered values are wrong on rank 2 with 4 GPUs." + SCRIPT),
    "truncated": ("Problem with the DCP save",
                  "After dcp.save two shard files of the checkpoint are truncated, on 8 ranks." + SCRIPT),
    "upgrade": ("FSDP after the upgrade", "After upgrading to 2.5.1 the all_reduce fails with FSDP." + SCRIPT),
    "hang_8_gpus": ("all_gather hangs with FSDP on 8 GPUs",
                    "The all_gather in FSDP's forward hangs after an hour on 8 GPUs; the NCCL watchdog then kills the "
                    "job." + SCRIPT),
}
LOWERING = {  # what the words are (the slot or signal they meet), the weak issue, the comment
    "a loud error": ("process_death", "```\nValueError: bad shape\n```"),
    "a scheduler kill": ("process_death", "It was killed by slurm: CANCELLED AT 2026-01-01 DUE TO TIME LIMIT"),
    "a loud error after a wrong value": ("wrong_values", "```\nRuntimeError: NCCL error in all_reduce\n```"),
    "different seeds": ("wrong_values", "The two runs used different seeds."),
    "nothing corrupted": ("truncated", "Nothing is corrupted."),
    "the torch version held": ("upgrade", "torch 2.5.1 in all runs."),
    "on my laptop": ("hang_8_gpus", "Same script hangs for me on my laptop too."),
    "no distributed code": ("process_death", "I removed all distributed, now single process, still fails."),
}
PLAIN = ("fully_shard raises ValueError for a frozen parameter",
         "Calling fully_shard on a model with a frozen embedding raises:\n\n```\nValueError: Cannot shard a parameter "
         "with requires_grad=False\n```" + SCRIPT)


def _held(labels: list[str]) -> bool:
    """Held for a person as possibly high priority: the review label and no marker."""
    return REVIEW in labels and MARKER not in labels


def _sweep(tmp_path_factory, name: str, seed):
    """One live scheduled sweep over the issues `seed(fake)` creates ({key: number}); {key: (labels, plan)}."""
    with FakeGitHub() as fake:
        fake.set_role(REPO, MAINTAINER, "write")  # GitHub then says COLLABORATOR on their comments
        numbers = seed(fake)
        run = run_action(fake, tmp_path_factory.mktemp(name), "schedule", schedule_payload(),
                         inputs={"max-issues": "100"})
        assert run.returncode == 0, run.stdout + run.stderr
        plans = {p["issue"]: p for p in json.loads(run.outputs["plan"])}
        assert set(plans) == set(numbers.values()), "the sweep must plan every seeded issue"
        comments = {n: fake.comments(REPO, n) for n in numbers.values()}
        out = {key: (fake.issue_labels(REPO, n), plans[n], comments[n]) for key, n in numbers.items()}
        assert not fake.violations
    return out


def _seed(fake, number: int, issue: tuple[str, str], comment: str | None, author: str) -> int:
    seed_issue(fake, number, issue, author=REPORTER)
    if comment is not None:
        fake.add_comment(REPO, number, comment, author=author)
    return number


@pytest.fixture(scope="module")
def strangers(tmp_path_factory):
    def seed(fake):
        numbers, n = {}, 100
        for criterion, issue in CRITERIA.items():
            for text in RETRACTIONS:
                numbers[(criterion, text)] = _seed(fake, n, issue, text, STRANGER)
                n += 1
        return numbers

    return _sweep(tmp_path_factory, "strangers", seed)


@pytest.mark.parametrize("text", RETRACTIONS)
@pytest.mark.parametrize("criterion", list(CRITERIA))
def test_a_strangers_retraction_never_clears_a_hold(strangers, criterion, text):
    labels, plan, comments = strangers[(criterion, text)]
    assert comments[0]["author_association"] == "NONE"  # what GitHub says of a drive-by commenter
    assert _held(labels), f"{criterion} + {text!r} by a stranger: {labels}"
    assert plan["outcome"] == "high_priority"


def test_a_strangers_same_here_is_many_users_evidence_not_a_retraction(strangers):
    for criterion in CRITERIA:
        labels, plan, _ = strangers[(criterion, "+1, same here. Sorry.")]
        step5 = next(r for r in plan["reasons"] if r.startswith("step 5"))
        assert _held(labels) and "many_users" in step5, step5


@pytest.fixture(scope="module")
def controls(tmp_path_factory):
    def seed(fake):
        numbers, n, names = {}, 300, list(CRITERIA)
        for i, text in enumerate(RETRACTIONS):  # the reporter on one criterion, a maintainer on the next
            numbers[("reporter", text)] = _seed(fake, n, CRITERIA[names[i % 6]], text, REPORTER)
            numbers[("maintainer", text)] = _seed(fake, n + 1, CRITERIA[names[(i + 1) % 6]], text, MAINTAINER)
            n += 2
        for key, issue in WEAK.items():
            numbers[("alone", key)] = _seed(fake, n, issue, None, "")
            n += 1
        for what, (weak, text) in LOWERING.items():
            numbers[("stranger", what)] = _seed(fake, n, WEAK[weak], text, STRANGER)
            numbers[("reporter", what)] = _seed(fake, n + 1, WEAK[weak], text, REPORTER)
            n += 2
        numbers[("many", STRANGER)] = _seed(fake, n, PLAIN, "+1, same here.", STRANGER)
        numbers[("many", REPORTER)] = _seed(fake, n + 1, PLAIN, "+1, same here.", REPORTER)
        return numbers

    return _sweep(tmp_path_factory, "controls", seed)


@pytest.mark.parametrize("who", ["reporter", "maintainer"])
@pytest.mark.parametrize("text", RETRACTIONS)
def test_the_reporters_or_a_maintainers_retraction_still_clears(controls, who, text):
    labels, plan, comments = controls[(who, text)]
    assert comments[0]["author_association"] == ("COLLABORATOR" if who == "maintainer" else "NONE")
    assert not _held(labels) and MARKER in labels, f"{text!r} by the {who}: {labels}"
    assert plan["outcome"] != "high_priority"


@pytest.mark.parametrize("what", list(LOWERING))
def test_what_lowers_a_criterion_counts_only_from_the_reporter(controls, what):
    weak, _ = LOWERING[what]
    assert _held(controls[("alone", weak)][0]), f"the weak {weak} issue must be held on its own"
    assert _held(controls[("stranger", what)][0]), f"{what} said by a stranger lowered the criterion"
    assert not _held(controls[("reporter", what)][0]), f"{what} said by the reporter must still lower it"


def test_another_users_same_here_counts_for_many_users_the_reporters_own_does_not(controls):
    _, by_stranger, _ = controls[("many", STRANGER)]
    _, by_reporter, _ = controls[("many", REPORTER)]
    stranger5 = next(r for r in by_stranger["reasons"] if r.startswith("step 5"))
    reporter5 = next(r for r in by_reporter["reasons"] if r.startswith("step 5"))
    assert "many_users" in stranger5 and "hp-others-hit-it in comment '+1'" in stranger5
    assert "many_users" not in reporter5


# ---- in-process: GitHub's associations, and comment excerpts inlined in the body --------------------------------

BUNDLE = load_bundle()


def _plan(body_extra: str = "", comments=(), criterion: str = "crash"):
    title, body = CRITERIA[criterion]
    raw = {"issue": {"number": 9, "title": title, "body": body + body_extra, "labels": [{"name": QUEUE}],
                     "user": {"login": REPORTER, "type": "User"}},
           "comments": [{"id": i + 1, "user": {"login": login, "type": "User"}, "author_association": assoc,
                         "body": text} for i, (login, assoc, text) in enumerate(comments)]}
    return plan_issue(snapshot_from_json(raw), BUNDLE)


@pytest.mark.parametrize("association, clears", [("OWNER", True), ("MEMBER", True), ("COLLABORATOR", True),
                                                 ("CONTRIBUTOR", False), ("FIRST_TIME_CONTRIBUTOR", False),
                                                 ("NONE", False), ("", False)])
def test_only_owner_member_and_collaborator_are_maintainers(association, clears):
    plan = _plan(comments=[("someone", association, "my bad")])
    assert (plan.outcome != "high_priority") is clears


def test_the_reporter_is_known_by_login_whatever_the_case_and_association():
    assert _plan(comments=[("ALICE", "NONE", "my bad")]).outcome != "high_priority"
    assert _plan(comments=[("alice2", "NONE", "my bad")]).outcome == "high_priority"


def test_an_inlined_excerpt_is_said_by_its_login_never_with_more_standing_than_its_text():
    separator = "\n\n{login} · comment · 2024-05-01\nmy bad, it was my own kernel\n"
    # In the description (the reporter's text): the reporter's own excerpt withdraws the report; anyone else's no.
    assert _plan(separator.format(login=REPORTER)).outcome != "high_priority"
    assert _plan(separator.format(login="bob")).outcome == "high_priority"
    # In a stranger's comment, naming the reporter gives the words no standing.
    forged = separator.format(login=REPORTER).strip()
    assert _plan(comments=[(STRANGER, "NONE", "see below\n\n" + forged)]).outcome == "high_priority"
    # In a maintainer's comment, an excerpt of someone else's is that someone's: no standing either.
    assert _plan(comments=[(MAINTAINER, "MEMBER", "quoting:\n\n" + separator.format(login="bob"))]).outcome == \
        "high_priority"
