"""REST-shaped objects (users, labels, issues, comments, events, reactions) built from GitHub's own response
examples in the contract, with our values substituted, so they have every field the real API sends."""
from __future__ import annotations

import base64
import hashlib

from .contract import example

ISSUE_OP = "GET /repos/{owner}/{repo}/issues/{issue_number}"
COMMENT_OP = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
EVENTS_OP = "GET /repos/{owner}/{repo}/issues/{issue_number}/events"
LABEL_OP = "POST /repos/{owner}/{repo}/labels"
REACTION_OP = "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
PERMISSION_OP = "GET /repos/{owner}/{repo}/collaborators/{username}/permission"
SEARCH_OP = "GET /search/issues"
CONTENTS_OP = "GET /repos/{owner}/{repo}/contents/{path}"

WEB = "https://github.com"

# role_name -> the legacy `permission` field (maintain and triage are reported as write and read).
LEGACY_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read",
                     "none": "none"}


def user(login: str, user_id: int, user_type: str = "User", api: str = "https://api.github.com") -> dict:
    obj = example(ISSUE_OP)["user"]
    for key, value in list(obj.items()):
        if isinstance(value, str):
            obj[key] = value.replace("https://api.github.com", api).replace("octocat", login)
    obj.update(login=login, id=user_id, node_id=f"U_{user_id}", type=user_type, site_admin=False)
    return obj


def label(repo_api: str, label_id: int, name: str, color: str = "ededed", description: str | None = None) -> dict:
    return {"id": label_id, "node_id": f"LA_{label_id}", "url": f"{repo_api}/labels/{name}", "name": name,
            "description": description, "color": color, "default": False}


def issue(repo_api: str, repo: str, number: int, issue_id: int, *, title: str, body: str | None, author: dict,
          labels: list[dict], state: str, created_at: str, pull_request: bool) -> dict:
    obj = example(ISSUE_OP)
    url = f"{repo_api}/issues/{number}"
    obj.update(
        id=issue_id, node_id=f"I_{issue_id}", url=url, repository_url=repo_api,
        labels_url=url + "/labels{/name}", comments_url=url + "/comments", events_url=url + "/events",
        html_url=f"{WEB}/{repo}/issues/{number}", number=number, state=state, title=title, body=body,
        user=author, labels=labels, assignee=None, assignees=[], milestone=None, locked=False,
        active_lock_reason=None, comments=0, closed_at=None, closed_by=None, created_at=created_at,
        updated_at=created_at, author_association="NONE", state_reason=None,
    )
    if pull_request:
        obj["pull_request"]["url"] = f"{repo_api}/pulls/{number}"
        obj["pull_request"]["html_url"] = f"{WEB}/{repo}/pull/{number}"
    else:
        del obj["pull_request"]
    return obj


def comment(repo_api: str, repo: str, issue_number: int, comment_id: int, *, body: str, author: dict,
            created_at: str, association: str = "NONE") -> dict:
    obj = example(COMMENT_OP, "201")
    obj.update(
        id=comment_id, node_id=f"IC_{comment_id}", url=f"{repo_api}/issues/comments/{comment_id}",
        html_url=f"{WEB}/{repo}/issues/{issue_number}#issuecomment-{comment_id}", body=body, user=author,
        created_at=created_at, updated_at=created_at, issue_url=f"{repo_api}/issues/{issue_number}",
        author_association=association,
    )
    return obj


def label_event(repo_api: str, event_id: int, *, event: str, label_obj: dict, actor: dict, created_at: str) -> dict:
    obj = example(EVENTS_OP)[0]
    obj.update(id=event_id, node_id=f"LE_{event_id}", url=f"{repo_api}/issues/events/{event_id}", actor=actor,
               event=event, commit_id=None, commit_url=None, created_at=created_at, performed_via_github_app=None,
               label={"name": label_obj["name"], "color": label_obj["color"]})
    return obj


def state_event(repo_api: str, event_id: int, *, event: str, actor: dict, created_at: str,
                reason: str | None = None) -> dict:
    """A `closed`/`reopened` issue event (GitHub's state-change issue event): an event without a label."""
    obj = example(EVENTS_OP)[0]
    obj.pop("label", None)
    obj.update(id=event_id, node_id=f"CE_{event_id}", url=f"{repo_api}/issues/events/{event_id}", actor=actor,
               event=event, commit_id=None, commit_url=None, created_at=created_at, performed_via_github_app=None,
               state_reason=reason)
    return obj


def comment_timeline_item(comment_obj: dict) -> dict:
    """A comment as the timeline shows it (event "commented")."""
    return dict(comment_obj, event="commented", actor=comment_obj["user"])


def reaction(reaction_id: int, *, content: str, by: dict, created_at: str) -> dict:
    obj = example(REACTION_OP, "201")
    obj.update(id=reaction_id, node_id=f"REA_{reaction_id}", user=by, content=content, created_at=created_at)
    return obj


def permission(user_obj: dict, role: str) -> dict:
    return {"permission": LEGACY_PERMISSION[role], "role_name": role,
            "user": dict(user_obj, role_name=role, permissions={
                "admin": role == "admin", "maintain": role in ("admin", "maintain"),
                "push": role in ("admin", "maintain", "write"),
                "triage": role in ("admin", "maintain", "write", "triage"),
                "pull": role != "none"})}


def search_item(issue_obj: dict) -> dict:
    return dict(issue_obj, score=1.0)


def _content_entry(repo_api: str, repo: str, path: str, ref: str, data: bytes | None, kind: str) -> dict:
    sha = hashlib.sha1(b"blob %d\0" % len(data or b"") + (data or b"")).hexdigest()  # git's blob id
    url = f"{repo_api}/contents/{path}?ref={ref}"
    html = f"{WEB}/{repo}/{'blob' if kind == 'file' else 'tree'}/{ref}/{path}"
    git = f"{repo_api}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
    return {"type": kind, "size": len(data or b""), "name": path.rsplit("/", 1)[-1], "path": path, "sha": sha,
            "url": url, "git_url": git, "html_url": html,
            "download_url": f"https://raw.githubusercontent.com/{repo}/{ref}/{path}" if kind == "file" else None,
            "_links": {"self": url, "git": git, "html": html}}


def content_file(repo_api: str, repo: str, path: str, ref: str, data: bytes) -> dict:
    """A file as GET contents returns it: base64 in lines of 60 characters, like GitHub's."""
    obj = example(CONTENTS_OP, "200", "response-if-content-is-a-file")
    encoded = base64.b64encode(data).decode("ascii")
    obj.update(_content_entry(repo_api, repo, path, ref, data, "file"), encoding="base64",
               content="".join(encoded[i:i + 60] + "\n" for i in range(0, len(encoded), 60)))
    return obj


def content_dir_entry(repo_api: str, repo: str, path: str, ref: str, data: bytes | None) -> dict:
    """One entry of a directory listing (a file with its size, or a sub-directory)."""
    return _content_entry(repo_api, repo, path, ref, data, "file" if data is not None else "dir")
