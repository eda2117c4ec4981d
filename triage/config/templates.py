"""Comment templates: Jinja2 files rendered in a sandbox, each comment tagged with a hidden marker.

The marker (`<!-- ptd-triage:NAME -->`) is appended here, outside the template, so a template
author cannot forget it, and it is how the guardrails recognise a comment we already posted.
Issue-supplied values are never interpolated raw: the only value a template receives from the
issue is the author's login, and only after it has been checked against GitHub's login syntax.

Bounded and checked: a comment (marker included) is at most MAX_COMMENT characters, GitHub's limit for
a comment body; rendering stops as soon as a template's output passes it, and the sandbox refuses
`*` and `**` whose result would be huge (`'x' * 10**10` would otherwise be built before any check).
At load, every template is rendered for a set of hostile authors (HOSTILE_AUTHORS), so a template
that fails, or grows too large, for some author is refused then, with its file name; a failure at
triage is still a TemplatesError naming the template, which the caller reports for that issue.

May import: the standard library and jinja2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import StrictUndefined, Template, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

SUFFIX = ".md.j2"
MAX_COMMENT = 65_536  # GitHub's limit for a comment body, in characters
# Logins a template is rendered for at load: none, the longest valid one, and what issue authors can
# send (markup, unicode, a lone surrogate, template syntax, mentions, overlong), which safe_login drops.
HOSTILE_AUTHORS = (
    "",
    None,
    "a" * 39,
    "a-1",
    "<img src=x onerror=alert(1)>",
    "ünïcödé\u202e",
    "x\ud800",
    "{{ 7 * 7 }}",
    "{% raw %}",
    "@everyone",
    "x" * 10_000,
)


class TemplatesError(ValueError):
    """A template is missing or does not render; one line naming the file."""


def comment_marker(name: str) -> str:
    return f"<!-- ptd-triage:{name} -->"


def has_marker(body: str | None, name: str) -> bool:
    return bool(body) and comment_marker(name) in body  # type: ignore[operator]


def safe_login(login: str | None) -> str | None:
    """The login if it has GitHub's login syntax (ASCII letters and digits, single hyphens inside, at
    most 39 characters), else None. Plain string tests: the login is issue-supplied text."""
    if not isinstance(login, str) or not 1 <= len(login) <= 39 or not login.isascii():
        return None
    if login[0] == "-" or login[-1] == "-" or "--" in login:
        return None
    return login if login.replace("-", "").isalnum() else None


class _Sandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus a bound on `*` and `**`, whose results can be built before any
    size check sees them."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context, operator, left, right):
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError("exponent too large")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(times, int) and len(seq) * times > MAX_COMMENT:
                    raise SecurityError(f"repetition longer than {MAX_COMMENT} items")
        return super().call_binop(context, operator, left, right)


@dataclass(frozen=True)
class Templates:
    directory: str
    sources: dict[str, str]
    compiled: dict[str, Template] = field(default_factory=dict, compare=False, repr=False)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.sources)

    def render(self, name: str, *, author: str | None = "") -> str:
        """The comment body, marker appended; TemplatesError (naming the file) if it fails or is too long."""
        if name not in self.compiled:
            raise TemplatesError(f"{self.directory}: no template named '{name}'")
        where = f"{self.directory}/{name}{SUFFIX}"
        marker = comment_marker(name)
        room = MAX_COMMENT - len(marker) - 3  # the "\n\n" before the marker and "\n" after it
        parts: list[str] = []
        size = 0
        try:
            # Streamed, so that an oversized template stops well past the limit instead of being built whole.
            for chunk in self.compiled[name].generate(author=safe_login(author)):
                size += len(chunk)
                if size > 2 * MAX_COMMENT:
                    break
                parts.append(chunk)
        except Exception as exc:  # any failure of a configured template is that template's error
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise TemplatesError(f"{where}: {detail}") from None
        text = "".join(parts).rstrip()
        if size > 2 * MAX_COMMENT or len(text) > room:
            raise TemplatesError(
                f"{where}: renders longer than {MAX_COMMENT:,} characters, GitHub's comment limit (marker included)"
            )
        return text + "\n\n" + marker + "\n"


REQUIRED = ("not_distributed", "needs_distributed_reproduction")


def load_templates(directory: str | Path, required: tuple[str, ...] = REQUIRED) -> Templates:
    """`required`: the template names the configuration's steps post (the rubric's `comments:`)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise TemplatesError(f"{directory}: templates directory not found")
    sources = {p.name[: -len(SUFFIX)]: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*" + SUFFIX))}
    return build_templates(str(directory), sources, required)


def build_templates(directory: str | Path, sources: dict[str, str], required: tuple[str, ...] = REQUIRED) -> Templates:
    """Templates from their sources (a directory's files, or a repository config's overrides on top of them)."""
    missing = [n for n in required if n not in sources]
    if missing:
        raise TemplatesError(f"{directory}: missing template {missing[0]}{SUFFIX}")
    env = _Sandbox(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True)
    compiled = {}
    for name, source in sources.items():
        try:
            compiled[name] = env.from_string(source)
        except TemplateError as exc:
            raise TemplatesError(f"{directory}/{name}{SUFFIX}: {exc}") from None
    templates = Templates(str(directory), sources, compiled)
    for name in sources:  # fail at load, not half-way through a sweep
        for author in HOSTILE_AUTHORS:
            templates.render(name, author=author)
    return templates
