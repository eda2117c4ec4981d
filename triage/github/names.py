"""GitHub naming facts that need no HTTP: the default API URL, repository names, bot accounts.

Kept apart from `triage.github.client` (which imports requests) so that the planner and the Action's cold path,
which must stay fast for events that are not ours, can use them too.
"""

from __future__ import annotations

import re

DEFAULT_API_URL = "https://api.github.com"

_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


def validate_repo(repo: str) -> tuple[str, str]:
    """Split "owner/name", rejecting anything else with one clear error."""
    if not isinstance(repo, str) or not _REPO_RE.match(repo) or repo.split("/")[1] in (".", ".."):
        raise ValueError(f"invalid repository {repo!r}: expected \"owner/name\"")
    owner, name = repo.split("/")
    return owner, name


def is_bot_account(login: str, account_type: str | None) -> bool:
    """GitHub marks apps' accounts with type "Bot"; their logins end in "[bot]" (e.g. github-actions[bot])."""
    return account_type == "Bot" or login.endswith("[bot]")
