"""The procedure's vocabulary as types: outcomes, confidences, label roles and each step's decisions.

Every name is a `StrEnum`, so a plan's JSON, a reason's text and a comparison with a plain string see exactly
the word the seed uses (`Outcome.ROUTED == "routed"`); code names the member and a typo fails at import, not in
a plan. A step's decision that is data (step 2's route: the queue's own route names) stays a plain string.

No queue's words are written here: step 1's stable words (the plan's JSON contract) are `triage.config.words`.

May import: the standard library, `triage.config.labels` (the label roles, which labels.json declares),
`triage.config.words` (step 1's stable words).
"""

from __future__ import annotations

from enum import StrEnum

from triage.config.labels import Role
from triage.config.words import IN_QUEUE as _IN_QUEUE
from triage.config.words import NOT_IN_QUEUE as _NOT_IN_QUEUE


class Outcome(StrEnum):
    ALREADY_TRIAGED = "already_triaged"  # step 0: a person classified it (module + sub-oncall)
    NOT_IN_QUEUE = _NOT_IN_QUEUE  # step 1: flagged as not the queue's, for a person to re-route
    ROUTED = "routed"  # step 2: sent to a sub-team that triages further itself
    CLASSIFIED = "classified"  # step 3: module(s) found with high/medium confidence
    NEEDS_REVIEW = "needs_review"  # a person decides: module unclear, or the policy refused to guess
    HIGH_PRIORITY = "high_priority"  # step 5: possibly high priority: a person must look first (no marker)
    NOTHING_TO_DO = "nothing_to_do"  # already processed by the bot, or nothing left to add


class Confidence(StrEnum):
    """Step 3's decision: how sure the module classification is (low picks nothing and asks for review)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Triaged(StrEnum):
    """Step 0: did a person classify the issue already?"""

    ALREADY = "already_triaged"
    PARTLY = "partly_triaged"
    NOT_YET = "untriaged"


class InQueue(StrEnum):
    """Step 1: is the issue the queue's at all?"""

    YES = _IN_QUEUE
    NO = _NOT_IN_QUEUE


class TypeKind(StrEnum):
    """Step 4: the request type (none: a bug report, question or CI report; no type label)."""

    FEATURE = "feature"
    ENHANCEMENT = "enhancement"
    NONE = "none"


class Flag(StrEnum):
    """Step 5: possibly high priority?"""

    FLAG = "flag"
    NO_FLAG = "no_flag"


class Reproduction(StrEnum):
    """Step 6: does a bug report need a reproduction?"""

    REQUEST = "request"  # a request (step 4 found a type): no reproduction is asked
    HAS = "has_reproduction"
    NEEDS = "needs_reproduction"


SKIPPED = "skipped"  # any step's decision when it did not apply (its reason says why)


class CommentStep(StrEnum):
    """The steps that post a comment, as the rubric's `comments:` section keys them (the template names are
    data)."""

    NOT_IN_QUEUE = _NOT_IN_QUEUE
    NEEDS_REPRODUCTION = "needs_reproduction"
    NEEDS_PERFORMANCE_REPRODUCTION = "needs_reproduction_performance"


__all__ = ["CommentStep", "Confidence", "Flag", "InQueue", "Outcome", "Reproduction", "Role", "SKIPPED",
           "Triaged", "TypeKind"]
