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

Work is bounded too, at load and at triage: every `for` loop's iterable is wrapped (in the parsed template,
before compiling) in a counter, and every call the template makes is counted, against one budget per render of
MAX_STEPS steps and RENDER_SECONDS seconds (nested `range(10000)` loops that output nothing would otherwise run
for hours). A template's text is at most MAX_SOURCE characters, and may carry no marker but its own: another
template's marker in it would make the bot believe that template was posted, and silence it.
Every error names the file and line the template came from (a repository config's templates: that file's line).

May import: the standard library and jinja2.
"""

from __future__ import annotations

import re
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from jinja2 import StrictUndefined, Template, TemplateError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

SUFFIX = ".md.j2"
MAX_COMMENT = 65_536  # GitHub's limit for a comment body, in characters
MAX_SOURCE = 65_536  # a template's own text: no comment needs more
MAX_STEPS = 100_000  # loop iterations plus calls, per render (a comment template needs a few dozen)
RENDER_SECONDS = 1.0  # per render; the bundled templates take well under a millisecond
_MARKER_NAME = re.compile(r"ptd-triage:([A-Za-z0-9_.-]*)")
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


class _Budget:
    """One render's allowance of steps (loop iterations and calls) and time."""

    def __init__(self, steps: int = MAX_STEPS, seconds: float = RENDER_SECONDS):
        self.left = steps
        self.steps = steps
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def take(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise SecurityError(f"more than {self.steps:,} loop steps and calls (a runaway loop?)")
        if time.monotonic() > self.deadline:
            raise SecurityError(f"took longer than {self.seconds:g} s to render (a runaway loop?)")


# The budget of the render in progress (set by `Templates.render`; outside it, each loop gets a fresh one).
_BUDGET: ContextVar[_Budget | None] = ContextVar("ptd_template_budget", default=None)


def _budget() -> _Budget:
    return _BUDGET.get() or _Budget()


class _Sandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, plus a bound on `*` and `**`, whose results can be built before any
    size check sees them, and a bound on work: each `for` loop's iterable passes through `bounded_iter`, and
    each call takes a step."""

    intercepted_binops = frozenset({"*", "**"})

    def _parse(self, source, name, filename):
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):  # the parsed tree, before compiling: no template can avoid it
            loop.iter = nodes.Call(nodes.EnvironmentAttribute("bounded_iter"), [loop.iter], [], None, None,
                                   lineno=loop.lineno)
        return tree

    def bounded_iter(self, iterable: Iterable[Any]) -> Iterator[Any]:
        budget = _budget()
        for item in iterable:
            budget.take()
            yield item

    def call(self, __context, __obj, *args, **kwargs):
        _budget().take()
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context, operator, left, right):
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError("exponent too large")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(times, int) and len(seq) * times > MAX_COMMENT:
                    raise SecurityError(f"repetition longer than {MAX_COMMENT} items")
        return super().call_binop(context, operator, left, right)


def bounded_environment(**options: Any) -> _Sandbox:
    """The immutable sandbox with the bounds above, for any other template a queue carries (the model's prompt)."""
    return _Sandbox(undefined=StrictUndefined, **options)


def render_bounded(template: Template, **context: Any) -> str:
    """Render a template of `bounded_environment` whole, within one render's budget of steps and time."""
    token = _BUDGET.set(_Budget())
    try:
        return template.render(**context)
    finally:
        _BUDGET.reset(token)


@dataclass(frozen=True)
class Templates:
    directory: str
    sources: dict[str, str]
    compiled: dict[str, Template] = field(default_factory=dict, compare=False, repr=False)
    # name -> (file, line) its text came from, when not `directory/NAME.md.j2` (a repository config's templates)
    files: dict[str, tuple[str, int | None]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.sources)

    def where(self, name: str, line: int | None = None) -> str:
        """`file:line` for a line of template `name` (the template's own first line when `line` is None)."""
        return where_of(self.directory, name, self.files.get(name), line)

    def render(self, name: str, *, author: str | None = "") -> str:
        """The comment body, marker appended; TemplatesError (naming the file) if it fails, is too long or too
        slow, or carries another template's marker."""
        if name not in self.compiled:
            raise TemplatesError(f"{self.directory}: no template named '{name}'")
        marker = comment_marker(name)
        room = MAX_COMMENT - len(marker) - 3  # the "\n\n" before the marker and "\n" after it
        parts: list[str] = []
        size = 0
        token = _BUDGET.set(_Budget())
        try:
            # Streamed, so that an oversized template stops well past the limit instead of being built whole.
            for chunk in self.compiled[name].generate(author=safe_login(author)):
                size += len(chunk)
                if size > 2 * MAX_COMMENT:
                    break
                parts.append(chunk)
        except Exception as exc:  # any failure of a configured template is that template's error
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise TemplatesError(f"{self.where(name, _template_line(exc))}: {detail}") from None
        finally:
            _BUDGET.reset(token)
        text = "".join(parts).rstrip()
        if size > 2 * MAX_COMMENT or len(text) > room:
            raise TemplatesError(f"{self.where(name)}: renders longer than {MAX_COMMENT:,} characters, GitHub's "
                                 "comment limit (marker included)")
        foreign = other_markers(text, name)
        if foreign:
            raise TemplatesError(f"{self.where(name)}: renders the marker of template '{foreign[0]}'; a template "
                                 "may carry only its own (it would silence the other)")
        return text + "\n\n" + marker + "\n"


def where_of(directory: str, name: str, origin: tuple[str, int | None] | None, line: int | None = None) -> str:
    """Where line `line` of template `name` is: in its own file, or (a repository config's template) in the
    config: the template's key is on line L, and a block scalar's text starts on the next."""
    if origin is None or str(origin[0]).endswith(SUFFIX):
        file = str(origin[0]) if origin else f"{directory}/{name}{SUFFIX}"
        return f"{file}:{line}" if line else file
    file, key_line = origin
    return f"{file}:{key_line + (line or 0)}" if key_line else str(file)


def other_markers(text: str, name: str) -> list[str]:
    """The names of other templates whose marker `text` carries."""
    return [found for found in _MARKER_NAME.findall(text) if found != name]


def _template_line(exc: BaseException) -> int | None:
    """The template line an error was raised at: Jinja rewrites the traceback so its frames carry it."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def syntax_problem(text: str) -> tuple[int | None, str] | None:
    """(line, message) when `text` does not parse as a template in the sandbox every template and the model's
    prompt use, else None. For `ptd-triage validate`: the prompt is only parsed when a model planner runs."""
    try:
        bounded_environment(autoescape=False, keep_trailing_newline=False).from_string(text)
    except TemplateError as exc:
        return getattr(exc, "lineno", None), getattr(exc, "message", None) or str(exc)
    return None


def build_templates(directory: str | Path, sources: dict[str, str], required: tuple[str, ...],
                    files: dict[str, tuple[str, int | None]] | None = None) -> Templates:
    """Templates from their sources (a directory's files, or a repository config's overrides on top of them);
    `files`: name -> (file, line) for a template whose text did not come from `directory/NAME.md.j2`."""
    missing = [n for n in required if n not in sources]
    if missing:
        raise TemplatesError(f"{directory}: missing template {missing[0]}{SUFFIX}")
    files = dict(files or {})
    env = _Sandbox(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True)
    compiled = {}
    for name, source in sources.items():
        if len(source) > MAX_SOURCE:
            raise TemplatesError(f"{where_of(str(directory), name, files.get(name))}: the template is longer than "
                                 f"{MAX_SOURCE:,} characters")
        foreign = other_markers(source, name)
        if foreign:
            line = source[: source.index("ptd-triage:" + foreign[0])].count("\n") + 1
            raise TemplatesError(f"{where_of(str(directory), name, files.get(name), line)}: carries the marker of "
                                 f"template '{foreign[0]}'; a template may carry only its own (it would silence the "
                                 "other)")
        try:
            compiled[name] = env.from_string(source)
        except TemplateError as exc:
            line = getattr(exc, "lineno", None)
            message = getattr(exc, "message", None) or str(exc)
            raise TemplatesError(f"{where_of(str(directory), name, files.get(name), line)}: {message}") from None
        except RecursionError:
            raise TemplatesError(f"{where_of(str(directory), name, files.get(name))}: nests too deeply") from None
    templates = Templates(str(directory), sources, compiled, files)
    for name in sources:  # fail at load, not half-way through a sweep
        for author in HOSTILE_AUTHORS:
            templates.render(name, author=author)
    return templates
