"""A queue's history over a window, written into the GitHub stand-in, and what really happened to each issue.

`build_window(gh, n)` opens `n` issues that enter the queue inside the window (plus issues queued before it, one
queued in it though opened before, and issues queued after it), and lets people, the bot itself and another bot
act on them the way GitHub records it (label events with their actor, comments, closes). Each in-window issue's
`Truth` is kept as it was written, not read back: the labels it had when the queue label was added, the comments
before then, people's labels at the end of the window, and whether a person triaged it. The shadow tests count
from these, independently of the code under test; the bench uses the same world at 1,000 issues.

`shadow_cli(gh, ...)` runs `ptd-triage shadow` against the stand-in as a user would (a subprocess, the stand-in's
URL and token in the environment).

May import: the standard library, `fakegithub`.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

Q = "oncall: distributed"
PAR, INF, CKPT = ("oncall: distributed parallelisms", "oncall: distributed infra",
                  "oncall: distributed checkpointing")
OWN_BOT, OTHER_BOT = "github-actions[bot]", "pytorch-bot[bot]"
PEOPLE = ("alice", "bob", "carol")

FSDP = ("fully_shard breaks the second backward", "Wrapping blocks with FSDP2 `fully_shard` breaks backward.\n\n"
        "```python\nfrom torch.distributed.fsdp import fully_shard\nfor block in model.layers:\n    "
        "fully_shard(block)\nloss = model(x).sum(); loss.backward()\n```\n\n```\nRuntimeError: FSDP parameter is "
        "not in the expected sharded state\n```\n")
NCCL = ("NCCL all_reduce fails on two nodes", "Two-node job with the NCCL backend: `all_reduce` fails with\n\n"
        "```\ntorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
        "error\n```\n")
DCP = ("dcp.save hangs when saving a sharded state dict", "Saving with torch.distributed.checkpoint `dcp.save` "
       "hangs forever on 8 ranks.\n\n```python\nimport torch.distributed.checkpoint as dcp\n"
       "dcp.save(state_dict, checkpoint_id='ckpt')\n```\n")
VAGUE = ("distributed training is slow", "My distributed training got slower after upgrading. Any idea why?")
FEATURE = ("Add support for uneven sharding in DTensor", "Feature request: DTensor should support uneven "
           "sharding of a tensor across a DeviceMesh, so that models whose dims do not divide evenly can be "
           "sharded.\n")
SILENT = ("DDP gives silently wrong gradients with find_unused_parameters", "DDP produces silently wrong "
          "gradients (numerical mismatch against a single GPU) when find_unused_parameters=True.\n\n```python\n"
          "model = DDP(model, find_unused_parameters=True)\n```\n")
TEXTS = (FSDP, NCCL, DCP, VAGUE, FEATURE, SILENT)
# What people answer for each text: (sub-oncall, modules, extra labels a person may add).
ANSWERS = {FSDP: (PAR, ["module: fsdp"], []), NCCL: (INF, ["module: nccl"], ["needs reproduction"]),
           DCP: (CKPT, [], []), VAGUE: (PAR, ["module: ddp"], ["needs reproduction"]),
           FEATURE: (PAR, ["module: dtensor"], ["feature"]), SILENT: (PAR, ["module: ddp"], ["high priority"])}


@dataclass
class Truth:
    """One in-window issue as written: at queue time, and people's labels at the end of the window."""

    number: int
    title: str
    body: str
    labels_at_queue: list[str]
    comments_at_queue: list[str]
    people_labels: list[str] = field(default_factory=list)  # at the end of the window
    triaged: bool = False


@dataclass
class World:
    repo: str
    since: str = ""
    until: str = ""
    truths: dict[int, Truth] = field(default_factory=dict)
    outside: list[int] = field(default_factory=list)  # found by the search, queued outside the window


def _stamp(gh, repo: str, number: int) -> str:
    return gh.issue(repo, number)["updated_at"]


def build_window(gh, n: int = 200, *, repo: str = "acme/widgets", seed: int = 7) -> World:
    rnd = random.Random(seed)
    world = World(repo)
    gh.add_user(OWN_BOT, user_type="Bot")
    gh.add_user(OTHER_BOT, user_type="Bot")
    for _ in range(3):  # queued before the window: updated in it later, so found, but outside
        number = gh.add_issue(repo, title=NCCL[0], body=NCCL[1])["number"]
        gh.label_issue(repo, number, Q, actor="alice")
        world.outside.append(number)
    early = gh.add_issue(repo, title=FSDP[0], body=FSDP[1])["number"]  # opened before, queued inside the window
    world.since = _stamp(gh, repo, early)
    gh.add_comment(repo, world.outside[0], "still happening", author="reporter")  # updated in the window
    _queue(gh, world, early, FSDP, rnd, pre_labels=[], pre_comments=[])
    for _ in range(n - 1):
        text = rnd.choice(TEXTS)
        pre_labels = [rnd.choice(ANSWERS[text][1])] if ANSWERS[text][1] and rnd.random() < 0.15 else []
        number = gh.add_issue(repo, title=text[0], body=text[1], labels=pre_labels)["number"]
        pre_comments = []
        if rnd.random() < 0.3:
            pre_comments.append(f"more details for #{number}: it also fails on 2.5")
            gh.add_comment(repo, number, pre_comments[-1], author="reporter")
        _queue(gh, world, number, text, rnd, pre_labels=pre_labels, pre_comments=pre_comments)
    world.until = max(_stamp(gh, repo, t.number) for t in world.truths.values())
    _after_the_window(gh, world, rnd)
    return world


def _queue(gh, world: World, number: int, text, rnd: random.Random, *, pre_labels, pre_comments) -> None:
    repo = world.repo
    gh.label_issue(repo, number, Q, actor=rnd.choice([*PEOPLE, OTHER_BOT]))
    truth = Truth(number, text[0], text[1], [*pre_labels, Q], list(pre_comments))
    world.truths[number] = truth
    final = list(truth.labels_at_queue)
    if rnd.random() < 0.2:  # the bot itself had triaged it: its labels and comment are not people's
        for label in (PAR, "ptd-bot-triaged"):
            gh.label_issue(repo, number, label, actor=OWN_BOT)
        gh.add_comment(repo, number, "Thanks! Please add a reproduction.", author=OWN_BOT, author_type="Bot")
    if rnd.random() < 0.1:  # another bot labels: not people's either
        gh.label_issue(repo, number, "module: nccl", actor=OTHER_BOT, actor_type="Bot")
    if rnd.random() < 0.15:  # nobody has triaged it yet
        return
    route, modules, extra = ANSWERS[text]
    person = rnd.choice(PEOPLE)
    if rnd.random() < 0.15:  # a wrong route first, then the person changes their mind
        wrong = INF if route != INF else PAR
        gh.label_issue(repo, number, wrong, actor=person)
        gh.label_issue(repo, number, wrong, actor=person, remove=True)
    if route == PAR and rnd.random() < 0.1:  # a route the bot would not pick
        route = INF
    triaged = False
    for label in [route, *modules, *[e for e in extra if rnd.random() < 0.6]]:
        # A label already there (the bot's own, say) records no event: it stays the bot's, not this person's.
        if gh.label_issue(repo, number, label, actor=person) is not None:
            final.append(label)
            triaged = triaged or label != "high priority"
    if rnd.random() < 0.1:  # a module added then removed: does not count
        gh.label_issue(repo, number, "module: c10d", actor=person)
        gh.label_issue(repo, number, "module: c10d", actor=person, remove=True)
    if "module: nccl" in gh.issue_labels(repo, number) and "module: nccl" not in final and rnd.random() < 0.5:
        gh.label_issue(repo, number, "module: nccl", actor=person, remove=True)  # a person undoes another bot
    if rnd.random() < 0.2:
        gh.add_comment(repo, number, "Thanks, looking.", author=person)
    if rnd.random() < 0.1:
        gh.close_issue(repo, number, actor=person)
    truth.people_labels, truth.triaged = final, triaged


def _after_the_window(gh, world: World, rnd: random.Random) -> None:
    """What happens after the window does not count: labels added or removed later, issues queued later."""
    repo = world.repo
    for truth in list(world.truths.values())[:: max(len(world.truths) // 10, 1)]:
        gh.label_issue(repo, truth.number, "high priority", actor="alice")
        if truth.triaged:
            gh.label_issue(repo, truth.number, truth.people_labels[-1], actor="bob", remove=True)
    for _ in range(2):
        number = gh.add_issue(repo, title=DCP[0], body=DCP[1])["number"]
        gh.label_issue(repo, number, Q, actor="alice")
        gh.label_issue(repo, number, CKPT, actor="alice")


def shadow_cli(gh, *args: str, popen: bool = False, env_extra: dict | None = None, repo: str = "acme/widgets"):
    env = {**os.environ, "GITHUB_API_URL": gh.url, "GITHUB_TOKEN": gh.token, **(env_extra or {})}
    env.pop("GITHUB_ACTIONS", None)
    command = [sys.executable, "-m", "triage", "shadow", "--repo", repo, *args]
    if popen:
        return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
