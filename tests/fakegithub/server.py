"""A stateful GitHub REST stand-in on 127.0.0.1 for end-to-end tests.

It serves the 14 operations in tests/contract/rest/, keeps state you can seed and inspect from Python, logs every
request, injects faults, and checks itself against GitHub's contract: every request body is validated against the
operation's request schema (422 when it fails, like GitHub) and every response body against the response schema;
a response that disagrees is recorded in `violations` (the `fake_github` fixture fails the test on teardown).
"""
from __future__ import annotations

import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from . import contract, objects

DEFAULT_TOKEN = "ghs_fakegithub_installation_token"
DEFAULT_BOT = "github-actions[bot]"
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
DOCS = "https://docs.github.com/rest"
_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
_QUALIFIER_RE = re.compile(r'(-?)([a-z]+):("[^"]*"|\S+)|"([^"]*)"|(\S+)')


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 0
    user: str | None = None  # login of the authenticated token, None when unauthenticated


@dataclass
class Fault:
    method: str
    path_regex: re.Pattern
    status: int
    headers: dict[str, str]
    body: Any
    times: int
    after_effect: bool  # perform the real operation first, then answer with this fault
    delay: float  # seconds to wait before answering (for client timeouts)
    drop: bool  # close the connection without any answer


@dataclass
class _Issue:
    obj: dict
    comments: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)  # labeled / unlabeled issue events
    timeline: list[dict] = field(default_factory=list)  # events and comments, in order


@dataclass
class _Repo:
    full_name: str
    api: str
    labels: dict[str, dict] = field(default_factory=dict)  # lower-cased name -> label object
    issues: dict[int, _Issue] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # login -> role_name
    default_role: str = "read"  # what a non-collaborator gets on a public repository
    reactions: dict[int, list[dict]] = field(default_factory=dict)  # comment id -> reactions


class ApiError(Exception):
    def __init__(self, status: int, message: str, errors: list[dict] | None = None):
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors


class FakeGitHub:
    """Use as a context manager (or `start()`/`stop()`); `url` is the GITHUB_API_URL to hand to the client."""

    def __init__(self, *, token: str = DEFAULT_TOKEN, bot_login: str = DEFAULT_BOT):
        self._lock = threading.RLock()
        self._ids = 1000
        self._ticks = 0
        self._repos: dict[str, _Repo] = {}
        self._users: dict[str, dict] = {}
        self._tokens: dict[str, str] = {}
        self._faults: list[Fault] = []
        self.requests: list[LoggedRequest] = []
        self.violations: list[str] = []
        self.token = token
        self.bot_login = bot_login
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.add_user(bot_login, user_type="Bot")
        self.add_token(token, bot_login)

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,),
                                        name="fakegithub", daemon=True)  # short poll: fast shutdown
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- seeding -----------------------------------------------------------------------------------------------

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def _now(self) -> str:
        """A deterministic clock: one second per write, so `updated_at` visibly changes."""
        self._ticks += 1
        return (_EPOCH + timedelta(seconds=self._ticks)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def add_user(self, login: str, *, user_type: str = "User") -> dict:
        with self._lock:
            if login not in self._users:
                self._users[login] = objects.user(login, self._next_id(), user_type)
            return self._users[login]

    def add_token(self, token: str, login: str) -> None:
        """Make `token` authenticate as `login` (created as a User if unknown)."""
        with self._lock:
            self.add_user(login)
            self._tokens[token] = login

    def add_repo(self, full_name: str, *, default_role: str = "read") -> None:
        with self._lock:
            if full_name not in self._repos:
                self._repos[full_name] = _Repo(full_name, f"https://api.github.com/repos/{full_name}",
                                               default_role=default_role)

    def _repo(self, full_name: str) -> _Repo:
        self.add_repo(full_name)
        return self._repos[full_name]

    def add_label(self, repo: str, name: str, *, color: str = "ededed", description: str | None = None) -> dict:
        with self._lock:
            state = self._repo(repo)
            if name.lower() not in state.labels:
                state.labels[name.lower()] = objects.label(state.api, self._next_id(), name, color, description)
            return state.labels[name.lower()]

    def set_role(self, repo: str, login: str, role: str, *, user_type: str = "User") -> None:
        """Give `login` a role on `repo`: one of admin, maintain, write, triage, read, none."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; expected one of {ROLES}")
        with self._lock:
            self.add_user(login, user_type=user_type)
            self._repo(repo).roles[login] = role

    def add_issue(self, repo: str, number: int | None = None, *, title: str = "An issue", body: str | None = "",
                  labels: tuple[str, ...] | list[str] = (), author: str = "reporter", author_type: str = "User",
                  state: str = "open", pull_request: bool = False) -> dict:
        with self._lock:
            repo_state = self._repo(repo)
            if number is None:
                number = max(repo_state.issues, default=0) + 1
            label_objs = [dict(self.add_label(repo, name)) for name in labels]
            obj = objects.issue(repo_state.api, repo, number, self._next_id(), title=title, body=body,
                                author=self.add_user(author, user_type=author_type), labels=label_objs,
                                state=state, created_at=self._now(), pull_request=pull_request)
            repo_state.issues[number] = _Issue(obj)
            return obj

    def add_comment(self, repo: str, number: int, body: str, *, author: str = "commenter",
                    author_type: str = "User") -> dict:
        with self._lock:
            return self._create_comment(repo, number, body, self.add_user(author, user_type=author_type))

    def add_label_event(self, repo: str, number: int, label: str, *, event: str = "labeled",
                        actor: str = "maintainer") -> dict:
        """Record history only (the issue's current labels are not changed)."""
        if event not in ("labeled", "unlabeled"):
            raise ValueError("event must be 'labeled' or 'unlabeled'")
        with self._lock:
            return self._record_label_event(repo, number, self.add_label(repo, label), event, self.add_user(actor))

    # ---- inspection --------------------------------------------------------------------------------------------

    def _issue(self, repo: str, number: int) -> _Issue:
        try:
            return self._repos[repo].issues[int(number)]
        except (KeyError, ValueError):
            raise ApiError(404, "Not Found") from None

    def issue(self, repo: str, number: int) -> dict:
        return self._issue(repo, number).obj

    def issue_labels(self, repo: str, number: int) -> list[str]:
        return [label["name"] for label in self.issue(repo, number)["labels"]]

    def comments(self, repo: str, number: int) -> list[dict]:
        return list(self._issue(repo, number).comments)

    def events(self, repo: str, number: int) -> list[dict]:
        return list(self._issue(repo, number).events)

    def repo_labels(self, repo: str) -> list[str]:
        return [label["name"] for label in self._repo(repo).labels.values()]

    def reactions(self, repo: str, comment_id: int) -> list[dict]:
        return list(self._repo(repo).reactions.get(comment_id, []))

    def writes(self) -> list[LoggedRequest]:
        """Every logged request that is not a read."""
        return [r for r in self.requests if r.method not in ("GET", "HEAD")]

    def take_violations(self) -> list[str]:
        """Return and clear the recorded contract violations (for tests that provoke them on purpose)."""
        with self._lock:
            found, self.violations = self.violations, []
            return found

    # ---- fault injection ---------------------------------------------------------------------------------------

    def clear_faults(self) -> None:
        """Forget every injected fault that has not fired yet."""
        with self._lock:
            self._faults.clear()

    def inject(self, method: str, path_regex: str, status: int = 502, *, headers: dict[str, str] | None = None,
               body: Any = None, times: int = 1, after_effect: bool = False, delay: float = 0.0,
               drop: bool = False) -> None:
        """Answer the next `times` requests whose method matches and whose path (no query) fully matches
        `path_regex` with `status`/`headers`/`body` instead of the real result. `after_effect=True` performs the
        real operation first (the write happens, then the client sees the fault). `delay` waits before answering;
        `drop` closes the connection with no answer. Faults are checked before authentication."""
        if body is None and status >= 400:
            body = {"message": "Server Error" if status >= 500 else "Error", "documentation_url": DOCS}
        with self._lock:
            self._faults.append(Fault(method.upper(), re.compile(path_regex), status, dict(headers or {}), body,
                                      times, after_effect, delay, drop))

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fault.method == method and fault.path_regex.fullmatch(path):
                    fault.times -= 1
                    return fault
        return None

    # ---- request handling --------------------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers, raw_body: bytes) -> tuple[int, dict, Any, bool]:
        """Returns (status, headers, body, drop_connection)."""
        split = urlsplit(raw_path)
        path = split.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        body: Any = None
        body_error = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError:
                body, body_error = raw_body.decode("utf-8", "replace"), "Problems parsing JSON"
        entry = LoggedRequest(method, path, query, body)
        with self._lock:
            self.requests.append(entry)

        fault = self._take_fault(method, path)
        if fault and fault.delay:
            time.sleep(fault.delay)
        if fault is None or fault.after_effect:
            try:
                entry.user = self._authenticate(headers.get("Authorization"))
                if body_error:
                    raise ApiError(400, body_error)
                status, out_headers, out_body = self._dispatch(method, path, query, body, entry.user)
            except ApiError as err:
                status, out_headers = err.status, {}
                out_body = {"message": err.message, "documentation_url": DOCS}
                if err.errors:
                    out_body["errors"] = err.errors
        if fault is not None and fault.drop:
            entry.status = -1  # no answer at all
            return -1, {}, None, True
        if fault is not None:
            status, out_headers, out_body = fault.status, dict(fault.headers), fault.body

        route = contract.match_route(method, path)
        if route is not None:
            problems = contract.response_errors(route[0], status, out_body)
            if problems:
                with self._lock:
                    self.violations.append(f"{method} {path} -> {status}: " + "; ".join(problems[:3]))
        entry.status = status
        return status, out_headers, out_body, False

    def _authenticate(self, authorization: str | None) -> str:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() not in ("bearer", "token") or token.strip() not in self._tokens:
            raise ApiError(401, "Bad credentials")
        return self._tokens[token.strip()]

    def _dispatch(self, method: str, path: str, query: dict, body: Any, login: str):
        route = contract.match_route(method, path)
        if route is None:
            raise ApiError(404, "Not Found")
        op_key, params = route
        op_id = contract.operations()[op_key]["operationId"]
        if op_id == "issues/add-labels" and isinstance(body, list):
            body = {"labels": body}  # GitHub also accepts a bare array of labels
        problems = contract.request_body_errors(op_key, body)
        if problems:
            raise ApiError(422, "Invalid request. " + "; ".join(problems[:3]),
                           [{"resource": "Request", "code": "invalid", "message": p} for p in problems[:3]])
        repo = f"{params['owner']}/{params['repo']}" if "owner" in params else None
        if repo is not None and repo not in self._repos:
            raise ApiError(404, "Not Found")
        handler = getattr(self, "_op_" + re.sub(r"\W", "_", op_id))
        with self._lock:
            status, out_headers, out_body = handler(repo=repo, params=params, query=query, body=body,
                                                    user=self._users[login], path=path)
        return status, out_headers, out_body

    # ---- pagination --------------------------------------------------------------------------------------------

    def _page(self, items: list, path: str, query: dict) -> tuple[list, dict]:
        def as_int(name: str, default: int) -> int:
            try:
                return max(int(query.get(name, default)), 1)
            except ValueError:
                return default

        per_page, page = min(as_int("per_page", 30), 100), as_int("page", 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        links = []

        def link(n: int, rel: str) -> str:
            return f'<{self.url}{path}?{urlencode(dict(query, per_page=per_page, page=n))}>; rel="{rel}"'

        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        headers = {"Link": ", ".join(links)} if links else {}
        return items[(page - 1) * per_page: page * per_page], headers

    # ---- state changes shared by seeding and the API -----------------------------------------------------------

    def _touch(self, issue: _Issue) -> str:
        issue.obj["updated_at"] = now = self._now()
        return now

    def _create_comment(self, repo: str, number: int, body: str, author: dict) -> dict:
        repo_state, issue = self._repos[repo], self._issue(repo, number)
        obj = objects.comment(repo_state.api, repo, number, self._next_id(), body=body, author=author,
                              created_at=self._now())
        issue.comments.append(obj)
        issue.timeline.append(objects.comment_timeline_item(obj))
        issue.obj["comments"] += 1
        self._touch(issue)
        return obj

    def _record_label_event(self, repo: str, number: int, label_obj: dict, event: str, actor: dict) -> dict:
        issue = self._issue(repo, number)
        obj = objects.label_event(self._repos[repo].api, self._next_id(), event=event, label_obj=label_obj,
                                  actor=actor, created_at=self._touch(issue))
        issue.events.append(obj)
        issue.timeline.append(obj)
        return obj

    # ---- operations (named after operationId) ------------------------------------------------------------------

    def _op_issues_get(self, repo, params, **_):
        return 200, {}, self._issue(repo, params["issue_number"]).obj

    def _op_issues_list_comments(self, repo, params, query, path, **_):
        return 200, *self._paged(self._issue(repo, params["issue_number"]).comments, path, query)

    def _paged(self, items, path, query):
        page, headers = self._page(items, path, query)
        return headers, page

    def _op_issues_create_comment(self, repo, params, body, user, **_):
        obj = self._create_comment(repo, params["issue_number"], body["body"], user)
        return 201, {"Location": obj["url"]}, obj

    def _op_issues_add_labels(self, repo, params, body, user, **_):
        issue = self._issue(repo, params["issue_number"])
        for item in body.get("labels", []):
            name = item if isinstance(item, str) else item["name"]
            label_obj = self.add_label(repo, name)  # GitHub creates labels that do not exist yet
            if all(existing["name"].lower() != name.lower() for existing in issue.obj["labels"]):
                issue.obj["labels"].append(dict(label_obj))
                self._record_label_event(repo, params["issue_number"], label_obj, "labeled", user)
        return 200, {}, issue.obj["labels"]

    def _op_issues_list_labels_on_issue(self, repo, params, query, path, **_):
        return 200, *self._paged(self._issue(repo, params["issue_number"]).obj["labels"], path, query)

    def _op_issues_list_events_for_timeline(self, repo, params, query, path, **_):
        return 200, *self._paged(self._issue(repo, params["issue_number"]).timeline, path, query)

    def _op_issues_list_events(self, repo, params, query, path, **_):
        return 200, *self._paged(self._issue(repo, params["issue_number"]).events, path, query)

    def _op_issues_list_labels_for_repo(self, repo, query, path, **_):
        return 200, *self._paged(list(self._repos[repo].labels.values()), path, query)

    def _op_issues_create_label(self, repo, body, **_):
        if body["name"].lower() in self._repos[repo].labels:
            raise ApiError(422, "Validation Failed", [{"resource": "Label", "code": "already_exists",
                                                       "field": "name"}])
        obj = self.add_label(repo, body["name"], color=body.get("color", "ededed"),
                             description=body.get("description"))
        return 201, {"Location": obj["url"]}, obj

    def _op_reactions_create_for_issue_comment(self, repo, params, body, user, **_):
        comment_id = int(params["comment_id"])
        repo_state = self._repos[repo]
        if not any(c["id"] == comment_id for issue in repo_state.issues.values() for c in issue.comments):
            raise ApiError(404, "Not Found")
        existing = repo_state.reactions.setdefault(comment_id, [])
        for reaction in existing:
            if reaction["user"]["login"] == user["login"] and reaction["content"] == body["content"]:
                return 200, {}, reaction
        obj = objects.reaction(self._next_id(), content=body["content"], by=user, created_at=self._now())
        existing.append(obj)
        return 201, {}, obj

    def _op_repos_get_collaborator_permission_level(self, repo, params, **_):
        login = params["username"]
        if login not in self._users:
            raise ApiError(404, "Not Found")
        repo_state = self._repos[repo]
        return 200, {}, objects.permission(self._users[login], repo_state.roles.get(login, repo_state.default_role))

    def _op_issues_list_for_repo(self, repo, query, path, **_):
        state = query.get("state", "open")
        wanted = [name.strip().lower() for name in query.get("labels", "").split(",") if name.strip()]
        found = [issue.obj for issue in self._repos[repo].issues.values()
                 if (state == "all" or issue.obj["state"] == state)
                 and all(w in {l["name"].lower() for l in issue.obj["labels"]} for w in wanted)]
        found.sort(key=lambda obj: obj["number"], reverse=query.get("direction", "desc") == "desc")
        return 200, *self._paged(found, path, query)

    def _op_search_issues_and_pull_requests(self, query, path, **_):
        if not query.get("q", "").strip():
            raise ApiError(422, "Validation Failed", [{"resource": "Search", "field": "q", "code": "missing"}])
        matches = [objects.search_item(issue.obj) for repo in self._repos.values() for issue in repo.issues.values()
                   if _search_matches(query["q"], repo.full_name, issue.obj)]
        matches.sort(key=lambda obj: obj["number"], reverse=query.get("order", "desc") == "desc")
        page, headers = self._page(matches, path, query)
        return 200, headers, {"total_count": len(matches), "incomplete_results": False, "search_type": "lexical",
                              "items": page}

    def _op_rate_limit_get(self, **_):
        return 200, {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999",
                     "X-RateLimit-Reset": str(int(time.time()) + 3600)}, contract.example(
                         "GET /rate_limit", "200")


def _search_matches(q: str, repo: str, issue: dict) -> bool:
    """The search qualifiers the project uses: repo:, is:issue/pr/open/closed, state:, label:, -label:, free text.
    Anything else is refused loudly (422) rather than silently ignored."""
    labels = {label["name"].lower() for label in issue["labels"]}
    for negated, key, value, quoted, word in _QUALIFIER_RE.findall(q):
        if not key:
            text = (quoted or word).lower()
            if text not in (issue["title"] + " " + (issue["body"] or "")).lower():
                return False
            continue
        value = value[1:-1] if value.startswith('"') and value.endswith('"') else value
        if key == "repo":
            ok = value.lower() == repo.lower()
        elif key == "label":
            ok = any(v.strip().lower() in labels for v in value.split(","))
        elif key in ("is", "state") and value in ("open", "closed"):
            ok = issue["state"] == value
        elif key in ("is", "type") and value in ("issue", "pr"):
            ok = ("pull_request" in issue) == (value == "pr")
        else:
            raise ApiError(422, f"the stand-in does not support the search qualifier {key}:{value}")
        if ok == bool(negated):
            return False
    return True


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that timed out (e.g. on an injected delay) hangs up before we answer: not an error here.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    app: FakeGitHub
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every request.
    disable_nagle_algorithm = True

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        status, headers, body, drop = self.app.handle(self.command, self.path, self.headers, raw_body)
        if drop:
            self.close_connection = True
            return
        payload = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format, *args) -> None:  # noqa: A002 - keep test output quiet
        pass
