"""A model's reply text is parsed in time linear in its size (issue 18: "nothing a model can stall"). The reply's
fence (```json ... ```) was stripped with a regex that has `\\s*` on both sides of `(.*)`: on a reply of many
newlines it backtracked cubically (10,000 newlines did not finish in 10 minutes), and parsing runs after the
call's deadline, where nothing can stop it. Now string operations; the old pattern is kept here as the oracle of
what a fence is, on inputs small enough for it.
"""
from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triage.llm.common import MAX_REPLY_BYTES, _unfenced, plan_from_text
from triage.llm.errors import LLMError, LLMInvalidReply

OLD_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*)\n\s*```$", re.S)


def _old(text: str) -> str:
    found = OLD_FENCE.match(text)
    return found.group(1).strip() if found else text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="`\n \tjson{}x-", max_size=24))
def test_a_fence_is_what_the_old_pattern_called_a_fence(text):
    text = text.strip()
    assert _unfenced(text) == _old(text)


@pytest.mark.parametrize("text", [
    "```json\n" + "\n" * (MAX_REPLY_BYTES - 20) + "x",
    "```json\n" + "\n" * (MAX_REPLY_BYTES - 20) + "```",
    "```" + " " * (MAX_REPLY_BYTES // 2) + "\n" + "\n" * (MAX_REPLY_BYTES // 3) + "```",
    "```json\n" + "\n \t" * (MAX_REPLY_BYTES // 4) + "{}\n```",
], ids=["newlines-unclosed", "newlines-closed", "spaces-then-newlines", "whitespace-then-object"])
def test_a_hostile_fence_of_the_largest_allowed_size_is_parsed_quickly(text):
    started = time.perf_counter()
    try:
        plan_from_text(text, provider="anthropic")
    except LLMError as exc:
        assert isinstance(exc, LLMInvalidReply)
    # A hang guard, not a timing: the linear parse takes about 0.15 s here (well under 1 s on a loaded 2-core
    # machine), the backtracking this replaced took hours on such a reply. Speed is bench/'s business.
    assert time.perf_counter() - started < 30.0


def test_a_fenced_answer_still_parses():
    assert plan_from_text('```json\n{"a": 1}\n```', provider="p") == {"a": 1}
    assert plan_from_text('  ```\n{"a": 1}\n  ```  ', provider="p") == {"a": 1}
    with pytest.raises(LLMInvalidReply):
        plan_from_text('```json {"a": 1}```', provider="p")


# ---- the size limit where no Content-Length tells it: a chunked reply, a body delimited only by the close ------

class _Hostile:
    """A loopback server that answers one POST with `total` bytes of '[', chunked or delimited only by closing the
    connection (neither says the size up front); counts what it managed to send."""

    def __init__(self, total: int, *, mode: str):
        import socket
        import threading

        self.total, self.mode, self.sent = total, mode, 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), b"0"))
            while len(body) < length:
                body += conn.recv(65536)
            chunk = b"[" * 65536
            try:
                if self.mode == "chunked":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                    while self.sent < self.total:
                        conn.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                        self.sent += len(chunk)
                    conn.sendall(b"0\r\n\r\n")
                else:  # no Content-Length, no chunking: the body ends when the connection closes
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
                    while self.sent < self.total:
                        conn.sendall(chunk)
                        self.sent += len(chunk)
            except OSError:
                pass  # the client stopped reading and closed: what the limit is for

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("mode", ["chunked", "unframed"])
def test_a_50_mb_reply_without_a_content_length_is_cut_at_the_limit(mode):
    """The client reads at most the limit (4 MB) of a 50 MB body that does not say its size, then gives up:
    LLMOversized, not retried, not parsed, and the server could not push the rest."""
    from triage.llm.client import LLMClient, LLMConfig
    from triage.llm.errors import LLMOversized

    server = _Hostile(50 * 1024 * 1024, mode=mode)
    try:
        client = LLMClient(LLMConfig(provider="openai", model="m", api_key="k", base_url=server.url, timeout=120,
                                     max_retries=2), sleep=lambda s: None)
        started = time.monotonic()
        with pytest.raises(LLMOversized, match="larger than"):
            client.complete("system", "user", {"type": "object", "properties": {}}, "plan")
        # A hang guard, not a timing (about 0.05 s here): the client stopped at the limit instead of reading on
        # until the server gave up or the 120 s read timeout fired.
        assert time.monotonic() - started < 60
        assert client.budget.calls == 1  # never retried
        assert server.sent < 50 * 1024 * 1024 // 2, f"the client let {server.sent} bytes arrive"
    finally:
        server.close()
