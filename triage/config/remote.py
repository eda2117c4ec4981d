"""A queue read from a repository through a `Reader` (the Action's is the contents API, default branch only).

Two forms, both failing closed (a named file or folder that is missing, empty, unreadable, malformed or invalid
is a ConfigError naming it and its line; nothing falls back to another queue):

- one file (`config: .github/ptd-triage.yml`): one request, plus one per `extends: OWNER/REPO[:PATH]` it follows
  (at most MAX_EXTENDS deep, no cycle) — an organisation's shared queue, in the spirit of Probot's `_extends`;
- a queue folder (`config: .github/ptd-triage/`, the trailing "/" says so), laid out as a bundled queue
  (rubric.yaml, labels.json, templates/*.md.j2, optional prompt.md.j2): one listing of the folder, one of
  templates/, and one request per file.

May import: the standard library, `triage.config`.
"""

from __future__ import annotations

from typing import Protocol

from triage.config.bundle import PROMPT_FILE, ConfigError
from triage.config.repo import base_of, describe_source, read_repo_config, sources_for
from triage.config.source import SourceError, parse_document
from triage.config.templates import SUFFIX
from triage.config.validate import QueueSources

MAX_EXTENDS = 3  # a chain of `extends:` between repositories; deeper is refused (and so is a cycle)


class Reader(Protocol):
    def file(self, repo: str, path: str) -> str | None:
        """The file's text on `repo`'s default branch; None when there is none; ConfigError when unreadable."""

    def listing(self, repo: str, path: str) -> list[tuple[str, str]] | None:
        """A folder's entries as (name, "file" | "dir"); None when there is no such folder."""


def read_queue(reader: Reader, repo: str, path: str) -> tuple[QueueSources, str]:
    """The queue `path` in `repo` names (a file, or a folder when it ends in "/"), and one line saying what it is."""
    if path.endswith("/"):
        folder = path.rstrip("/")
        return read_folder(reader, repo, folder), f"queue: the whole queue in the folder {repo}:{folder}/"
    return _read_file(reader, repo, path, ())


def _read_file(reader: Reader, repo: str, path: str, chain: tuple) -> tuple[QueueSources, str]:
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
        base, said = read_folder(reader, other, other_path.rstrip("/")), f"the queue folder {other}:{other_path}"
    else:
        base, said = _read_file(reader, other, other_path, chain + (here,))
        said = said.removeprefix("queue: ")
    return sources_for(config, base=base), f"queue: {said}, changed by {config.file}"


def _required(reader: Reader, repo: str, path: str, what: str) -> str:
    text = reader.file(repo, path)
    if text is None:
        raise ConfigError(f"{repo}:{path}: not found on the default branch (a queue folder needs {what})")
    return text


def read_folder(reader: Reader, repo: str, folder: str) -> QueueSources:
    """A queue folder in a repository, as a bundled queue is laid out."""
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
    for name, kind in reader.listing(repo, f"{folder}/templates") or ():
        if kind == "file" and name.endswith(SUFFIX):
            file = f"{folder}/templates/{name}"
            templates[name[: -len(SUFFIX)]] = _required(reader, repo, file, "its templates")
            files[name[: -len(SUFFIX)]] = (f"{repo}:{file}", 1)
    prompt = None
    if names.get(PROMPT_FILE) == "file":
        file = f"{folder}/{PROMPT_FILE}"
        prompt = (_required(reader, repo, file, PROMPT_FILE), (f"{repo}:{file}", 1))
    return QueueSources(docs[0], docs[1], templates, f"{repo}:{folder}/templates", files, prompt)
