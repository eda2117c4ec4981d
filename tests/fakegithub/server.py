"""A stateful GitHub REST stand-in on 127.0.0.1 for end-to-end tests.

It serves the operations in tests/contract/rest/, keeps state you can seed and inspect from Python, logs every
request, injects faults, and checks itself against GitHub's contract: every request body is validated against the
operation's request schema (422 when it fails, like GitHub) and every response body against the response schema;
a response that disagrees is recorded in `violations` (the `fake_github` fixture fails the test on teardown).

It also behaves like GitHub where a client can get it wrong at scale:
- Rate limits (`RateLimits`): a primary budget per hour (and one for search per minute) reported in the
  `x-ratelimit-*` headers of every answer and refused with 403 once spent, and secondary limits on
  content-creating requests per minute and per hour (403, GitHub's message and `retry-after`). Every refusal is
  recorded in `limit_events`. Time is the server's `clock`: pass a `VirtualClock` and give its `sleep` to the
  client, and an hour of pacing passes in milliseconds.
- Search consistency (`search_mode`): "immediate" (search reflects every write at once, so the pages of a query
  that excludes labelled issues shift under a sweep that labels them) or "lagging" (the search index sees a write
  only `search_lag_seconds` of clock time and `search_lag_requests` requests after it happened, and shows the stale
  issue until then).
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler

from loopback import QuietServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from . import contract, objects

DEFAULT_TOKEN = "ghs_fakegithub_installation_token"
DEFAULT_BOT = "github-actions[bot]"
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
DOCS = "https://docs.github.com/rest"
_EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)
_QUALIFIER_RE = re.compile(r'(-?)([a-z]+):("[^"]*"|\S+)|"([^"]*)"|(\S+)')
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
SECONDARY_LIMIT_MESSAGE = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try "
                           "again. If you reach out to GitHub Support for help, please include the request ID.")
PRIMARY_LIMIT_MESSAGE = "API rate limit exceeded for installation. Please wait until the rate limit resets."
SEARCH_MODES = ("immediate", "lagging")


class VirtualClock:
    """Epoch seconds that move only when told to: `sleep` (hand it to the client) and `advance` add time at once."""

    def __init__(self, start: float = _EPOCH.timestamp()):
        self._now = float(start)
        self._lock = threading.Lock()
        self.slept: list[float] = []

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not go back")
        with self._lock:
            self._now += seconds

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(max(seconds, 0.0))


@dataclass
class RateLimits:
    """GitHub's limits as the stand-in enforces them. The defaults are a personal token's primary budget and the
    search budget; secondary limits are off unless set (80/min and 500/h are GitHub's documented content-creation
    limits), since a test on the real clock would have to wait them out. A `GITHUB_TOKEN` has 1,000 an hour."""

    core_per_hour: int = 5000
    search_per_minute: int = 30
    writes_per_minute: int | None = None
    writes_per_hour: int | None = None
    secondary_retry_after: int = 60

    @classmethod
    def github_token(cls) -> RateLimits:
        """A workflow's GITHUB_TOKEN with GitHub's secondary limits (tests/contract/rest/rate-limits.json)."""
        return cls(core_per_hour=1000, search_per_minute=30, writes_per_minute=80, writes_per_hour=500)


@dataclass
class LimitEvent:
    kind: str  # "primary", "search", "secondary-minute", "secondary-hour"
    at: float
    method: str
    path: str


@dataclass
class _Window:
    """A fixed rate-limit window that starts with its first request, as GitHub's does."""

    length: float
    limit: int
    start: float | None = None
    used: int = 0

    def roll(self, now: float) -> None:
        if self.start is None or now >= self.start + self.length:
            self.start, self.used = now, 0

    def headers(self, now: float, resource: str) -> dict[str, str]:
        self.roll(now)
        reset = int(self.start + self.length) if self.start is not None else int(now + self.length)
        return {"x-ratelimit-limit": str(self.limit), "x-ratelimit-remaining": str(max(self.limit - self.used, 0)),
                "x-ratelimit-used": str(self.used), "x-ratelimit-reset": str(reset),
                "x-ratelimit-resource": resource}


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 0
    user: str | None = None  # login of the authenticated token, None when unauthenticated
    token: str | None = None  # the token it was sent with (two runs of one account, told apart)


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
    repo: str = ""
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
    issue_reactions: dict[int, list[dict]] = field(default_factory=dict)  # issue number -> reactions
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (ref, path) -> content
    damaged: dict[tuple[str, str], str] = field(default_factory=dict)  # (ref, path) -> `content` served instead
    default_branch: str = "main"


class ApiError(Exception):
    def __init__(self, status: int, message: str, errors: list[dict] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors
        self.headers = dict(headers or {})


class FakeGitHub:
    """Use as a context manager (or `start()`/`stop()`); `url` is the GITHUB_API_URL to hand to the client."""

    def __init__(self, *, token: str = DEFAULT_TOKEN, bot_login: str = DEFAULT_BOT,
                 rate_limits: RateLimits | None = None, clock=None, search_mode: str = "immediate",
                 search_lag_seconds: float = 0.0, search_lag_requests: int = 0, epoch: datetime | None = None,
                 request_delay: float = 0.0):
        if search_mode not in SEARCH_MODES:
            raise ValueError(f"search_mode must be one of {SEARCH_MODES}, not {search_mode!r}")
        self._lock = threading.RLock()
        self.clock = clock or time.time
        self.rate_limits = rate_limits or RateLimits()
        self._core = _Window(3600.0, self.rate_limits.core_per_hour)
        self._search = _Window(60.0, self.rate_limits.search_per_minute)
        self.write_times: list[float] = []  # clock time of every content-creating request that was accepted
        self.limit_events: list[LimitEvent] = []
        self.search_mode = search_mode
        self.search_lag_seconds, self.search_lag_requests = search_lag_seconds, search_lag_requests
        # Seconds every answer waits before the request takes effect (a network's and GitHub's latency, which
        # widens the window between a run's read and its write). Settable at any time.
        self.request_delay = request_delay
        self._search_index: dict[int, tuple[str, dict]] = {}  # issue id -> (repo, issue as the index sees it)
        self._pending_index: list[tuple[float, int, int, str, dict]] = []  # (time, request no, id, repo, issue)
        self._ids = 1000
        self._ticks = 0
        self.epoch = epoch or _EPOCH  # the first timestamp; each write is one second later (`_now`)
        self._repos: dict[str, _Repo] = {}
        self._users: dict[str, dict] = {}
        self._tokens: dict[str, str] = {}
        self._read_only: set[str] = set()  # tokens whose writes are refused (403), see add_token
        self._faults: list[Fault] = []
        self.requests: list[LoggedRequest] = []
        self.violations: list[str] = []
        self.token = token
        self.bot_login = bot_login
        self._httpd: QuietServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""
        self.add_user(bot_login, user_type="Bot")
        self.add_token(token, bot_login)

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = QuietServer(("127.0.0.1", 0), handler)
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
        return (self.epoch + timedelta(seconds=self._ticks)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def add_user(self, login: str, *, user_type: str = "User") -> dict:
        with self._lock:
            if login not in self._users:
                self._users[login] = objects.user(login, self._next_id(), user_type)
            return self._users[login]

    def add_token(self, token: str, login: str, *, read_only: bool = False) -> None:
        """Make `token` authenticate as `login` (created as a User if unknown). `read_only`: a token with only read
        permissions (a workflow's `permissions: issues: read`): every write is refused as GitHub refuses it."""
        with self._lock:
            self.add_user(login)
            self._tokens[token] = login
            if read_only:
                self._read_only.add(token)

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
            if state == "closed":  # closed as it was opened: GitHub sets when and why
                obj.update(closed_at=obj["created_at"], state_reason="completed")
            repo_state.issues[number] = _Issue(obj, repo)
            self._search_index[obj["id"]] = (repo, json.loads(json.dumps(obj)))  # seeded state is indexed
            return obj

    def add_comment(self, repo: str, number: int, body: str, *, author: str = "commenter",
                    author_type: str = "User", association: str | None = None) -> dict:
        """A comment by `author`; its `author_association` as GitHub gives it: `association` when given, else from
        the author's role on the repository (the owner: OWNER; admin, maintain or write: COLLABORATOR; else NONE)."""
        with self._lock:
            return self._create_comment(repo, number, body, self.add_user(author, user_type=author_type),
                                        association)

    def add_issue_reaction(self, repo: str, number: int, content: str = "eyes", *, author: str,
                           author_type: str = "Bot") -> dict:
        """A reaction on the issue itself, as `author` (e.g. another run's comment claim)."""
        with self._lock:
            by = self.add_user(author, user_type=author_type)
            obj = objects.reaction(self._next_id(), content=content, by=by, created_at=self._now())
            self._repo(repo).issue_reactions.setdefault(number, []).append(obj)
            return obj

    def add_file(self, repo: str, path: str, content: str | bytes, *, ref: str | None = None,
                 damaged_content: str | None = None) -> None:
        """Put a file in the repository (on `ref`, default the default branch) for GET contents.
        `damaged_content` is served as the answer's `content` field instead of the file's base64 (a damaged
        answer: still a valid response by the contract, but not decodable)."""
        with self._lock:
            state = self._repo(repo)
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            key = (ref or state.default_branch, path.strip("/"))
            state.files[key] = data
            if damaged_content is not None:
                state.damaged[key] = damaged_content

    def add_label_event(self, repo: str, number: int, label: str, *, event: str = "labeled",
                        actor: str = "maintainer") -> dict:
        """Record history only (the issue's current labels are not changed)."""
        if event not in ("labeled", "unlabeled"):
            raise ValueError("event must be 'labeled' or 'unlabeled'")
        with self._lock:
            return self._record_label_event(repo, number, self.add_label(repo, label), event, self.add_user(actor))

    def label_issue(self, repo: str, number: int, label: str, *, actor: str, actor_type: str = "User",
                    remove: bool = False) -> dict | None:
        """What a person (or another bot) does in the web UI: add or remove a label on the issue, which GitHub
        records as a `labeled`/`unlabeled` event by `actor` (on the events endpoint and the timeline) and which
        moves `updated_at`. Adding a label the issue has, or removing one it has not, changes nothing (None)."""
        with self._lock:
            issue = self._issue(repo, number)
            label_obj = self.add_label(repo, label)
            carried = [l for l in issue.obj["labels"] if l["name"].lower() == label.lower()]
            if bool(carried) != remove:  # GitHub records no event for a label already there (or already gone)
                return None
            if remove:
                issue.obj["labels"] = [l for l in issue.obj["labels"] if l not in carried]
            else:
                issue.obj["labels"].append(dict(label_obj))
            return self._record_label_event(repo, number, label_obj, "unlabeled" if remove else "labeled",
                                            self.add_user(actor, user_type=actor_type))

    def close_issue(self, repo: str, number: int, *, actor: str = "maintainer", reason: str = "completed") -> dict:
        """Close the issue as `actor` would: state, `closed_at`, `closed_by`, `state_reason`, and a `closed` event
        (GitHub's state-change issue event) on the events endpoint and the timeline."""
        with self._lock:
            issue, by = self._issue(repo, number), self.add_user(actor)
            obj = objects.state_event(self._repos[repo].api, self._next_id(), event="closed", actor=by,
                                      created_at=self._touch(issue), reason=reason)
            issue.obj.update(state="closed", closed_at=obj["created_at"], closed_by=by, state_reason=reason)
            self._index_later(issue)
            issue.events.append(obj)
            issue.timeline.append(obj)
            return obj

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

    def timeline(self, repo: str, number: int) -> list[dict]:
        return list(self._issue(repo, number).timeline)

    def repo_labels(self, repo: str) -> list[str]:
        return [label["name"] for label in self._repo(repo).labels.values()]

    def reactions(self, repo: str, comment_id: int) -> list[dict]:
        return list(self._repo(repo).reactions.get(comment_id, []))

    def issue_reactions(self, repo: str, number: int) -> list[dict]:
        return list(self._repo(repo).issue_reactions.get(number, []))

    def set_issue_reaction_time(self, repo: str, number: int, reaction_id: int, created_at: str) -> None:
        """Give a reaction on an issue another creation time (an old claim, another workflow's reaction)."""
        with self._lock:
            for reaction in self._repo(repo).issue_reactions.get(number, []):
                if reaction["id"] == reaction_id:
                    reaction["created_at"] = created_at

    def writes(self) -> list[LoggedRequest]:
        """Every logged request that is not a read."""
        return [r for r in self.requests if r.method not in ("GET", "HEAD")]

    @property
    def limits_tripped(self) -> bool:
        """Whether any request was refused by a simulated rate limit."""
        return bool(self.limit_events)

    def peak_writes(self, window: float = 60.0) -> int:
        """The most content-creating requests accepted within any `window` seconds of clock time."""
        times, peak, start = sorted(self.write_times), 0, 0
        for end, t in enumerate(times):
            while times[start] <= t - window:
                start += 1
            peak = max(peak, end - start + 1)
        return peak

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
        `drop` closes the connection with no answer. A `body` of bytes is sent as it is (not JSON-encoded). Faults
        are checked before authentication."""
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
        entry = LoggedRequest(method, path, query, body, token=_token_of(headers.get("Authorization")))
        with self._lock:
            self.requests.append(entry)

        if self.request_delay > 0:
            time.sleep(self.request_delay)  # outside the lock: other requests are answered meanwhile
        fault = self._take_fault(method, path)
        if fault and fault.delay:
            time.sleep(fault.delay)
        if fault is None or fault.after_effect:
            rate_headers: dict[str, str] = {}
            try:
                entry.user = self._authenticate(headers.get("Authorization"))
                rate_headers = self._spend(method, path)
                if method in WRITE_METHODS and self._token_of(headers.get("Authorization")) in self._read_only:
                    raise ApiError(403, "Resource not accessible by integration")
                if body_error:
                    raise ApiError(400, body_error)
                status, out_headers, out_body = self._dispatch(method, path, query, body, entry.user)
                out_headers = {**rate_headers, **out_headers}
            except ApiError as err:
                status, out_headers = err.status, {**rate_headers, **err.headers}
                out_body = {"message": err.message, "documentation_url": DOCS}
                if err.errors:
                    out_body["errors"] = err.errors
        if fault is not None and fault.drop:
            entry.status = -1  # no answer at all
            return -1, {}, None, True
        if fault is not None:
            status, out_headers, out_body = fault.status, dict(fault.headers), fault.body

        route = contract.match_route(method, path)
        # The stand-in's own headers (a test's injected fault says what that test wants said, headers and all).
        header_problems = [] if fault is not None else contract.header_errors(route[0] if route else None, status,
                                                                             out_headers, path)
        if header_problems:
            with self._lock:
                self.violations.append(f"{method} {path} -> {status} headers: " + "; ".join(header_problems[:3]))
        if route is not None:
            problems = contract.response_errors(route[0], status, out_body)
            if problems:
                with self._lock:
                    self.violations.append(f"{method} {path} -> {status}: " + "; ".join(problems[:3]))
        entry.status = status
        return status, out_headers, out_body, False

    # ---- rate limits -------------------------------------------------------------------------------------------

    def _spend(self, method: str, path: str) -> dict[str, str]:
        """Count one authenticated request against its budget and return the rate-limit headers to send, or raise
        the 403 GitHub answers when a primary or secondary limit is exceeded (the refusal itself is not counted)."""
        if path == "/rate_limit":
            return {}  # "does not count against your REST API rate limit"
        with self._lock:
            now = self.clock()
            resource = "search" if path.startswith("/search/") else "core"
            window = self._search if resource == "search" else self._core
            window.roll(now)
            if window.used >= window.limit:
                self.limit_events.append(LimitEvent("primary" if resource == "core" else "search", now, method,
                                                    path))
                raise ApiError(403, PRIMARY_LIMIT_MESSAGE, headers=window.headers(now, resource))
            if method in WRITE_METHODS:
                limits = self.rate_limits
                for kind, cap, length in (("secondary-minute", limits.writes_per_minute, 60.0),
                                          ("secondary-hour", limits.writes_per_hour, 3600.0)):
                    if cap is not None and sum(1 for t in self.write_times if t > now - length) >= cap:
                        self.limit_events.append(LimitEvent(kind, now, method, path))
                        raise ApiError(403, SECONDARY_LIMIT_MESSAGE, headers={
                            **window.headers(now, resource), "retry-after": str(limits.secondary_retry_after)})
                self.write_times.append(now)
            window.used += 1
            return window.headers(now, resource)

    def rate_headers_now(self, resource: str = "core") -> dict[str, str]:
        """The x-ratelimit-* headers as the next answer would carry them (for tests)."""
        with self._lock:
            return (self._search if resource == "search" else self._core).headers(self.clock(), resource)

    @staticmethod
    def _token_of(authorization: str | None) -> str:
        return (authorization or "").partition(" ")[2].strip()

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
        self._index_later(issue)
        return now

    # ---- the search index --------------------------------------------------------------------------------------

    def _index_later(self, issue: _Issue) -> None:
        """Queue the issue's current state for the search index (lagging mode); seen at once when immediate."""
        snapshot = json.loads(json.dumps(issue.obj))
        if self.search_mode == "immediate":
            self._search_index[issue.obj["id"]] = (issue.repo, snapshot)
        else:
            self._pending_index.append((self.clock(), len(self.requests), issue.obj["id"], issue.repo, snapshot))

    def _flush_index(self) -> None:
        now, count = self.clock(), len(self.requests)
        while self._pending_index:
            at, request_no, issue_id, repo, snapshot = self._pending_index[0]
            if now - at < self.search_lag_seconds or count - request_no < self.search_lag_requests:
                break
            self._search_index[issue_id] = (repo, snapshot)
            self._pending_index.pop(0)

    def _searchable(self) -> list[tuple[str, dict]]:
        """(repo, issue) pairs as the search index sees them: the live issues when immediate."""
        if self.search_mode == "immediate":
            return [(repo.full_name, issue.obj) for repo in self._repos.values() for issue in repo.issues.values()]
        self._flush_index()
        return list(self._search_index.values())

    def _create_comment(self, repo: str, number: int, body: str, author: dict, association: str | None = None) -> dict:
        repo_state, issue = self._repos[repo], self._issue(repo, number)
        if association is None:
            role = repo_state.roles.get(author["login"])
            association = ("OWNER" if author["login"] == repo.split("/")[0] else
                           "COLLABORATOR" if role in ("admin", "maintain", "write") else "NONE")
        obj = objects.comment(repo_state.api, repo, number, self._next_id(), body=body, author=author,
                              created_at=self._now(), association=association)
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

    def _op_reactions_create_for_issue(self, repo, params, body, user, **_):
        # As documented: 201 for a new reaction, 200 when this user already added this content to the issue. The
        # check and the append happen under the server's one lock, so two requests at once cannot both get 201.
        issue = self._issue(repo, int(params["issue_number"]))
        existing = self._repos[repo].issue_reactions.setdefault(issue.obj["number"], [])
        for reaction in existing:
            if reaction["user"]["login"] == user["login"] and reaction["content"] == body["content"]:
                return 200, {}, reaction
        obj = objects.reaction(self._next_id(), content=body["content"], by=user, created_at=self._now())
        existing.append(obj)
        return 201, {}, obj

    def _op_reactions_delete_for_issue(self, repo, params, user, **_):
        # 204, no body. Only the reaction's own account removes it (the bot's claim; GitHub has no way to delete
        # another user's reaction); a reaction that is not on this issue (any more) is 404.
        issue = self._issue(repo, int(params["issue_number"]))
        existing = self._repos[repo].issue_reactions.get(issue.obj["number"], [])
        found = next((r for r in existing if r["id"] == int(params["reaction_id"])), None)
        if found is None:
            raise ApiError(404, "Not Found")
        if found["user"]["login"] != user["login"]:
            raise ApiError(403, "Must be the reaction's own user to delete it.")
        existing.remove(found)
        return 204, {}, None

    def _op_issues_delete_comment(self, repo, params, user, **_):
        # 204, no body. Its author, or someone with write access, deletes a comment; the issue's comment count goes
        # down (as on GitHub; its `updated_at` is not moved).
        comment_id = int(params["comment_id"])
        repo_state = self._repos[repo]
        for issue in repo_state.issues.values():
            found = next((c for c in issue.comments if c["id"] == comment_id), None)
            if found is None:
                continue
            if found["user"]["login"] != user["login"] and repo_state.roles.get(user["login"]) not in (
                    "admin", "maintain", "write"):
                raise ApiError(403, "Resource not accessible by integration")
            issue.comments.remove(found)
            issue.timeline[:] = [item for item in issue.timeline
                                 if not (item.get("event") == "commented" and item.get("id") == comment_id)]
            issue.obj["comments"] -= 1
            repo_state.reactions.pop(comment_id, None)
            return 204, {}, None
        raise ApiError(404, "Not Found")

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
        sort, order = query.get("sort"), query.get("order", "desc")
        if sort not in (None, "created", "updated", "comments") or order not in ("asc", "desc"):
            raise ApiError(422, f"the stand-in does not support sort={sort} order={order}")
        matches = [objects.search_item(obj) for repo, obj in self._searchable()
                   if _search_matches(query["q"], repo, obj)]
        if sort is None:  # "best match": the stand-in has no relevance score, so newest number first
            matches.sort(key=lambda obj: obj["number"], reverse=order == "desc")
        else:
            field_name = {"created": "created_at", "updated": "updated_at", "comments": "comments"}[sort]
            matches.sort(key=lambda obj: (obj[field_name], obj["number"]), reverse=order == "desc")
        page, headers = self._page(matches, path, query)
        return 200, headers, {"total_count": len(matches), "incomplete_results": False, "search_type": "lexical",
                              "items": page}

    def _op_rate_limit_get(self, **_):
        now = self.clock()
        body = contract.example("GET /rate_limit", "200")
        for resource, window in (("core", self._core), ("search", self._search)):
            headers = window.headers(now, resource)
            body["resources"][resource] = {"limit": window.limit, "remaining": int(headers["x-ratelimit-remaining"]),
                                           "reset": int(headers["x-ratelimit-reset"]), "used": window.used}
        body["rate"] = dict(body["resources"]["core"])
        core = self._core.headers(now, "core")
        return 200, {"X-RateLimit-Limit": core["x-ratelimit-limit"],
                     "X-RateLimit-Remaining": core["x-ratelimit-remaining"],
                     "X-RateLimit-Reset": core["x-ratelimit-reset"]}, body

    def _op_repos_get_content(self, repo, params, query, **_):
        state = self._repos[repo]
        ref = query.get("ref") or state.default_branch
        path = params["path"].strip("/")
        if (ref, path) in state.files:
            obj = objects.content_file(state.api, repo, path, ref, state.files[(ref, path)])
            if (ref, path) in state.damaged:
                obj["content"] = state.damaged[(ref, path)]
            return 200, {}, obj
        prefix = path + "/"
        children: dict[str, bytes | None] = {}
        for (file_ref, file_path), data in state.files.items():
            if file_ref == ref and file_path.startswith(prefix):
                name, _, rest = file_path[len(prefix):].partition("/")
                children[prefix + name] = None if rest else data
        if not children:
            raise ApiError(404, "Not Found")
        return 200, {}, [objects.content_dir_entry(state.api, repo, child, ref, data)
                         for child, data in sorted(children.items())]

    def _op_issues_get_label(self, repo, params, **_):
        found = self._repos[repo].labels.get(params["name"].lower())
        if found is None:
            raise ApiError(404, "Not Found")
        return 200, {}, found

    def _op_issues_update_label(self, repo, params, body, **_):
        labels = self._repos[repo].labels
        found = labels.get(params["name"].lower())
        if found is None:
            raise ApiError(404, "Not Found")
        body = body or {}
        new_name = body.get("new_name")
        if new_name is not None and new_name.lower() != found["name"].lower() and new_name.lower() in labels:
            raise ApiError(422, "Validation Failed", [{"resource": "Label", "code": "already_exists",
                                                       "field": "name"}])
        if "color" in body:
            found["color"] = body["color"].lstrip("#")
        if "description" in body:
            found["description"] = body["description"]
        if new_name is not None:
            del labels[found["name"].lower()]
            found["name"] = new_name
            found["url"] = f"{self._repos[repo].api}/labels/{new_name}"
            labels[new_name.lower()] = found
        for issue in self._repos[repo].issues.values():  # issues carry copies of their labels
            for carried in issue.obj["labels"]:
                if carried["id"] == found["id"]:
                    carried.update(found)
        return 200, {}, found


def _token_of(authorization: str | None) -> str | None:
    scheme, _, token = (authorization or "").partition(" ")
    return token.strip() or None if scheme.lower() in ("bearer", "token") else None


def _search_matches(q: str, repo: str, issue: dict) -> bool:
    """The search qualifiers the project uses: repo:, is:issue/pr/open/closed, state:, label:, -label:,
    created: and updated: with >=/>/<=/< (ISO 8601 timestamps), free text.
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
        elif key in ("created", "updated") and (value[:2] in (">=", "<=") or value[:1] in (">", "<")):
            # GitHub's date-range qualifiers with an ISO 8601 timestamp (the sweep pages by key with created:;
            # shadow narrows its window with updated:).
            op = value[:2] if value[:2] in (">=", "<=") else value[:1]
            when, stamp = value[len(op):], issue[f"{key}_at"]
            ok = {">=": stamp >= when, "<=": stamp <= when, ">": stamp > when, "<": stamp < when}[op]
        else:
            raise ApiError(422, f"the stand-in does not support the search qualifier {key}:{value}")
        if ok == bool(negated):
            return False
    return True


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
        # bytes go out as they are (an injected fault's proxy page, or JSON nested deeper than a parser takes)
        payload = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
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
