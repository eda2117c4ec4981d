"""The model's prompt, rendered from the queue's `prompt.md.j2` (data a fork edits, beside its comment templates;
each bundled queue has its own): the system part (the procedure as configured, routes, allowlist, output contract)
and the user part (the issue's text, clipped, between fences that the issue cannot close).

The system part is the same, byte for byte, for every issue of a queue: it is rendered from the configuration
only (`procedure_context`: which routes stop, which steps run on every route, step 5's criteria, step 4's
definitions, the reasons an issue is not flagged), so every provider's prompt cache can hold it. Everything about
one issue, the fence included, is in the user part. The user part carries the issue only: no rubric finding,
so a recorded answer stays valid when the rubric changes and the model is not anchored on keyword matches.

Why a fence derived from a hash of the text: an issue that writes the closing fence to "end" the data and start
giving orders would have to contain the hash of itself. The fence is deterministic, so a recorded reply replays
against the same prompt. Any fence-like line in the text is neutralised anyway.

May import: the standard library, jinja2 (sandboxed), `triage.config`, `triage.core`,
`triage.planners.model.schema`.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from triage.config.bundle import Bundle
from triage.core.snapshot import IssueSnapshot
from triage.core.vocab import InQueue

PROMPT_FILE = "prompt.md.j2"
MAX_TITLE = 300
MAX_BODY = 12_000
MAX_COMMENT = 3_000
MAX_COMMENTS = 8
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_FENCE_LIKE = re.compile(r"(<<<|>>>)")


class PromptError(ValueError):
    """The prompt template is missing or does not render; one line naming the file."""


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    fence: str


def prompt_path(bundle: Bundle) -> Path:
    """The file the queue's prompt was read from, with the rest of its configuration (`bundle.prompt`). Never a
    path built here and looked for on the disk (a repository's queue has no file on the runner), and never another
    queue's prompt: a queue without its own is refused (PromptError, one line saying where it was looked for)."""
    from triage.config.bundle import missing_prompt

    if bundle.prompt is None:
        raise PromptError(missing_prompt(bundle))
    return Path(bundle.prompt_file)


def check(bundle: Bundle) -> None:
    """Before any issue is planned: the model's prompt template exists and parses (PromptError, one line)."""
    if bundle.prompt is not None:
        _template_text(bundle.prompt, bundle.prompt_file)
    else:
        _template(str(prompt_path(bundle)))


@lru_cache(maxsize=8)
def _template(path: str):
    from jinja2 import TemplateError

    from triage.config.templates import bounded_environment

    try:
        source = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"{path}: cannot read the prompt template ({exc.strerror or exc})") from None
    # The comment templates' sandbox and bounds (steps, time): a fork edits this file like its templates.
    env = bounded_environment(autoescape=False, keep_trailing_newline=False)
    try:
        return env.from_string(source)
    except TemplateError as exc:
        raise PromptError(f"{path}: the prompt template does not parse: {exc}") from None


@lru_cache(maxsize=8)
def _template_text(source: str, file: str):
    from jinja2 import TemplateError

    from triage.config.templates import bounded_environment

    try:
        return bounded_environment(autoescape=False, keep_trailing_newline=False).from_string(source)
    except TemplateError as exc:
        raise PromptError(f"{file}: the prompt template does not parse: {exc}") from None


def clip(text: str, limit: int) -> str:
    text = _CONTROL.sub("", text or "")
    text = _FENCE_LIKE.sub(lambda m: m.group(1)[0] * 2, text)  # "<<<" -> "<<": no fence can be written
    return text if len(text) <= limit else text[:limit] + f"\n[... clipped, {len(text) - limit} more characters]"


@dataclass(frozen=True)
class ShownComment:
    """A comment as the model is shown it: its text (clipped) and who wrote it, in the prompt's words (`by`: the
    reporter, a maintainer, another user). It renders as its text, so a template that prints `{{ c }}` still
    shows the comment; `{{ c.by }}` says who wrote it."""

    text: str
    by: str
    role: str = ""  # the speaker's role (`triage.text.speakers`), for the quote check; not shown

    def __str__(self) -> str:
        return self.text


_LOGIN = re.compile(r"[^A-Za-z0-9_.\[\]-]")


def issue_text(snapshot: IssueSnapshot, template_names=()) -> dict:
    """The issue as the model sees it: title, body and people's comments (bots' and our own left out), clipped,
    each comment with who wrote it; `author` is the reporter's login (what a login may hold, at most 39
    characters), so that a "login · comment · date" excerpt in the body can be told the reporter's or not."""
    from triage.core.authors import describe, people_comments

    comments = people_comments(snapshot, template_names)
    shown: list = [ShownComment(clip(c.body, MAX_COMMENT), describe(who), who.role)
                   for c, who in comments[:MAX_COMMENTS]]
    if len(comments) > MAX_COMMENTS:
        shown.append(ShownComment(f"[... {len(comments) - MAX_COMMENTS} more comments not shown]", "nobody"))
    return {"number": snapshot.number, "title": clip(" ".join(snapshot.title.split()), MAX_TITLE),
            "body": clip(snapshot.body, MAX_BODY), "comments": shown, "labels": list(snapshot.labels),
            "author": _LOGIN.sub("", snapshot.author)[:39]}


# The steps `routing.checks_on_every_route` may name, as the procedure numbers and the answer names them.
EVERY_ROUTE_STEPS = {"types": (4, "type"), "high_priority": (5, "high_priority")}


def procedure_context(bundle: Bundle) -> dict:
    """What the configured procedure does, from the data the rubric runs on: the prompt's system part is rendered
    from this alone (and the same for every issue). `route_rule` is the one sentence saying which steps run on the
    routes whose own team triages further, as `triage.core.procedure.run` runs them."""
    from triage.planners.model.schema import NO_FLAG_NONE, no_flag_reasons

    rubric, labels = bundle.rubric, bundle.labels
    routes = [{"name": name, "label": rule.label, "default": name == rubric.default_route,
               "stops": name in rubric.stop_after,
               "description": next((s.description for s in labels.specs if s.name == rule.label), "")}
              for name, rule in rubric.routes.items()]
    every = [EVERY_ROUTE_STEPS[k] for k in rubric.checks_on_every_route if k in EVERY_ROUTE_STEPS]
    high = getattr(rubric, "high_priority", None)
    return {
        "queue_label": labels.queue_label, "routes": routes, "stop_after": list(rubric.stop_after),
        "default_route": rubric.default_route,
        "every_route": [name for _, name in every],
        "route_rule": route_rule(list(rubric.stop_after), [step for step, _ in every]),
        "criteria": [{"name": c.name, "description": c.description} for c in getattr(high, "criteria", ())],
        "types": {kind: getattr(rubric, kind).description for kind in ("request", "feature", "enhancement",
                                                                      "performance")},
        "no_flag_reasons": [{"name": k, "text": v} for k, v in no_flag_reasons(bundle).items()],
        "no_flag_none": NO_FLAG_NONE,
        "max_module_labels": rubric.module_max_labels,
        "labels": [{"name": s.name, "role": s.role, "route": s.route, "description": s.description}
                   for s in labels.specs if s.role in ("sub-oncall", "module", "type")],
        # Step 1's answer values in the schema (the procedure's): a queue's prompt names them without spelling
        # another queue's name.
        "in_queue": str(InQueue.YES), "not_in_queue": str(InQueue.NO),
    }


STEP_WORDS = {3: "module labels (step 3)", 4: "the type (step 4)", 5: "possible high priority (step 5)",
              6: "a reproduction (step 6)"}


def route_rule(stop_after: list[str], every_route: list[int]) -> str:
    """Which of steps 3-6 the procedure runs on the routes whose own team triages further, in one sentence."""
    if not stop_after:
        return "On every route the procedure runs every later step (3 to 6)."
    names = " and ".join(f"`{name}`" for name in stop_after)
    runs = [STEP_WORDS[s] for s in (4, 5) if s in every_route]
    skipped = [STEP_WORDS[s] for s in (3, 4, 5, 6) if s not in every_route]
    said = (f"On {'route' if len(stop_after) == 1 else 'routes'} {names} the sub-team triages further itself: "
            f"the procedure does not decide {' or '.join(skipped)} there")
    if runs:
        said += f", and it still checks {' and '.join(runs)} there, as on every route"
    return said + "."


def render(snapshot: IssueSnapshot, bundle: Bundle) -> Prompt:
    from jinja2 import TemplateError

    from triage.config.templates import render_bounded

    if bundle.prompt is not None:  # the configuration's own prompt (a repository's, say)
        file, template = bundle.prompt_file, _template_text(bundle.prompt, bundle.prompt_file)
    else:
        file = str(prompt_path(bundle))
        template = _template(file)
    issue = issue_text(snapshot, bundle.templates.names)
    digest = hashlib.sha256(repr(sorted(issue.items())).encode("utf-8")).hexdigest()[:16]
    fence = f"ISSUE-DATA-{digest}"
    # `hints` stays defined (empty) for a fork's older template that still lists them: the user part carries the
    # issue only.
    context = dict(procedure_context(bundle), issue=issue, fence=fence, hints=[])
    try:
        return Prompt(render_bounded(template, part="system", **context).strip(),
                      render_bounded(template, part="user", **context).strip(), fence)
    except TemplateError as exc:
        raise PromptError(f"{file}: the prompt template does not render: {exc}") from None


__all__ = ["EVERY_ROUTE_STEPS", "MAX_BODY", "MAX_COMMENT", "MAX_COMMENTS", "MAX_TITLE", "PROMPT_FILE", "Prompt",
           "PromptError", "ShownComment", "check", "clip", "issue_text", "procedure_context", "prompt_path",
           "render", "route_rule"]
