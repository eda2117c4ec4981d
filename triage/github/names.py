"""GitHub naming facts that need no HTTP: the default API URL, repository names, bot accounts, and when a comment's
body as GitHub gives it back is the body that was posted.

Kept apart from `triage.github.client` (which imports requests) so that the planner and the Action's cold path,
which must stay fast for events that are not ours, can use them too.
"""

from __future__ import annotations

import re
from typing import Mapping

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


def same_body(body: object) -> str:
    """A comment's body as compared with what was posted: GitHub may give back CRLF line ends, and trailing space
    on a line or around the whole is not what tells two comments apart."""
    text = body if isinstance(body, str) else ""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()


def resolve_api_url(explicit: str | None, environ: Mapping[str, str]) -> str:
    """The one place the API URL is worked out: an explicit value, else $GITHUB_API_URL, else api.github.com.
    Raises ValueError (one line) for anything that is not an http(s) URL."""
    url = (explicit or environ.get("GITHUB_API_URL") or DEFAULT_API_URL).strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"the GitHub API URL must be an http(s) URL, got {url!r}")
    return url


def resolve_token(explicit: str | None, environ: Mapping[str, str]) -> str:
    """The one place the token is found: an explicit value (the Action's input), else $GITHUB_TOKEN; "" if none."""
    return (explicit or "").strip() or environ.get("GITHUB_TOKEN", "").strip()


def resolve_max_backoff(environ: Mapping[str, str]) -> float | None:
    """PTD_TRIAGE_MAX_BACKOFF caps every retry sleep (seconds): tests use it; so can a run that must not wait.
    None when unset; ValueError (one line) when it is not a number of seconds."""
    value = environ.get("PTD_TRIAGE_MAX_BACKOFF", "").strip()
    if not value:
        return None
    try:
        cap = float(value)
    except ValueError:
        cap = -1.0
    if cap < 0:
        raise ValueError(f"PTD_TRIAGE_MAX_BACKOFF must be a number of seconds, got {value!r}")
    return cap
