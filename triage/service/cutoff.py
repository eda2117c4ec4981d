"""The `not-before` cut-off (github/issue-labeler's name for it): a sweep does not triage issues created before
it, or, in `labels-only` mode, labels them but never comments on them. Going live on a repository with years of
backlog must not post reproduction requests on issues nobody has looked at since.

Only the sweep applies it: an event run (a person added the queue label today, `/ptd-retriage`, a dispatch for
one issue) is a person asking now, whatever the issue's age.

May import: the standard library only (the Action's settings read it on the cold path).
"""

from __future__ import annotations

from datetime import datetime, timezone

MODES = ("skip", "labels-only")  # skip: not triaged at all (the default); labels-only: labels, never a comment
SKIPPED = "created before not-before ({cutoff}): not triaged (not-before-mode skip)"
NO_COMMENT = "created before not-before ({cutoff}): labels only, no comment (not-before-mode labels-only)"


def parse_not_before(text: str) -> str:
    """An ISO 8601 date (2024-01-31) or UTC timestamp (2024-01-31T12:00:00Z) as the timestamp GitHub's search
    takes (`created:>=...`). A timestamp must say its zone; anything else is a ValueError saying what is expected."""
    value = text.strip()
    try:
        if len(value) == 10:
            when = datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        else:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if when.tzinfo is None:
                raise ValueError("no time zone")
    except ValueError:
        raise ValueError(f"must be an ISO 8601 date such as 2024-01-31 (or a timestamp with its zone, such as "
                         f"2024-01-31T12:00:00Z), got {text!r}") from None
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_mode(text: str) -> str:
    mode = text.strip() or "skip"
    if mode not in MODES:
        raise ValueError(f"must be one of {', '.join(MODES)}, got {text!r}")
    return mode


def created_before(issue: dict, cutoff: str) -> bool:
    """Whether the issue (a REST object) was created before the cut-off. An issue whose date cannot be read is
    treated as old: the cautious side (no comment) when a cut-off is set."""
    when = github_time(issue.get("created_at"))
    return when is None or when < datetime.fromisoformat(cutoff.replace("Z", "+00:00"))


def github_time(stamp: object) -> datetime | None:
    """A GitHub timestamp ("2024-01-31T12:00:00Z"; one without a zone is UTC), or None when it is not one."""
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
