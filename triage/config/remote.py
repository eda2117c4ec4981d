"""A queue read from a repository through a `Reader` (the Action's is the contents API, default branch only).

Two forms, both failing closed (a named file or folder that is missing, empty, unreadable, malformed or invalid
is a ConfigError naming it and its line; nothing falls back to another queue):

- one file (`config: .github/ptd-triage.yml`): one request, plus one per `extends: OWNER/REPO[:PATH]` it follows
  (at most MAX_EXTENDS deep, no cycle) — an organisation's shared queue, in the spirit of Probot's `_extends`;
- a queue folder (`config: .github/ptd-triage/`, the trailing "/" says so), laid out as a bundled queue
  (rubric.yaml, labels.json, templates/*.md.j2, optional prompt.md.j2): one listing of the folder, the rubric and
  the labels, the prompt when the folder has one, and only the templates the rubric's `comments:` name (after the
  files that extend the folder have changed it, less those they give themselves): each name is checked by the
  rule the file form's `templates:` keys follow before it becomes a path, and a missing one is named with the
  rubric line that names it. Other files in the folder are never read, however many there are.

Everything is read through the `Reader`, the prompt too: no path built from a repository's name ever touches the
runner's disk. A queue is read in at most MAX_QUEUE_READS requests (the longest legitimate chain: two files and a
folder with its prompt and three templates, 9); one more is refused, naming the file it would have read.

May import: the standard library, `triage.config`.
"""

from __future__ import annotations

from typing import Protocol

from triage.config.bundle import PROMPT_FILE, TEMPLATE_NAME, ConfigError
from triage.config.repo import base_of, describe_source, read_repo_config, sources_for
from triage.config.rubric import DEFAULT_COMMENT_TEMPLATES
from triage.config.source import Located, SourceError, merge, parse_document
from triage.config.templates import SUFFIX
from triage.config.validate import QueueSources
from triage.config.words import canonical

MAX_EXTENDS = 3  # a chain of `extends:` between repositories; deeper is refused (and so is a cycle)
MAX_QUEUE_READS = 10  # requests one queue may cost (files and listings, its `extends:` chain included)
_COMMENT_STEPS = ("not_distributed", "needs_reproduction", "needs_reproduction_performance")


class Reader(Protocol):
    def file(self, repo: str, path: str) -> str | None:
        """The file's text on `repo`'s default branch; None when there is none; ConfigError when unreadable."""

    def listing(self, repo: str, path: str) -> list[tuple[str, str]] | None:
        """A folder's entries as (name, "file" | "dir"); None when there is no such folder."""


class _Counted:
    """A Reader that refuses (ConfigError, nothing sent) the request past MAX_QUEUE_READS, naming what it was."""

    def __init__(self, reader: Reader, limit: int = MAX_QUEUE_READS):
        self.reader, self.limit, self.reads = reader, limit, 0

    def _count(self, repo: str, path: str) -> None:
        self.reads += 1
        if self.reads > self.limit:
            raise ConfigError(f"{repo}:{path}: not read: a repository's queue is read in at most {self.limit} "
                              "requests (its files, the folder's listing and what it extends)")

    def file(self, repo: str, path: str) -> str | None:
        self._count(repo, path)
        return self.reader.file(repo, path)

    def listing(self, repo: str, path: str) -> list[tuple[str, str]] | None:
        self._count(repo, path + "/")
        return self.reader.listing(repo, path)


def read_queue(reader: Reader, repo: str, path: str) -> tuple[QueueSources, str]:
    """The queue `path` in `repo` names (a file, or a folder when it ends in "/"), and one line saying what it is."""
    reader = _Counted(reader)
    if path.endswith("/"):
        folder = path.rstrip("/")
        return read_folder(reader, repo, folder), f"queue: the whole queue in the folder {repo}:{folder}/"
    return _read_file(reader, repo, path, ())


def _read_file(reader: Reader, repo: str, path: str, chain: tuple,
               above: tuple[Located, ...] = ()) -> tuple[QueueSources, str]:
    """`above`: the files that extend this one, nearest first (they are layered over it, in that order)."""
    config = read_repo_config(reader.file, repo, path)
    kind, other, other_path = base_of(config)
    if kind != "repo":
        return sources_for(config), describe_source(config)
    here = (repo, path)
    if (other, other_path) in chain + (here,):
        file, line = config.where(("extends",))
        raise ConfigError(f"{file}:{line}: extends {other}:{other_path}, which extends this file again (a cycle)")
    if len(chain) + 1 >= MAX_EXTENDS:
        file, line = config.where(("extends",))
        raise ConfigError(f"{file}:{line}: more than {MAX_EXTENDS} configurations extend one another; flatten them")
    if other_path.endswith("/"):
        base = read_folder(reader, other, other_path.rstrip("/"), layers=(config, *above))
        said = f"the queue folder {other}:{other_path}"
    else:
        base, said = _read_file(reader, other, other_path, chain + (here,), (config, *above))
        said = said.removeprefix("queue: ")
    return sources_for(config, base=base), f"queue: {said}, changed by {config.file}"


def _required(reader: Reader, repo: str, path: str, what: str) -> str:
    text = reader.file(repo, path)
    if text is None:
        raise ConfigError(f"{repo}:{path}: not found on the default branch (a queue folder needs {what})")
    return text


def read_folder(reader: Reader, repo: str, folder: str, layers: tuple[Located, ...] = ()) -> QueueSources:
    """A queue folder in a repository, as a bundled queue is laid out. `layers`: the repository files that extend
    it, in the order they are layered over it (they can name other templates, or give their own)."""
    where = f"{repo}:{folder}/"
    entries = reader.listing(repo, folder)
    if entries is None:
        raise ConfigError(f"{where}: not found on the default branch (the `config` input names it)")
    names = {name: kind for name, kind in entries}
    for need, kind in (("rubric.yaml", "file"), ("labels.json", "file"), ("templates", "dir")):
        if names.get(need) != kind:
            raise ConfigError(f"{where}: not a queue folder: no {need}{'/' if kind == 'dir' else ''} "
                              "(expected rubric.yaml, labels.json, templates/)")
    docs = []
    for name in ("rubric.yaml", "labels.json"):
        file = f"{folder}/{name}"
        text = _required(reader, repo, file, name)
        if not text.strip():
            raise ConfigError(f"{repo}:{file}: is empty")
        try:
            docs.append(parse_document(text, f"{repo}:{file}"))
        except SourceError as exc:
            raise ConfigError(str(exc)) from None
    templates, files = {}, {}
    for step, name, named_at in _named_templates(docs[0], layers):
        file = f"{folder}/templates/{name}{SUFFIX}"
        text = reader.file(repo, file)
        if text is None:
            raise ConfigError(f"{repo}:{file}: not found on the default branch ({named_at}: comments.{step} "
                              f"names template '{name}')")
        templates[name], files[name] = text, (f"{repo}:{file}", 1)
    prompt = None
    if names.get(PROMPT_FILE) == "file":
        file = f"{folder}/{PROMPT_FILE}"
        prompt = (_required(reader, repo, file, PROMPT_FILE), (f"{repo}:{file}", 1))
    missing = f"{repo}:{folder}/{PROMPT_FILE} is not on the default branch: add it to the queue folder, or " \
              "`prompt:` in the repository configuration"
    return QueueSources(docs[0], docs[1], templates, f"{repo}:{folder}/templates", files, prompt, missing)


def _named_templates(rubric: Located, layers: tuple[Located, ...]) -> list[tuple[str, str, str]]:
    """(step, template name, where it is named) for each template the queue's steps post and the folder must give:
    the rubric's `comments:` (and the defaults) after `layers` changed it, less the templates a layer gives itself.
    A name is checked before it becomes a path (ConfigError at the line that names it)."""
    given: set[str] = set()
    for config in layers:
        data = config.data if isinstance(config.data, dict) else {}
        if isinstance(data.get("rubric"), dict):
            rubric = merge(rubric, data["rubric"], config.marks, ("rubric",))
        if isinstance(data.get("templates"), dict):
            given |= set(data["templates"])
    marks = dict(rubric.marks)
    data = canonical(rubric.data, marks)
    named = Located(data, rubric.file, marks)
    comments = data.get("comments") if isinstance(data, dict) else None
    comments = comments if isinstance(comments, dict) else {}
    out = []
    for step in _COMMENT_STEPS:
        name = comments.get(step, DEFAULT_COMMENT_TEMPLATES.get(step))
        if name is None or name in given:
            continue
        file, line = named.where(("comments", step) if step in comments else ("comments",))
        at = f"{file}:{line}" if line else file
        if not isinstance(name, str) or not TEMPLATE_NAME.fullmatch(name):
            raise ConfigError(f"{at}: comments.{step} names template {name!r}, which is not a template name "
                              "(letters, digits, '_' and '-', as the keys of `templates:`)")
        out.append((step, name, at))
    return out
