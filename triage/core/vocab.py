"""The procedure's vocabulary as types: outcomes, confidences, label roles and each step's decisions.

Every name is a `StrEnum`, so a plan's JSON, a reason's text and a comparison with a plain string see exactly
the word the seed uses (`Outcome.ROUTED == "routed"`); code names the member and a typo fails at import, not in
a plan. A step's decision that is data (step 2's route: the queue's own route names) stays a plain string.

May import: the standard library, `triage.config.labels` (the label roles, which labels.json declares).
"""

from __future__ import annotations

from enum import StrEnum

from triage.config.labels import Role


class Outcome(StrEnum):
    ALREADY_TRIAGED = "already_triaged"  # step 0: a person classified it (module + sub-oncall)
    NOT_DISTRIBUTED = "not_distributed"  # step 1: flagged as mislabelled, for a person to re-route
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


class Distributed(StrEnum):
    """Step 1: is it a distributed issue at all?"""

    YES = "distributed"
    NO = "not_distributed"


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
    """The steps that post a comment, as the rubric's `comments:` section keys them (the template names are data)."""

    NOT_DISTRIBUTED = "not_distributed"
    NEEDS_REPRODUCTION = "needs_reproduction"
    NEEDS_PERFORMANCE_REPRODUCTION = "needs_reproduction_performance"


__all__ = ["CommentStep", "Confidence", "Distributed", "Flag", "Outcome", "Reproduction", "Role", "SKIPPED",
           "Triaged", "TypeKind"]
