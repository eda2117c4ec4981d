"""The machinery the three LLM stand-ins share: a ThreadingHTTPServer on 127.0.0.1, the request log, the script
of replies and faults, token accounting, and the contract bookkeeping (`violations`).

One call goes: route -> authenticate -> parse the JSON body -> validate it against the provider's contract (400 in
the provider's shape when it fails) -> take the next scripted item (a plan or a `Fault`), else ask the
`responder` -> render the answer in the provider's shape -> check that answer against the contract (and, where the
API guarantees schema-conforming output, the plan against the requested schema); any disagreement is recorded in
`violations` (the fixtures fail the test on teardown). Imports: the standard library and this package.
"""
from __future__ import annotations

import collections
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from loopback import QuietServer
from typing import Any, ClassVar

from .faults import Fault
from .plans import Prompt, default_plan, plan_errors

Responder = Callable[[dict], dict]


@dataclass
class Answer:
    status: int
    body: Any  # a JSON value, or bytes sent verbatim
    headers: dict[str, str] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    delay: float = 0.0
    drip: float = 0.0
    check_contract: bool = True


@dataclass
class LoggedCall:
    """One request as the stand-in saw it, and what it answered."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON
    status: int = 0
    prompt: Prompt | None = None  # set when the request was valid
    plan: Any = None  # the answer the "model" gave (None for errors)
    fault: str | None = None  # the kind of the scripted fault that answered, if any
    input_tokens: int = 0
    output_tokens: int = 0
    response: Any = None  # the body sent (JSON value or bytes)


class ApiError(Exception):
    """Raised inside a stand-in to answer with the provider's error shape."""

    def __init__(self, status: int, message: str, kind: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.param = status, message, kind, param


CACHE_MINIMUM = 1024  # tokens: the shortest prefix the providers cache (OpenAI; Anthropic's larger models)


def estimate_tokens(text: str) -> int:
    """The stand-in's deterministic token count: one per four characters, at least one."""
    return max(1, (len(text) + 3) // 4)


class StandIn:
    """Base class. Use as a context manager (or `start()`/`stop()`); `url` is the base URL a client is given."""

    provider: ClassVar[str] = ""

    def __init__(self, *, responder: Responder | None = None):
        self._lock = threading.RLock()
        self._script: collections.deque = collections.deque()
        self._stopping = threading.Event()
        self._ids = 0
        self.responder = responder
        self._cached: set[str] = set()  # the prompt prefixes this "provider" holds in its prompt cache
        self.calls: list[LoggedCall] = []
        self.violations: list[str] = []
        self._httpd: QuietServer | None = None
        self.port = 0

    # ---- lifecycle ---------------------------------------------------------------------------------------------

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The base URL to configure a client with (overridden per provider)."""
        return self.origin

    def start(self):
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = QuietServer(("127.0.0.1", 0), handler)
        self.port = self._httpd.server_address[1]
        self._stopping.clear()
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), name=f"fakellm-{self.provider}",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a slow fault
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- the provider's prompt cache ---------------------------------------------------------------------------

    def prompt_cache(self, prefix: str, *, minimum: int = CACHE_MINIMUM) -> tuple[int, int]:
        """(tokens read from the cache, tokens written to it) for a cacheable prompt prefix, as the providers
        document it: written the first time it is seen, read every later time; a prefix under `minimum` tokens is
        not cached."""
        tokens = estimate_tokens(prefix)
        if tokens < minimum:
            return 0, 0
        key = hashlib.sha256(prefix.encode("utf-8")).hexdigest()
        with self._lock:
            seen = key in self._cached
            self._cached.add(key)
        return (tokens, 0) if seen else (0, tokens)

    # ---- scripting and inspection ------------------------------------------------------------------------------

    def script(self, *replies: dict | Fault) -> None:
        """Queue what the next valid calls get, in order: a plan dict (answered normally) or a Fault. When the
        queue is empty, the `responder` answers (default: a minimal instance of the requested schema)."""
        with self._lock:
            for reply in replies:
                if not isinstance(reply, (dict, Fault)):
                    raise TypeError(f"script a plan dict or a Fault, not {type(reply).__name__}")
                self._script.append(reply)

    def clear_script(self) -> None:
        with self._lock:
            self._script.clear()

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        return len(self._script)

    @property
    def answered(self) -> list[LoggedCall]:
        """Calls that reached the model (valid requests), in order."""
        return [call for call in self.calls if call.prompt is not None]

    @property
    def usage(self) -> tuple[int, int]:
        """Total (input, output) tokens reported to clients."""
        with self._lock:
            return (sum(c.input_tokens for c in self.calls), sum(c.output_tokens for c in self.calls))

    def take_violations(self) -> list[str]:
        """Return and clear the recorded contract violations (for tests that provoke them on purpose)."""
        with self._lock:
            found, self.violations = self.violations, []
            return found

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    # ---- what each provider defines ----------------------------------------------------------------------------

    def route(self, method: str, path: str) -> dict[str, str] | None:
        raise NotImplementedError

    def authenticate(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> None:
        raise NotImplementedError

    def request_problems(self, body: Any, params: dict[str, str], headers: dict[str, str]) -> list[str]:
        raise NotImplementedError

    def prompt_of(self, body: dict) -> Prompt:
        raise NotImplementedError

    def schema_guaranteed(self, prompt: Prompt) -> bool:
        """Whether the real API guarantees an answer that matches the requested schema."""
        return False

    def render_plan(self, prompt: Prompt, body: dict, plan: dict, params: dict[str, str]) -> Answer:
        raise NotImplementedError

    def render_fault(self, prompt: Prompt, body: dict, fault: Fault, params: dict[str, str]) -> Answer:
        raise NotImplementedError

    def render_error(self, err: ApiError) -> Answer:
        raise NotImplementedError

    def response_problems(self, answer: Answer) -> list[str]:
        raise NotImplementedError

    # ---- request handling --------------------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> Answer:
        path = raw_path.split("?", 1)[0]
        body: Any
        try:
            body = json.loads(raw_body) if raw_body else None
            body_ok = raw_body != b""
        except ValueError:
            body, body_ok = raw_body.decode("utf-8", "replace"), False
        call = LoggedCall(method, path, dict(headers), body)
        with self._lock:
            self.calls.append(call)
        try:
            params = self.route(method, path)
            if params is None:
                raise ApiError(404, f"Invalid URL ({method} {path})", "not_found")
            self.authenticate(method, raw_path, headers, raw_body)
            if not body_ok or not isinstance(body, dict):
                raise ApiError(400, "We could not parse the JSON body of your request: expected a JSON object.",
                               "invalid_json")
            problems = self.request_problems(body, params, headers)
            if problems:
                raise ApiError(400, "Invalid request: " + "; ".join(problems[:3]), "invalid_request")
            call.prompt = prompt = self.prompt_of(body)
            answer = self._answer(call, prompt, body, params)
        except ApiError as err:
            answer = self.render_error(err)
        except Exception as exc:  # a responder or a rendering bug: fail the test loudly, answer like a 500
            with self._lock:
                self.violations.append(f"{self.provider}: the stand-in failed on {method} {path}: {exc!r}")
            answer = self.render_error(ApiError(500, "The stand-in failed; see its violations."))
        call.status, call.response = answer.status, answer.body
        call.input_tokens, call.output_tokens = answer.input_tokens, answer.output_tokens
        if answer.check_contract:
            problems = self.response_problems(answer)
            if problems:
                with self._lock:
                    self.violations.append(f"{self.provider} {method} {path} -> {answer.status}: "
                                           + "; ".join(problems[:3]))
        return answer

    def _answer(self, call: LoggedCall, prompt: Prompt, body: dict, params: dict[str, str]) -> Answer:
        with self._lock:
            item = self._script.popleft() if self._script else None
        if isinstance(item, Fault) and item.kind != "slow":
            call.fault = item.kind
            answer = self.render_fault(prompt, body, item, params)
            answer.delay = max(answer.delay, item.delay)
            answer.drip = item.drip
            answer.check_contract = answer.check_contract and not item.off_contract
            return answer
        delay = 0.0
        drip = 0.0
        if isinstance(item, Fault):  # slow: a good answer, late (or dripping)
            call.fault, delay, drip, item = item.kind, item.delay, item.drip, item.plan
        plan = item if item is not None else self.planned(prompt, body)
        if not isinstance(plan, dict):
            raise TypeError(f"a responder must return a plan dict, got {type(plan).__name__}")
        call.plan = plan
        if self.schema_guaranteed(prompt):
            wrong = plan_errors(prompt.schema, plan)
            if wrong:
                with self._lock:
                    self.violations.append(
                        f"{self.provider}: the scripted plan does not match the requested schema, which this API "
                        f"guarantees ({'; '.join(wrong[:2])}); script Fault.schema_invalid(plan) to send one on "
                        "purpose")
        answer = self.render_plan(prompt, body, plan, params)
        answer.delay, answer.drip = delay, drip
        return answer

    def planned(self, prompt: Prompt, body: dict) -> dict:
        """What the responder (default: `default_plan`) answers to this request."""
        return self.responder(body) if self.responder is not None else default_plan(prompt)

    def sleep(self, seconds: float) -> None:
        """Wait `seconds`, or less when the stand-in stops."""
        self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    app: StandIn
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid Nagle + delayed ACK

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer = self.app.handle(self.command, self.path, headers, raw_body)
        if answer.delay:
            self.app.sleep(answer.delay)
        payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not answer.drip:
            self.wfile.write(payload)
            return
        for i in range(len(payload)):  # one byte at a time: every read of the client sees data
            if self.app._stopping.is_set():
                return
            try:
                self.wfile.write(payload[i:i + 1])
                self.wfile.flush()
            except OSError:
                return  # the client gave up: what a total deadline is for
            self.app.sleep(answer.drip)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format, *args) -> None:  # noqa: A002 - keep test output quiet
        pass
