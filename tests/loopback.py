"""What every loopback stand-in (GitHub's, the model providers') shares: a threaded HTTP server that stays quiet
when a client hangs up early (a client that timed out on a slow or faulty answer is the point of those tests)."""
from __future__ import annotations

import sys
from http.server import ThreadingHTTPServer


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that timed out (on an injected delay or a slow fault) hangs up before we answer: not an error.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)
