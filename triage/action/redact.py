"""The one scrubber at the edge where the Action writes: every log line, annotation, output, step-summary line and
the plans file goes through `Redactor.scrub` (the `Reporter` and the plan mode call it), so no secret of the run
leaves it, whatever carried it there (a model that echoes its key in a reason, an error page, an issue).

What counts as a secret: the model's key (the `llm-api-key` input, OPENAI_API_KEY, ANTHROPIC_API_KEY), AWS's
secret key and session token, and the GitHub token (the `github-token` input, GITHUB_TOKEN, GH_TOKEN). What is
removed: any run of at least `MIN_RUN` (8) consecutive characters of one of them, or of one of its common
transforms (`triage.http.errors.secret_forms`: reversed, URL-encoded, base64 at any alignment), also in the forms
our writers escape text into (JSON strings, markdown, workflow-command data), so a key cut in pieces, quoted in
part, reversed or encoded does not get through either; plus anything shaped like a token (`triage.http.errors`'
shapes). A secret shorter than `MIN_RUN` is removed where it occurs whole (but not under 4 characters: that would
blank ordinary words).

Why runs of 8: `triage.http.errors.SECRET_RUN`, the one length the model clients also use to reject a reply that
echoes its key.

Imports: the standard library and `triage.http.errors` (the token shapes, the run length) only: the Action's cold
path uses it.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from triage.http.errors import SECRET_RUN, mask_runs, secret_forms, secret_runs

MIN_RUN = SECRET_RUN
MASK = "***"
SECRET_VARIABLES = ("INPUT_LLM_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY",
                    "AWS_SESSION_TOKEN", "INPUT_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")


def _forms(secret: str) -> set[str]:
    """The secret as our writers may have escaped it: raw, inside a JSON string, markdown-escaped, as a
    workflow command's data."""
    return {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
            _MD_SPECIAL.sub(r"\\\1", secret).replace("&", "&amp;"),
            secret.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")}


class Redactor:
    """`scrub(text)`: `text` with every secret run replaced by `***` (lines and layout otherwise kept)."""

    def __init__(self, secrets: Iterable[str] = ()):
        from triage.http.errors import _TOKEN_SHAPES

        self._shapes = _TOKEN_SHAPES
        self._grams: set[str] = set()
        self._whole: set[str] = set()
        for secret in {s.strip() for s in secrets if s and s.strip()}:
            for transform in secret_forms(secret) if len(secret) >= MIN_RUN else (secret,):
                for form in _forms(transform):
                    if len(form) >= MIN_RUN:
                        self._grams.update(secret_runs(form, MIN_RUN))
                    elif len(form) >= 4:
                        self._whole.add(form)
        self._first = {g[0] for g in self._grams}

    def __bool__(self) -> bool:
        return bool(self._grams or self._whole)

    def __repr__(self) -> str:  # never show what it hides
        return f"Redactor({len(self._grams)} runs, {len(self._whole)} short secrets)"

    def scrub(self, text: str) -> str:
        text = str(text)
        if self._grams and len(text) >= MIN_RUN:
            text = mask_runs(text, self._grams, MIN_RUN, MASK, self._first)
        for secret in sorted(self._whole, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return self._shapes.sub(MASK, text)


def secrets_from_environ(environ: Mapping[str, str]) -> list[str]:
    return [environ.get(name, "") for name in SECRET_VARIABLES if environ.get(name, "").strip()]


def redactor_from_environ(environ: Mapping[str, str]) -> Redactor:
    return Redactor(secrets_from_environ(environ))


__all__ = ["MASK", "MIN_RUN", "Redactor", "SECRET_VARIABLES", "redactor_from_environ", "secrets_from_environ"]
