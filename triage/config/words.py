"""The queue's own words: what reports, outputs and comments call step 1's decisions, and the queue-neutral names
of the two rubric keys that once said "distributed".

The procedure's plan keeps its stable values (`not_distributed` is the plan's outcome in every queue: tools read
it); what a person sees comes from the queue's data:

    words:
      queue: storage                   # step 1 kept it: "step 1: storage (evidence 3)"
      not_in_queue: not storage        # step 1 sent it back: "step 1: not storage — trap score ..."
      not_in_queue_outcome: not_storage  # the outcome the Action's outputs, summary and log show
      team: team                       # what the label of role sub-oncall is called: "team: block", "no team yet"

Without `words:`, the name is the queue label's last part ("oncall: distributed" -> "distributed", "oncall: pt2"
-> "pt2"), so no queue ever says another queue's name, and the team noun is "team" (PyTorch's queues say
"sub-oncall"). A storage queue can also write its whole rubric without the
word: `not_in_queue:` (with `max_queue_score:`) is the same section as `not_distributed:` (`max_distributed_score:`),
and `comments.not_in_queue` the same as `comments.not_distributed`; `canonical` renames them before validation.

May import: the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_TEAM = "team"
# The plan's stable words for step 1 (its JSON contract: tools read them, whatever the queue): the outcome and step
# 1's decision when the issue is sent back, the rubric's key for that section and comment, and step 1's decision
# when the issue is the queue's. They are the first queue's words; `QueueWords` says what a person sees.
NOT_IN_QUEUE = "not_distributed"
IN_QUEUE = "distributed"

# (queue-neutral path, the procedure's path): renamed before anything reads the rubric.
ALIASES = (
    (("not_in_queue",), ("not_distributed",)),
    (("not_distributed", "max_queue_score"), ("not_distributed", "max_distributed_score")),
    (("comments", "not_in_queue"), ("comments", "not_distributed")),
)


@dataclass(frozen=True)
class QueueWords:
    queue: str  # "storage"
    not_in_queue: str  # "not storage"
    not_in_queue_outcome: str  # "not_storage"
    team: str = DEFAULT_TEAM  # "team" (PyTorch's queues: "sub-oncall"): what a label of role sub-oncall is called

    def outcome(self, value: str) -> str:
        """The outcome as a person (and the Action's `outcome` output) sees it."""
        return self.not_in_queue_outcome if value == NOT_IN_QUEUE else value


def queue_words(words: dict | None, queue_label: str) -> QueueWords:
    words = words or {}
    name = words.get("queue") or (queue_label.rsplit(":", 1)[-1].strip() or queue_label)
    against = words.get("not_in_queue") or f"not {name}"
    outcome = words.get("not_in_queue_outcome") or re.sub(r"[^a-z0-9]+", "_", against.lower()).strip("_")
    return QueueWords(name, against, outcome or NOT_IN_QUEUE, words.get("team") or DEFAULT_TEAM)


def canonical(data, marks: dict | None = None):
    """`data` (a rubric document) with the queue-neutral keys renamed to the procedure's; `marks` (a Located's
    line map) is renamed alongside, in place. Both spellings at once is left for the schema to refuse."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    for alias, name in ALIASES:
        parent = data
        for key in alias[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or alias[-1] not in parent or name[-1] in parent:
            continue
        if parent is not data:  # copy the nested mapping before renaming inside it
            parent = dict(parent)
            data[alias[0]] = parent
        parent[name[-1]] = parent.pop(alias[-1])
        if marks is not None:
            old = alias[:-1] + (alias[-1],)
            new = alias[:-1] + (name[-1],)
            for key in [k for k in marks if k[: len(old)] == old]:
                marks[new + key[len(old):]] = marks.pop(key)
    return data
