"""The `/ptd-retriage` command: its grammar and who may run it.

Grammar: a line of a comment that is exactly the command word, outside fenced code, `>` quotes, HTML comments
and indented code (the markdown scanner in `triage.text.markdown` decides what is what). The cheap checks come
first: a comment that does not contain the word at all is never scanned.

Permission: people whose repository role is triage, write, maintain or admin (GitHub's `role_name`; the legacy
`permission` field reports maintain as "write" and triage as "read", so it is only a fallback for custom roles).

May import: the standard library, `triage.text.markdown`, `triage.github.names`.
"""

from __future__ import annotations

from typing import Any, Mapping

from triage.github.names import is_bot_account

DEFAULT_COMMAND = "/ptd-retriage"
ALLOWED_ROLES = frozenset({"triage", "write", "maintain", "admin"})
ALLOWED_LEGACY_PERMISSIONS = frozenset({"write", "admin"})
MAX_COMMAND_BODY = 65536  # GitHub's own comment limit: anything longer is not a comment GitHub would store


def has_command(body: str | None, command: str = DEFAULT_COMMAND) -> bool:
    """True when a line is exactly `command`, outside code, quotes and HTML comments."""
    if not body or command not in body:
        return False
    from triage.text.markdown import command_lines

    return any(line == command for line in command_lines(body[:MAX_COMMAND_BODY]))


def is_bot(user: Mapping[str, Any]) -> bool:
    return is_bot_account(str(user.get("login") or ""), user.get("type"))


def role_allows_retriage(permission: Mapping[str, Any]) -> tuple[bool, str]:
    role = str(permission.get("role_name") or "")
    legacy = str(permission.get("permission") or "")
    if role in ALLOWED_ROLES:
        return True, role
    if legacy in ALLOWED_LEGACY_PERMISSIONS:  # a custom role built on write/maintain/admin
        return True, f"{role or legacy} (permission {legacy})"
    return False, role or legacy or "none"

