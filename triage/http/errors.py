"""Typed HTTP errors, so callers decide with `isinstance` instead of status numbers.

Imports: the standard library and `triage.http.decisions` only.

Every error is one line and is scrubbed when it is built: the secrets the caller names (`secrets=`) and anything
shaped like a GitHub token or a bearer credential become `***`, so an error can be printed, logged or shown in a
job summary without leaking the token, even when a proxy echoed the request back into its error page.
"""
from __future__ import annotations

import copy
import re
from collections.abc import Iterable

from triage.http.decisions import ErrorKind

# Secret-shaped strings, scrubbed from every error message of every client (GitHub's and the model providers').
_TOKEN_SHAPES = re.compile(
    r"(?:\bgh[pousr]_[A-Za-z0-9_]{8,}"  # GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh
    r"|\bgithub_pat_[A-Za-z0-9_]{8,}"  # fine-grained personal access tokens
    r"|sk-[A-Za-z0-9_\-*]{6,}"  # OpenAI / Anthropic / OpenRouter style keys, also partly masked ones
    r"|(?:AKIA|ASIA)[A-Z0-9]{12,}"  # AWS access key ids
    r"|(?i:\b(?:bearer|token)\s+)[A-Za-z0-9._~+/=\-]{8,})"  # an Authorization header's value
)
MAX_MESSAGE = 500

# How many consecutive characters of a secret count as the secret: a model can be talked into printing its key in
# slices, and 8 characters of a random key are unguessable enough to matter yet vanishingly unlikely to occur by
# chance in ordinary text. The Action's scrubber masks such runs; the model clients reject a reply that holds one.
SECRET_RUN = 8


def secret_runs(secret: str, run: int = SECRET_RUN) -> set[str]:
    """Every `run`-character slice of `secret` (none when it is shorter)."""
    return {secret[i:i + run] for i in range(len(secret) - run + 1)}


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` on one line, with every secret (of 4+ characters) and every token-shaped string replaced by `***`,
    clipped to MAX_MESSAGE characters."""
    text = " ".join(str(text).split())
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "***")
    text = _TOKEN_SHAPES.sub("***", text)
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


class HTTPError(Exception):
    """A failed HTTP call. `status` is None when no response arrived (connection error, timeout) or when the call
    was never sent (a budget ran out). `service` names the API in the message ("GitHub API")."""

    def __init__(self, status: int | None, method: str, path: str, message: str, *, service: str = "HTTP",
                 secrets: Iterable[str] = ()):
        secrets = tuple(secrets)
        self.status = status
        self.method = scrub(method, secrets)[:10]
        self.path = scrub(path, secrets)
        self.message = scrub(message, secrets)
        self.service = scrub(service, secrets)[:40]
        super().__init__(str(self))

    def __str__(self) -> str:
        status = self.status if self.status is not None else "no response"
        return f"{self.service} {self.method} {self.path} failed ({status}): {self.message}"

    def __reduce__(self):  # copy and pickle keep the class and every field (the constructor takes keywords)
        return _rebuild, (type(self), dict(self.__dict__))

    def with_detail(self, detail: str) -> HTTPError:
        """The same error (same class and fields) with `detail` appended to its message, e.g. "gave up after 3
        attempts"; the retry loop uses this to say why it stopped without losing the error's type."""
        clone = copy.copy(self)
        clone.message = scrub(f"{self.message}; {detail}")
        Exception.__init__(clone, str(clone))
        return clone


def _rebuild(cls: type[HTTPError], state: dict) -> HTTPError:
    error = Exception.__new__(cls)
    error.__dict__.update(state)
    Exception.__init__(error, str(error))
    return error


class RateLimited(HTTPError):
    """The server asked us to wait (`wait` seconds, None when unknown) longer than we may, or kept refusing."""

    def __init__(self, status: int | None, method: str, path: str, message: str, *, wait: float | None = None,
                 **kwargs):
        self.wait = wait
        super().__init__(status, method, path, message, **kwargs)


class AuthError(HTTPError):
    """401, or a 403 that is not a rate limit: the token is wrong or lacks a permission. Repeats for every call."""


class NotFound(HTTPError):
    """404: the thing does not exist, or the token may not see it."""


class Transient(HTTPError):
    """5xx, connection error or timeout, after the retries ran out: the next run may succeed."""


class BadRequest(HTTPError):
    """Any other 4xx (or a request we refused to send): the request is wrong; retrying cannot help."""


class BudgetExhausted(HTTPError):
    """Our own limit ran out before the call could finish: the deadline, the rate-limit reserve, or the pacing of
    writes. Nothing more was sent; the work is left for the next run."""

    def __str__(self) -> str:  # no request went out, so nothing "failed": say it was not sent, and why
        return f"{self.service} {self.method} {self.path} not sent: {self.message}"


_BY_KIND: dict[ErrorKind, type[HTTPError]] = {
    ErrorKind.RATE_LIMITED: RateLimited,
    ErrorKind.AUTH: AuthError,
    ErrorKind.NOT_FOUND: NotFound,
    ErrorKind.TRANSIENT: Transient,
    ErrorKind.BAD_REQUEST: BadRequest,
}


def error_class(kind: ErrorKind) -> type[HTTPError]:
    """The error type for a failed response's kind (see `decisions.classify`)."""
    if kind is ErrorKind.OK:
        raise ValueError("a successful response has no error class")
    return _BY_KIND[kind]


def is_fatal_for_run(exc: BaseException) -> bool:
    """True when the same failure will repeat for every further call of this run (credentials or permissions,
    a rate limit we may not wait out, our own budget spent): a sweep should stop and report what is left."""
    return isinstance(exc, (AuthError, RateLimited, BudgetExhausted))


__all__ = ["AuthError", "BadRequest", "BudgetExhausted", "HTTPError", "NotFound", "RateLimited", "Transient",
           "error_class", "is_fatal_for_run", "scrub"]
