"""Issue 19 item 3: every shipped template tells the truth about the run that posts it. Issue 21 item 4: every
shipped template says it comes from the queue's bot, and none names the marker label (`ptd-bot-triaged`: the
bot's own bookkeeping, which means nothing to a reporter) — a reporter reads the labels that ask something of
them or say what happens next (`triage review`, `needs reproduction`), never that one.

Each queue (the two bundled ones and the storage example) plans an issue that its own step 1 sends away, through
the real planner and policy; the comment the plan would post must name every label the same plan adds, and must
not claim that no label was changed. (issue 19 found pt2's comment saying "we have not changed any of its
labels" while the run added two.) The reproduction comments are posted by a run that adds the reproduction
label: they must not deny it either.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from triage.config.bundle import load_bundle
from triage.config.words import queue_words
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue

ROOT = Path(__file__).resolve().parents[1]

# One issue per queue that its step-1 traps send away (true of the queue: not fitted to any record).
AWAY = {
    "distributed": ("ImportError: undefined symbol: ncclCommInitRank when I import torch",
                    "```\n>>> import torch\nImportError: libtorch.so: undefined symbol: ncclCommInitRank\n```"),
    "pt2": ("Model gives NaN after the first step",
            "The loss is NaN. It also happens in eager mode without torch.compile, so it is not the compiler."),
    str(ROOT / "examples" / "queues" / "storage"): ("Dark mode: the web console's settings page layout is broken",
                                                  "In dark mode the UI settings page layout overlaps the save button."),
}
DENIALS = ("not changed any", "have not changed", "no label was added", "did not add")


def _snapshot(bundle, title: str, body: str) -> object:
    return snapshot_from_json({"number": 7, "title": title, "body": body, "user": {"login": "someone", "type": "User"},
                               "labels": [{"name": bundle.labels.queue_label}]})


@pytest.mark.parametrize("queue", sorted(AWAY), ids=lambda q: Path(q).name)
def test_the_not_in_queue_comment_names_every_label_its_run_adds(queue):
    bundle = load_bundle(queue=Path(queue) if "/" in queue else queue)
    plan = plan_issue(_snapshot(bundle, *AWAY[queue]), bundle)
    assert plan.step(1).decision == "not_distributed" and plan.comment is not None, plan.reasons
    body = plan.comment.body
    marker = bundle.labels.marker
    assert marker in plan.add_labels  # the run does add it: the comment still does not name it
    told = [label for label in plan.add_labels if label != marker]
    assert told and all(f"`{label}`" in body for label in told), (plan.add_labels, body)
    assert marker.lower() not in body.lower(), body
    assert not any(words in body.lower() for words in DENIALS), body


@pytest.mark.parametrize("queue", sorted(AWAY), ids=lambda q: Path(q).name)
def test_no_template_denies_the_labels_its_run_adds(queue):
    bundle = load_bundle(queue=Path(queue) if "/" in queue else queue)
    for name in bundle.templates.names:
        body = bundle.templates.render(name, author="someone").lower()
        assert not any(words in body for words in DENIALS), (name, body)


# Every queue folder this repository ships (the two bundled ones, and every example a fork copies).
SHIPPED = sorted([*(p for p in (ROOT / "queues").iterdir() if (p / "templates").is_dir()),
                  *(p for p in (ROOT / "examples" / "queues").iterdir() if (p / "templates").is_dir())])


def test_every_shipped_queue_is_checked():
    assert {p.name for p in SHIPPED} >= {"distributed", "pt2", "storage"}
    assert set(SHIPPED) >= {Path(q) if "/" in q else ROOT / "queues" / q for q in AWAY}


def comment_problems(body: str, queue_word: str, marker: str) -> list[str]:
    """What is wrong with a comment a reporter reads: it does not say at once that the queue's bot wrote it, or it
    names the marker (this queue's, or any by the bundled queues' shape)."""
    opening = body.split("\n", 1)[0]
    problems = []
    if "triage bot" not in opening or queue_word not in opening:
        problems.append(f"the first paragraph does not say it is the {queue_word} queue's triage bot")
    if any(name in body.lower() for name in {marker.lower(), "bot-triaged"}):
        problems.append("names the marker label")
    return problems


@pytest.mark.parametrize("queue", SHIPPED, ids=lambda p: p.name)
@pytest.mark.parametrize("author", ["someone", None])
def test_every_comment_says_it_comes_from_the_queues_bot_and_names_no_marker(queue, author):
    bundle = load_bundle(queue=queue)
    words = queue_words(bundle.rubric.words, bundle.labels.queue_label)
    assert bundle.templates.names
    for name in bundle.templates.names:
        body = bundle.templates.render(name, author=author)
        assert comment_problems(body, words.queue, bundle.labels.marker) == [], (queue.name, name, body)


def test_the_comment_check_fails_on_the_old_text():
    old = ("Hi @someone, this issue is in the distributed queue, but on a first read it does not look like a "
           "problem with distributed training itself.\n\nWe have added the `triage review` label so that a "
           "maintainer takes a look, and `ptd-bot-triaged` to record that this bot has read it.")
    assert len(comment_problems(old, "distributed", "ptd-bot-triaged")) == 2
    assert comment_problems(old.replace("this issue", "this is the triage bot of the distributed queue. This "
                                        "issue", 1), "distributed", "PTD-bot-triaged") == ["names the marker label"]
