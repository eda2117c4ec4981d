"""The `not-before` cut-off (github/issue-labeler's name for it): a sweep does not triage issues created before
it, or, in `labels-only` mode, labels them but never comments on them. Going live on a repository with years of
backlog must not post reproduction requests on issues nobody has looked at since.

Only the sweep applies it: an event run (a person added the queue label today, `/ptd-retriage`, a dispatch for
one issue) is a person asking now, whatever the issue's age.

May import: the standard library only (the Action's settings read it on the cold path).
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime

MODES = ("skip", "labels-only")  # skip: not triaged at all (the default); labels-only: labels, never a comment
SKIPPED = "created before not-before ({cutoff}): not triaged (not-before-mode skip)"
NO_COMMENT = "created before not-before ({cutoff}): labels only, no comment (not-before-mode labels-only)"

# The one format (RFC 3339, which is a profile of ISO 8601): a date, or a date and time WITH its zone. ASCII digits
# only ([0-9], not \d, which takes any script's digits); "T" and "Z" in either case, as RFC 3339 allows.
_NOT_BEFORE = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[Tt](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:\.(?P<frac>[0-9]{1,9}))?)?"
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<zh>[0-9]{2}):(?P<zm>[0-9]{2})))?")
_NO_ZONE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?")
EARLIEST = 0  # 1970-01-01T00:00:00Z
LATEST = calendar.timegm((9999, 12, 31, 23, 59, 59))  # 9999-12-31T23:59:59Z
EXPECTED = ("a date (2024-01-31: midnight UTC) or a date and time with its zone (2024-01-31T12:00:00Z, "
            "2024-01-31T12:00:00+02:00), from 1970-01-01 to 9999-12-31T23:59:59Z")


def parse_not_before(text: str) -> str:
    """The one reading of a `not-before` value (the Action's input, the CLI's --not-before, the plans file's
    settings): the cut-off as the timestamp GitHub's search takes (`created:>=2024-01-31T00:00:00Z`: UTC, seconds,
    a four-digit year). Anything else is a ValueError whose message is one line saying what is expected."""
    seconds = not_before_seconds(text)
    when = datetime.fromtimestamp(seconds, UTC)
    return (f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:"
            f"{when.second:02d}Z")


def not_before_seconds(text: str) -> int:
    """`text` as seconds since 1970-01-01T00:00:00Z (see `parse_not_before`): a fraction of a second rounds up,
    since GitHub's timestamps are whole seconds (an issue created at 12:00:00 is not at or after 12:00:00.5)."""
    value = text.strip() if isinstance(text, str) else ""
    found = _NOT_BEFORE.fullmatch(value)
    if found is None:
        raise ValueError(f"must be {EXPECTED}; got {text!r}{_why_not(value)}")
    year, month, day = int(found["y"]), int(found["mo"]), int(found["d"])
    hour, minute, second = (int(found[k] or 0) for k in ("h", "mi", "s"))
    offset = 0
    if found["sign"]:
        zone_hours, zone_minutes = int(found["zh"]), int(found["zm"])
        if zone_hours > 23 or zone_minutes > 59:
            raise ValueError(f"must be {EXPECTED}; got {text!r} (its zone offset is not a real one)")
        offset = (1 if found["sign"] == "+" else -1) * (zone_hours * 3600 + zone_minutes * 60)
    if year < 1970:  # before any arithmetic: year 1 minus an offset is out of datetime's range
        raise ValueError(f"must be {EXPECTED}; got {text!r} (before 1970)")
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError(f"must be {EXPECTED}; got {text!r} (there is no such day)")
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"must be {EXPECTED}; got {text!r} (there is no such time of day)")
    seconds = calendar.timegm((year, month, day, hour, minute, second)) - offset
    seconds += 1 if found["frac"] and int(found["frac"]) else 0
    if not EARLIEST <= seconds <= LATEST:
        side = "before 1970-01-01T00:00:00Z" if seconds < EARLIEST else "after 9999-12-31T23:59:59Z"
        raise ValueError(f"must be {EXPECTED}; got {text!r} ({side} in UTC)")
    return seconds


def _why_not(value: str) -> str:
    """A hint for the usual near misses, or ""."""
    if any(ch.isdigit() and not ch.isascii() for ch in value):
        return " (only the digits 0-9)"
    if _NO_ZONE.fullmatch(value):
        return " (a time needs its zone: Z for UTC, or +HH:MM)"
    if re.fullmatch(r"[0-9]{4}-?[Ww][0-9]{2}.*", value):
        return " (a week date: give the calendar date)"
    return ""


def parse_mode(text: str) -> str:
    mode = text.strip() or "skip"
    if mode not in MODES:
        raise ValueError(f"must be one of {', '.join(MODES)}, got {text!r}")
    return mode


def created_before(issue: dict, cutoff: str) -> bool:
    """Whether the issue (a REST object) was created before the cut-off (as `parse_not_before` wrote it). An issue
    whose date cannot be read is treated as old: the cautious side (no comment) when a cut-off is set."""
    when = github_time(issue.get("created_at"))
    return when is None or when.timestamp() < not_before_seconds(cutoff)


def github_time(stamp: object) -> datetime | None:
    """A GitHub timestamp ("2024-01-31T12:00:00Z"; one without a zone is UTC), or None when it is not one."""
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
