"""Comment templates: Jinja2 files rendered in a sandbox, each comment tagged with a hidden marker.

The marker (`<!-- ptd-triage:NAME -->`) is appended here, outside the template, so a template
author cannot forget it, and it is how the guardrails recognise a comment we already posted.
Issue-supplied values are never interpolated raw: the only value a template receives from the
issue is the author's login, and only after it has been checked against GitHub's login syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import StrictUndefined, Template, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

SUFFIX = ".md.j2"
# GitHub logins: alphanumerics and single hyphens, at most 39 characters.
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")


class TemplatesError(ValueError):
    """A template is missing or does not render; one line naming the file."""


def comment_marker(name: str) -> str:
    return f"<!-- ptd-triage:{name} -->"


def has_marker(body: str | None, name: str) -> bool:
    return bool(body) and comment_marker(name) in body  # type: ignore[operator]


def safe_login(login: str) -> str | None:
    return login if _LOGIN.match(login or "") else None


@dataclass(frozen=True)
class Templates:
    directory: str
    sources: dict[str, str]
    compiled: dict[str, Template] = field(default_factory=dict, compare=False, repr=False)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.sources)

    def render(self, name: str, *, author: str = "") -> str:
        if name not in self.compiled:
            raise TemplatesError(f"{self.directory}: no template named '{name}'")
        try:
            text = self.compiled[name].render(author=safe_login(author))
        except TemplateError as exc:
            raise TemplatesError(f"{self.directory}/{name}{SUFFIX}: {exc}") from None
        return text.rstrip() + "\n\n" + comment_marker(name) + "\n"


REQUIRED = ("not_distributed", "needs_distributed_reproduction")


def load_templates(directory: str | Path) -> Templates:
    directory = Path(directory)
    if not directory.is_dir():
        raise TemplatesError(f"{directory}: templates directory not found")
    sources = {p.name[: -len(SUFFIX)]: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*" + SUFFIX))}
    missing = [n for n in REQUIRED if n not in sources]
    if missing:
        raise TemplatesError(f"{directory}: missing template {missing[0]}{SUFFIX}")
    env = ImmutableSandboxedEnvironment(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True)
    compiled = {}
    for name, source in sources.items():
        try:
            compiled[name] = env.from_string(source)
        except TemplateError as exc:
            raise TemplatesError(f"{directory}/{name}{SUFFIX}: {exc}") from None
    templates = Templates(str(directory), sources, compiled)
    for name in sources:  # fail at load, not half-way through a sweep
        templates.render(name, author="octocat")
    return templates
