"""The configuration bundle the planner needs: rubric, label allowlist, comment templates — and where it comes from.

A queue is a folder: `rubric.yaml`, `labels.json`, `templates/*.md.j2`. Bundled queues live in `queues/NAME/`
(in a wheel, `triage/_bundled/queues/NAME/`); `distributed` is the default. Configuration is layered, and the
whole is validated (`triage.config.validate`) before anything plans with it:

    bundled queue  <-  the repository's `.github/ptd-triage.yml` (`triage.config.repo`)  <-  explicit paths/inputs

The CLI also takes a queue folder (`--config DIR`) or single files (`--rubric/--labels/--templates`).

May import: the standard library, `triage.config`, `triage.text.patterns` (compile_patterns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from triage.config.bundled import DEFAULT_QUEUE, bundled_folder, bundled_names
from triage.config.compiled import compiled_form, load_document
from triage.config.labels import LabelsError, LabelSet, parse_labels
from triage.config.rubric import Rubric, RubricError, compile_rubric
from triage.config.source import SourceError
from triage.config.templates import SUFFIX, Templates, TemplatesError, build_templates
from triage.config.validate import QueueSources, check
from triage.config.words import QueueWords, queue_words

PROMPT_FILE = "prompt.md.j2"
TEMPLATE_NAME = re.compile(r"[A-Za-z0-9_-]{1,100}")  # a template's name, wherever it comes from


class ConfigError(ValueError):
    """Some configuration file is invalid; one line naming the file (and line)."""


def bundled_queue(name: str = DEFAULT_QUEUE) -> Path:
    """A queue shipped with the project: `queues/NAME/` in a checkout, `triage/_bundled/queues/NAME/` in a wheel."""
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ConfigError(f"bundled queue name {name!r} is not a plain name (bundled: {', '.join(bundled_queues())})")
    found = bundled_folder(name)
    if found is not None:
        return found
    raise ConfigError(f"no bundled queue {name!r} (bundled: {', '.join(bundled_queues()) or 'none'})")


def bundled_queues() -> list[str]:
    return bundled_names()


def default_paths(queue: str | Path | None = None) -> dict[str, Path]:
    folder = Path(queue) if isinstance(queue, Path) else bundled_queue(queue or DEFAULT_QUEUE)
    return {"rubric": folder / "rubric.yaml", "labels": folder / "labels.json", "templates": folder / "templates"}


@dataclass(frozen=True)
class Bundle:
    rubric: Rubric
    labels: LabelSet
    templates: Templates
    # The model's prompt template (`prompt.md.j2`) and the file it came from, when the configuration has one: read
    # with the rest of the queue (from the disk, or through the contents API for a repository's queue), never
    # looked for later. Without one, `prompt_missing` says where it was looked for.
    prompt: str | None = None
    prompt_file: str = ""
    prompt_missing: str = ""

    @property
    def step_templates(self) -> dict[str, str]:
        """Which template each commenting step posts (rubric `comments:`)."""
        return self.rubric.comment_templates

    @property
    def command(self) -> str:
        """The slash command that asks for a re-triage (rubric `command:`, default `/ptd-retriage`)."""
        return self.rubric.command

    @cached_property
    def words(self) -> QueueWords:
        """The queue's words for what reports and reasons say (rubric `words:`, triage.config.words), read once."""
        return queue_words(self.rubric.words, self.labels.queue_label)


def read_templates(directory: Path) -> tuple[dict[str, str], dict[str, tuple[str, int | None]]]:
    if not directory.is_dir():
        raise ConfigError(f"{directory}: templates directory not found")
    sources, files = {}, {}
    for path in sorted(directory.glob("*" + SUFFIX)):
        name = path.name[: -len(SUFFIX)]
        if not TEMPLATE_NAME.fullmatch(name):  # the rule of a repository file's `templates:` keys, everywhere
            raise ConfigError(f"{path}: {name!r} is not a template name (letters, digits, '_' and '-', as the "
                              "keys of `templates:`)")
        sources[name] = path.read_text(encoding="utf-8")
        files[name] = (str(path), 1)
    return sources, files


def read_sources(rubric: Path, labels: Path, templates: Path) -> QueueSources:
    try:
        rubric_doc, labels_doc = load_document(rubric), load_document(labels)
    except SourceError as exc:
        raise ConfigError(str(exc)) from None
    sources, files = read_templates(templates)
    prompt_path = templates.parent / PROMPT_FILE  # a queue folder's prompt, beside its templates
    prompt = None
    if prompt_path.is_file():
        prompt = (prompt_path.read_text(encoding="utf-8"), (str(prompt_path), 1))
    missing = "" if prompt else (f"{prompt_path} does not exist: add {PROMPT_FILE} beside its templates, or "
                                 "`prompt:` in the repository configuration")
    return QueueSources(rubric_doc, labels_doc, sources, str(templates), files, prompt, missing)


def compile_sources(sources: QueueSources) -> Bundle:
    """Validate as a whole (the first problem is the error) and compile. Sources that passed every check before,
    under this code, skip the checks (their compiled form says so: triage.config.compiled)."""
    with compiled_form(sources) as checked:
        problems = [] if checked else check(sources)
        if problems:
            more = f" (and {len(problems) - 1} more; run `ptd-triage validate`)" if len(problems) > 1 else ""
            raise ConfigError(f"{problems[0]}{more}")
        try:
            rubric = compile_rubric(sources.rubric.data, sources.rubric.file, checked=True)
            labels = parse_labels(sources.labels.data, sources.labels.file, checked=checked)
            templates = build_templates(sources.templates_dir, sources.templates,
                                        tuple(rubric.comment_templates.values()), sources.template_files)
        except (RubricError, LabelsError, TemplatesError) as exc:  # check() should have said so already
            raise ConfigError(str(exc)) from None
    prompt, where = sources.prompt if sources.prompt else (None, ("", None))
    return Bundle(rubric, labels, templates, prompt, where[0], sources.prompt_missing)


def compile_patterns(bundle: Bundle) -> int:
    """Compile with RE2 now every pattern of the queue's rubric, and say how many. A compiled queue
    (triage.config.compiled) leaves each pattern to its first use, which is right for a run that plans one issue;
    `eval` calls this before it times the planner, so that its per-issue figure is what planning costs, not the
    queue's one-time compile spread over the first issues."""
    from dataclasses import fields, is_dataclass

    from triage.text.patterns import Pattern

    seen: set[int] = set()
    count = 0
    stack: list = [bundle.rubric]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Pattern):
            item.regex  # noqa: B018 - compiles it (a property that compiles on first use)
            count += 1
        elif is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in fields(item))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return count


@lru_cache(maxsize=8)
def _load(rubric: Path, labels: Path, templates: Path) -> Bundle:
    return compile_sources(read_sources(rubric, labels, templates))


def load_bundle(
    rubric: str | Path | None = None,
    labels: str | Path | None = None,
    templates: str | Path | None = None,
    *,
    queue: str | Path | None = None,
) -> Bundle:
    """The bundle from files: each path given replaces that part of `queue` (a bundled queue's name or a queue
    folder; default the bundled distributed queue)."""
    defaults = default_paths(queue)
    return _load(
        Path(rubric or defaults["rubric"]).resolve(),
        Path(labels or defaults["labels"]).resolve(),
        Path(templates or defaults["templates"]).resolve(),
    )


def missing_prompt(bundle: Bundle) -> str:
    """The one line a model planner's check says when the queue has no prompt template (the rubric needs none)."""
    how = bundle.prompt_missing or (f"add {PROMPT_FILE} beside its templates, or `prompt:` in the repository "
                                    "configuration")
    return f"{bundle.labels.queue_label}: the queue has no prompt template for the model planner ({how})"


def queue_folder(directory: str | Path) -> Path:
    """A queue folder given on the command line, checked to look like one."""
    folder = Path(directory)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: not a directory (expected a queue folder with rubric.yaml, labels.json, templates/)")
    missing = [n for n in ("rubric.yaml", "labels.json", "templates") if not (folder / n).exists()]
    if missing:
        raise ConfigError(f"{folder}: not a queue folder: no {missing[0]} (expected rubric.yaml, labels.json, templates/)")
    return folder
