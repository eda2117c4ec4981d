"""Issue 19 item 3: every shipped template tells the truth about the run that posts it.

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
    assert plan.add_labels and all(f"`{label}`" in body for label in plan.add_labels), (plan.add_labels, body)
    assert not any(words in body.lower() for words in DENIALS), body


@pytest.mark.parametrize("queue", sorted(AWAY), ids=lambda q: Path(q).name)
def test_no_template_denies_the_labels_its_run_adds(queue):
    bundle = load_bundle(queue=Path(queue) if "/" in queue else queue)
    for name in bundle.templates.names:
        body = bundle.templates.render(name, author="someone").lower()
        assert not any(words in body for words in DENIALS), (name, body)
