"""GitHub REST client: the endpoints the project uses, on the one transport (triage.github.transport: retries,
timeouts and deadlines, the rate-limit reserve, write pacing, pagination). The only module that talks to GitHub.

Imports: `triage.github.transport`, `triage.github.names`, `triage.http.errors`, `triage.http.decisions`. Nothing
from the core, the planners, the service or the Action.

Why it is shaped like this:
- Only additive writes on issues exist (comment, add labels, reaction, create label). There is deliberately no
  method that removes or replaces labels, closes, edits or assigns issues, so no bug or hostile issue text can make
  the bot do so. The one update, `update_label`, changes a repository label's colour and description and never its
  name (a rename would silently relabel every issue that carries it). The two removals belong to the comment claim
  (triage.service.claim) and take only what the bot's own account made: a reaction of its own on an issue, by id
  (`release_claim`), and a comment of its own, by id, checked against its author (`delete_own_comment`).
- Creating a comment is not idempotent: after a 5xx/timeout GitHub may or may not have stored it, so it is only
  retried when we can look first: knowing our own login, we read the comments and take as stored only a comment
  by that login with exactly the body we posted (never anyone else's, whatever marker it carries); none there, we
  post again. Without the login we do not retry. Every other write here is safe to retry.
- It offers what the triage service needs (triage.service.ports.GitHubPort; tests/test_ports.py checks it).
"""
from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from triage.github.names import DEFAULT_API_URL, same_body, validate_repo
from triage.github.transport import PER_PAGE, GitHubTransport
from triage.http.decisions import next_page
from triage.http.errors import (AuthError, BadRequest, BudgetExhausted, HTTPError, NotFound, RateLimited,
                                Transient, is_fatal_for_run)

__all__ = ["DEFAULT_API_URL", "AuthError", "BadRequest", "BudgetExhausted", "GitHubClient", "GitHubError",
           "NotFound", "RateLimited", "Transient", "is_fatal_for_run", "validate_repo"]

# The GitHub-flavoured name callers catch (`except GitHubError`, `.status`): every error this client raises is one.
GitHubError = HTTPError

SEARCH_SORTS = frozenset({"comments", "reactions", "reactions-+1", "reactions--1", "reactions-smile",
                          "reactions-thinking_face", "reactions-heart", "reactions-tada", "interactions",
                          "created", "updated"})
_COLOR_RE = re.compile(r"^[0-9A-Fa-f]{6}$")


class GitHubClient(GitHubTransport):
    # ---- reads -------------------------------------------------------------------------------------------------

    def get_issue(self, repo: str, number: int) -> dict:
        return self._json("GET", self._issue_path(repo, number))

    def list_comments(self, repo: str, number: int) -> list[dict]:
        return list(self._paginate(self._issue_path(repo, number, "/comments")))

    def list_events(self, repo: str, number: int) -> list[dict]:
        return list(self._paginate(self._issue_path(repo, number, "/events")))

    def list_timeline(self, repo: str, number: int) -> list[dict]:
        """The issue's timeline: label events, comments (with their bodies), closes, renames..., oldest first."""
        return list(self._paginate(self._issue_path(repo, number, "/timeline")))

    def list_repo_labels(self, repo: str) -> list[dict]:
        return list(self._paginate(self._repo_path(repo, "/labels")))

    def get_label(self, repo: str, name: str) -> dict | None:
        """The repository's label `name` (GitHub finds it whatever its case; the answer has the name as stored), or
        None when the repository has no such label (404)."""
        try:
            return self._json("GET", self._repo_path(repo, f"/labels/{quote(name, safe='')}"))
        except NotFound:
            return None

    def labels_page(self, repo: str) -> tuple[list[dict], bool]:
        """The first page (up to 100) of the repository's labels, and whether there are more: one request."""
        response = self._request("GET", self._repo_path(repo, "/labels"), params={"per_page": PER_PAGE})
        data = response.json()
        return (list(data) if isinstance(data, list) else []), next_page(response.headers) is not None

    def get_permission(self, repo: str, username: str) -> dict:
        """The collaborator-permission response: `permission` (admin/write/read/none) and `role_name`."""
        return self._json("GET", self._repo_path(repo, f"/collaborators/{quote(username, safe='')}/permission"))

    def get_contents(self, repo: str, path: str, ref: str | None = None) -> str | None:
        """A file's text (UTF-8), or None when it does not exist (404). A directory, a file too large for the
        contents API (over 1 MB) or one that is not UTF-8 text is one clear error."""
        if (not isinstance(path, str) or not path or path.startswith("/") or "\\" in path
                or any(part in ("", ".", "..") for part in path.split("/")) or len(path) > 1024):
            raise ValueError(f"invalid repository file path {path!r}: expected e.g. \".github/ptd-triage.yml\"")
        api_path = self._repo_path(repo, f"/contents/{quote(path, safe='/')}")
        try:
            data = self._json("GET", api_path, params={"ref": ref} if ref else None)
        except NotFound:
            return None
        if not isinstance(data, dict) or data.get("type") != "file":
            kind = "a directory" if isinstance(data, list) else f"a {data.get('type')}" if isinstance(data, dict) \
                else "not a file"
            raise self._error(BadRequest, 200, "GET", api_path, f"{path} is {kind}, not a file")
        if data.get("encoding") != "base64":
            raise self._error(BadRequest, 200, "GET", api_path,
                              f"{path} is too large for the contents API ({data.get('size')} bytes)")
        content = data.get("content")
        try:  # GitHub wraps the base64 in lines; anything else in it is a damaged answer, never guessed around
            raw = base64.b64decode("".join(content.split()) if isinstance(content, str) else "", validate=True)
        except (binascii.Error, ValueError):
            raise self._error(BadRequest, 200, "GET", api_path, f"{path}: its content is not valid base64") from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._error(BadRequest, 200, "GET", api_path, f"{path} is not UTF-8 text") from None

    def list_directory(self, repo: str, path: str) -> list[tuple[str, str]] | None:
        """A folder's entries on the default branch as (name, "file" | "dir" | ...), or None when it does not exist
        (404). A file where the folder should be is one clear error."""
        if (not isinstance(path, str) or not path or path.startswith("/") or "\\" in path
                or any(part in ("", ".", "..") for part in path.split("/")) or len(path) > 1024):
            raise ValueError(f"invalid repository folder path {path!r}: expected e.g. \".github/ptd-triage\"")
        api_path = self._repo_path(repo, f"/contents/{quote(path, safe='/')}")
        try:
            data = self._json("GET", api_path)
        except NotFound:
            return None
        if not isinstance(data, list):
            raise self._error(BadRequest, 200, "GET", api_path, f"{path} is a file, not a folder")
        return [(str(e.get("name")), str(e.get("type"))) for e in data if isinstance(e, dict)]

    def search_page(self, query: str, *, sort: str = "created", order: str = "asc",
                    page: int = 1) -> tuple[list[Any], int]:
        """One page (up to 100) of search results and GitHub's `total_count`. The sweep pages by key (a
        `created:>=` qualifier) with this, rather than by page number: its own writes drop issues out of the
        results, which would shift numbered pages under it. `page` > 1: a numbered page of the same query (for
        more than a page of issues created in the same second, which no key separates). An answer that is not a
        search result (not an object, `items` not a list) is `BadRequest`; the items are as GitHub sent them."""
        if sort not in SEARCH_SORTS:
            raise ValueError(f"unknown search sort {sort!r}; expected one of {', '.join(sorted(SEARCH_SORTS))}")
        params: dict[str, Any] = {"q": query, "sort": sort, "order": order, "per_page": PER_PAGE}
        if page > 1:
            params["page"] = page
        data = self._json("GET", "/search/issues", params=params)
        items = data.get("items") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise self._error(BadRequest, 200, "GET", "/search/issues", "the answer is not a search result (no "
                              "list of items)")
        total = data.get("total_count")
        return items, total if isinstance(total, int) and not isinstance(total, bool) else 0

    def list_issues(self, repo: str, *, labels: list[str] | None = None, state: str = "open",
                    limit: int | None = None) -> Iterator[dict]:
        """Issues of a repository (pull requests, which this endpoint also returns, are skipped)."""
        params: dict[str, Any] = {"state": state}
        if labels:
            params["labels"] = ",".join(labels)
        issues = (item for item in self._paginate(self._repo_path(repo, "/issues"), params)
                  if "pull_request" not in item)
        for count, issue in enumerate(issues, start=1):
            yield issue
            if limit is not None and count >= limit:
                return

    # ---- additive writes ---------------------------------------------------------------------------------------

    def create_comment(self, repo: str, number: int, body: str, *, own_login: str | None = None) -> dict:
        """Post a comment. After a failure GitHub may have acted on (5xx, timeout), the comments are read again and
        a comment by `own_login` (our account, as configured) with exactly this body is the one stored; none
        there, it is posted again. Without `own_login` it is not retried (which comment is ours cannot be told)."""
        path = self._issue_path(repo, number, "/comments")
        wanted = same_body(body)

        def after_uncertain_failure(error: BaseException) -> dict | None:
            if not own_login:
                if isinstance(error, HTTPError):
                    raise error.with_detail("the comment may or may not have been posted, not retrying")
                raise error
            for comment in self.list_comments(repo, number):
                author = (comment.get("user") or {}).get("login") if isinstance(comment, dict) else None
                if author == own_login and same_body(comment.get("body")) == wanted:
                    return comment
            return None

        result = self._request("POST", path, body={"body": body}, on_maybe_processed=after_uncertain_failure)
        return result if isinstance(result, dict) else result.json()

    def add_labels(self, repo: str, number: int, labels: list[str]) -> list[dict]:
        """Add (never replace) labels; idempotent, so safe to retry."""
        if not labels:
            raise ValueError("add_labels needs at least one label")
        return self._json("POST", self._issue_path(repo, number, "/labels"), body={"labels": list(labels)})

    def claim_issue(self, repo: str, number: int, content: str = "eyes") -> tuple[bool, dict]:
        """React to the issue with `content` as our account: (True, reaction) when GitHub created it (201), (False,
        the existing reaction) when this account had already added it (200). Two runs at once cannot both get
        201, which makes the reaction a claim (triage.service.claim). Safe to retry: a retry of a request GitHub
        did act on answers 200, which only makes the claimer wait as if it had lost."""
        response = self._request("POST", self._issue_path(repo, number, "/reactions"), body={"content": content})
        return response.status_code == 201, response.json()

    def release_claim(self, repo: str, number: int, reaction_id: int) -> bool:
        """Delete one reaction of our account from the issue, by its id: a claim nobody is using, taken over
        (triage.service.claim). True when GitHub deleted it, False when it was already gone (404: another run took
        it over first). By id, so a claim another run has just made (a new reaction, a new id) is never touched.
        Safe to retry."""
        try:
            self._request("DELETE", self._issue_path(repo, number, f"/reactions/{int(reaction_id)}"))
        except NotFound:
            return False
        return True

    def delete_own_comment(self, repo: str, comment: dict, login: str) -> bool:
        """Delete a comment written by `login` (our account): a duplicate of our own template comment, posted by
        two runs at once (triage.service.claim). Refused (ValueError, nothing sent) for anyone else's comment.
        True when deleted, False when it was already gone (404). Safe to retry."""
        author = (comment.get("user") or {}).get("login") if isinstance(comment, dict) else None
        if not login or author != login or not isinstance(comment.get("id"), int):
            raise ValueError(f"refusing to delete a comment by {author!r}: only our own ({login!r}) is removed")
        try:
            self._request("DELETE", self._repo_path(repo, f"/issues/comments/{comment['id']}"))
        except NotFound:
            return False
        return True

    def add_reaction(self, repo: str, comment_id: int, content: str = "eyes") -> dict:
        return self._json("POST", self._repo_path(repo, f"/issues/comments/{int(comment_id)}/reactions"),
                          body={"content": content})

    def create_label(self, repo: str, name: str, color: str, description: str) -> dict:
        return self._json("POST", self._repo_path(repo, "/labels"),
                          body={"name": name, "color": color.lstrip("#"), "description": description})

    def update_label(self, repo: str, name: str, color: str, description: str) -> dict:
        """Set an existing label's colour and description. Never its name: the request has no `new_name`."""
        color = color.lstrip("#")
        if not _COLOR_RE.match(color):
            raise ValueError(f"invalid label colour {color!r}: expected six hex digits such as \"d73a4a\"")
        if not name or not isinstance(name, str):
            raise ValueError("update_label needs the label's name")
        return self._json("PATCH", self._repo_path(repo, f"/labels/{quote(name, safe='')}"),
                          body={"color": color, "description": description})
