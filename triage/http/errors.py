"""Typed HTTP errors, so callers decide with `isinstance` instead of status numbers.

Imports: the standard library and `triage.http.decisions` only.

Every error is one line and is scrubbed when it is built: the secrets the caller names (`secrets=`) and anything
shaped like a GitHub token or a bearer credential become `***`, so an error can be printed, logged or shown in a
job summary without leaking the token, even when a proxy echoed the request back into its error page. A secret is
also found in pieces (any SECRET_RUN characters of it) and in the forms a server or a model may echo it in
(`secret_forms`: reversed, URL-encoded, base64).
"""
from __future__ import annotations

import base64
import copy
import functools
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

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


_URL_SAFE = str.maketrans("+/", "-_")


def secret_forms(secret: str) -> frozenset[str]:
    """`secret` and the common transforms it can be echoed in: reversed; URL-encoded (as `quote` and `quote_plus`
    write it, and every byte as %XX); base64, standard and URL-safe, at each of the three alignments it takes
    inside a longer encoded text (a key inside an encoded "user:key": only the characters that depend on the
    secret's bytes alone, so it is found wherever it starts)."""
    raw = secret.encode("utf-8")
    forms = {secret, secret[::-1], quote(secret, safe=""), quote_plus(secret, safe=""),
             "".join(f"%{b:02X}" for b in raw), "".join(f"%{b:02x}" for b in raw)}
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode("ascii")
        core = encoded[-(-8 * pad // 6): 8 * (pad + len(raw)) // 6]
        forms |= {core, core.translate(_URL_SAFE)}
    return frozenset(f for f in forms if f)


@functools.lru_cache(maxsize=32)
def secret_grams(secrets: tuple[str, ...], run: int = SECRET_RUN) -> frozenset[str]:
    """Every `run`-character slice of every form of `secrets` (`secret_forms`)."""
    return frozenset(g for s in secrets for form in secret_forms(s) for g in secret_runs(form, run))


def mask_runs(text: str, grams: frozenset[str] | set[str], run: int = SECRET_RUN, mask: str = "***",
              first: frozenset[str] | set[str] | None = None) -> str:
    """`text` with every stretch covered by `run`-character windows found in `grams` replaced by one `mask`. One
    pass over the text; a set lookup only where a window could start (`first`: the grams' first characters)."""
    if not grams or len(text) < run:
        return text
    first = first if first is not None else {g[0] for g in grams}
    covered_until, spans = -1, []
    for i in range(len(text) - run + 1):
        if text[i] in first and text[i:i + run] in grams:
            if spans and i <= covered_until:
                spans[-1][1] = i + run
            else:
                spans.append([i, i + run])
            covered_until = i + run
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], mask]
        last = end
    out.append(text[last:])
    return "".join(out)


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` on one line, with every secret (of 4+ characters), every SECRET_RUN characters of one in any of its
    forms (`secret_forms`), and every token-shaped string replaced by `***`, clipped to MAX_MESSAGE characters."""
    text = " ".join(str(text).split())
    secrets = {s for s in secrets if s and len(s) >= 4}
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    text = mask_runs(text, secret_grams(tuple(sorted(s for s in secrets if len(s) >= SECRET_RUN))))
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


class ReadOnly(HTTPError):
    """A write refused by a read-only client (a dry run, plan mode, shadow mode): nothing was sent. A second line
    of defence: in those modes no executor writes at all, so this is a bug caught before it reached GitHub."""

    def __str__(self) -> str:
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
    return isinstance(exc, (AuthError, RateLimited, BudgetExhausted, ReadOnly))


__all__ = ["AuthError", "BadRequest", "BudgetExhausted", "HTTPError", "NotFound", "RateLimited", "ReadOnly",
           "Transient",
           "error_class", "is_fatal_for_run", "mask_runs", "scrub", "secret_forms", "secret_grams", "secret_runs"]
