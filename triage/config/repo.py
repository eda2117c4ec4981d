"""A repository's own configuration, `.github/ptd-triage.yml`: the queue it starts from and what it changes, or a
whole queue of its own.

    extends: pt2                    # where to start: a bundled queue (distributed, pt2), `none` (this file is the
                                    #   whole queue), or OWNER/REPO[:PATH] (another repository's configuration, read
                                    #   from its default branch; PATH ending in "/" is a queue folder). `queue: pt2`
                                    #   is the older spelling of a bundled `extends`. Neither: distributed (said
                                    #   loudly in every run's notice).
    queue_label: "oncall: pt2"      # optional: the label that puts an issue in the queue
    command: /pt2-retriage          # optional: the re-triage slash command
    rubric:                         # merged into the base's rubric.yaml, mapping by mapping;
      routing:                      #   lists and values replace, `add_signals:` appends to a `signals` list,
        routes: {_remove: [cpu-inductor]}  # and `_remove: [...]` deletes keys (with `extends: none`: the whole rubric)
        precedence: [export, core]
    labels:                         # optional
      add:                          #   labels to add to the allowlist (one with an existing name replaces it)
        - {name: "module: my thing", role: module, description: "...", color: "c5def5"}
      forbidden: ["high priority"]  #   replaces the forbidden list
      disabled: [enhancement]       #   replaces the list of type labels the bot does not add
      labels: [...]                 #   replaces the whole allowlist (what `extends: none` uses)
    templates:                      # optional: template name -> text (replaces or adds a template)
      not_pt2: |
        Hi {% if author %}@{{ author }}{% endif %}, ...
    prompt: |                       # optional: the model's prompt template (prompt.md.j2)

Layering: the base <- this file <- the Action's explicit inputs; the result is validated as a whole, and each
problem names the file and line it comes from (this file's own lines for what it changed). The Action reads it
through the contents API from the default branch (`triage.config.remote`).

May import: the standard library, jsonschema (inside functions), `triage.config`.
"""

from __future__ import annotations

import copy
from pathlib import Path

from triage.config.bundle import (Bundle, ConfigError, DEFAULT_QUEUE, bundled_queue, bundled_queues, compile_sources,
                                  read_sources)
from triage.config.names import LABEL_NAME_PATTERN
from triage.config.source import Located, SourceError, load_document, merge, parse_document
from triage.config.validate import Problem, QueueSources, schema_message

REPO_CONFIG_PATH = ".github/ptd-triage.yml"
WHOLE = "none"  # `extends: none`: the file is the whole queue
# A bundled queue's name, or OWNER/REPO with an optional :PATH (no "..", no leading "/").
EXTENDS_PATTERN = r"^(?:[a-z0-9][a-z0-9_-]*|[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}(?::(?!/)(?!.*\.\.)[A-Za-z0-9._/-]{1,300})?)$"

_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "queue": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"},
        "extends": {"type": "string", "pattern": EXTENDS_PATTERN},
        "prompt": {"type": "string"},
        "queue_label": {"type": "string", "pattern": LABEL_NAME_PATTERN},
        "command": {"type": "string"},
        "rubric": {"type": "object"},
        "labels": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "add": {"type": "array", "items": {"type": "object"}},
                "forbidden": {"type": "array", "items": {"type": "string", "pattern": LABEL_NAME_PATTERN}},
                "disabled": {"type": "array", "items": {"type": "string", "pattern": LABEL_NAME_PATTERN}},
                "labels": {"type": "array", "items": {"type": "object"}},
                "queue_label": {"type": "string", "pattern": LABEL_NAME_PATTERN},
            },
        },
        "templates": {
            "type": "object",
            "propertyNames": {"pattern": "^[A-Za-z0-9_-]+$"},
            "additionalProperties": {"type": "string"},
        },
    },
}


def parse_repo_config(text: str, file: str = REPO_CONFIG_PATH) -> Located:
    """The repository's file, shape-checked; ConfigError names the file and line."""
    try:
        doc = parse_document(text, file)
    except SourceError as exc:
        raise ConfigError(str(exc)) from None
    if doc.data is None:  # an empty file (or only comments) configures nothing: never read as "the default"
        raise ConfigError(f"{file}: is empty (it configures nothing): give it a queue (docs/forking.md), or "
                          "correct the `config` input; nothing was written")
    problems = schema_problems(doc)
    if problems:
        raise ConfigError(str(problems[0]))
    return doc


def schema_problems(doc: Located) -> list[Problem]:
    from jsonschema import Draft202012Validator  # here: a run without a repository file never needs it

    out = []
    for error in sorted(Draft202012Validator(_SCHEMA).iter_errors(doc.data), key=lambda e: [str(p) for p in e.absolute_path]):
        file, line = doc.where(tuple(error.absolute_path))
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        out.append(Problem(file, line, f"invalid repository config at {where}: {schema_message(error)}"))
    return out


def layer(base: QueueSources, config: Located) -> QueueSources:
    """`config` (a parsed repository file) layered over a queue's sources."""
    data, marks = config.data, config.marks
    rubric = base.rubric
    if "rubric" in data:
        rubric = merge(rubric, data["rubric"], marks, ("rubric",))
    if "command" in data:
        rubric = merge(rubric, {"command": data["command"]}, {("command",): config.where(("command",))}, ())
    labels = base.labels
    changes = data.get("labels", {})
    if "queue_label" in data:
        labels = merge(labels, {"queue_label": data["queue_label"]}, {("queue_label",): config.where(("queue_label",))})
    for key in ("labels", "queue_label", "forbidden", "disabled"):  # whole values: they replace the base's
        if key in changes:
            labels = merge(labels, {key: changes[key]}, {k[1:]: v for k, v in marks.items() if k[:2] == ("labels", key)})
    if changes.get("add"):
        labels = Located(copy.deepcopy(labels.data), labels.file, dict(labels.marks))
        entries = labels.data.setdefault("labels", [])
        for i, entry in enumerate(changes["add"]):
            names = [e.get("name") for e in entries]
            at = names.index(entry.get("name")) if entry.get("name") in names else len(entries)
            if at == len(entries):
                entries.append(copy.deepcopy(entry))
            else:
                entries[at] = copy.deepcopy(entry)
            prefix = ("labels", "add", i)
            for key in [k for k in labels.marks if k[:2] == ("labels", at)]:
                del labels.marks[key]
            for key, mark in marks.items():
                if key[:3] == prefix:
                    labels.marks[("labels", at) + key[3:]] = mark
    templates, files = dict(base.templates), dict(base.template_files)
    for name, text in data.get("templates", {}).items():
        templates[name] = text
        files[name] = config.where(("templates", name))
    prompt = (data["prompt"], config.where(("prompt",))) if "prompt" in data else base.prompt
    return QueueSources(rubric, labels, templates, base.templates_dir, files, prompt, base.prompt_missing)


def base_of(config: Located | None) -> tuple[str, str, str]:
    """Where `config` starts: ("bundled", NAME, ""), ("none", "", "") or ("repo", OWNER/REPO, PATH)."""
    data = config.data if config is not None else {}
    if "queue" in data and "extends" in data:
        file, line = config.where(("extends",))
        raise ConfigError(f"{file}:{line}: give `extends` or the older `queue`, not both")
    name = data.get("extends") or data.get("queue")
    if name is None:
        return "bundled", DEFAULT_QUEUE, ""
    if name == WHOLE:
        return "none", "", ""
    if "/" in name:
        repo, _, path = name.partition(":")
        return "repo", repo, path or REPO_CONFIG_PATH
    return "bundled", name, ""


def empty_sources(file: str) -> QueueSources:
    """Nothing to extend: the file itself must define the whole queue."""
    return QueueSources(Located({}, file, {(): (file, 1)}), Located({}, file, {(): (file, 1)}), {}, file, {},
                        None, f"add `prompt:` to {file}")


def bundled_sources(name: str) -> QueueSources:
    folder = bundled_queue(name)
    return read_sources(folder / "rubric.yaml", folder / "labels.json", folder / "templates")


def sources_for(config: Located | None, *, base: QueueSources | None = None, rubric: str | None = None,
                labels: str | None = None, templates: str | None = None) -> QueueSources:
    """The base (`base`, else the bundled queue or nothing that `config` extends) <- the config <- explicit files.
    A configuration that extends another repository's is read by `triage.config.remote`, which passes `base`."""
    kind, name, path = base_of(config)
    if base is None:
        if kind == "repo":
            file, line = config.where(("extends",))
            raise ConfigError(f"{file}:{line}: extends {name}:{path}, another repository's configuration, which "
                              "only the Action reads (through the contents API)")
        if kind == "none":
            _require_whole(config)
        base = empty_sources(config.file) if kind == "none" else _bundled_base(config, name)
    sources = layer(base, config) if config is not None else base
    if rubric or labels or templates:  # the Action's inputs: whole files, they replace what is layered
        folder = bundled_queue(name if kind == "bundled" else DEFAULT_QUEUE)
        explicit = read_sources(Path(rubric) if rubric else folder / "rubric.yaml",
                                Path(labels) if labels else folder / "labels.json",
                                Path(templates) if templates else folder / "templates")
        sources = QueueSources(explicit.rubric if rubric else sources.rubric,
                               explicit.labels if labels else sources.labels,
                               explicit.templates if templates else sources.templates,
                               explicit.templates_dir if templates else sources.templates_dir,
                               explicit.template_files if templates else sources.template_files,
                               sources.prompt if sources.prompt is not None or not templates else explicit.prompt,
                               sources.prompt_missing if not templates else explicit.prompt_missing)
    return sources


def _bundled_base(config: Located | None, name: str) -> QueueSources:
    """The bundled queue `config` extends; a name that is none is the file's own error, on its line."""
    try:
        return bundled_sources(name)
    except ConfigError as exc:
        if config is None:
            raise
        key = "extends" if "extends" in config.data else "queue"
        file, line = config.where((key,))
        raise ConfigError(f"{file}:{line}: {key}: no bundled queue '{name}' (bundled: "
                          f"{', '.join(bundled_queues())}); or `none` for a whole queue in this file, or "
                          "OWNER/REPO[:PATH] for another repository's") from exc


def _require_whole(config: Located) -> None:
    data = config.data
    missing = [key for key in ("rubric", "labels", "templates") if key not in data]
    if "labels" in data and "labels" not in data["labels"]:
        missing.append("labels.labels")
    if missing:
        file, line = config.where(("extends",))
        raise ConfigError(f"{file}:{line}: `extends: none` makes this file the whole queue, but it has no "
                          f"{missing[0]}: define rubric:, labels: (with labels:) and templates:, or extend a queue")


def precheck_inputs(*, rubric: str | None = None, labels: str | None = None, templates: str | None = None) -> None:
    """The Action's own file inputs, read and shape-checked before any request: a typo in a workflow fails at
    once, with nothing sent to GitHub. (Cross-references are checked after layering, as a whole.)"""
    from triage.config.labels import validator as labels_validator
    from triage.config.rubric import _validator
    from triage.config.validate import _schema_problems

    try:
        docs = [(load_document(rubric), _validator(), "rubric")] if rubric else []
        docs += [(load_document(labels), labels_validator(), "labels")] if labels else []
    except SourceError as exc:
        raise ConfigError(str(exc)) from None
    for doc, validator, what in docs:
        problems = _schema_problems(doc, validator, what)
        if problems:
            raise ConfigError(str(problems[0]))
    if templates and not Path(templates).is_dir():
        raise ConfigError(f"{templates}: templates directory not found")


def describe_source(config: Located | None, *, rubric: str | None = None, labels: str | None = None,
                    templates: str | None = None) -> str:
    """Which queue a run uses and where it comes from, in one line: said on every run that plans, so a fork
    running PyTorch's bundled queue by default cannot go unnoticed."""
    kind, name, path = base_of(config)
    parts = [f"the bundled '{name}' queue" if kind == "bundled" else "the whole queue" if kind == "none"
             else f"{name}:{path}"]
    if config is None and not (rubric or labels or templates):
        parts.append("(the default: no config input names a repository configuration)")
    if config is not None:
        parts.append(f"defined in {config.file}" if kind == "none" else f"changed by {config.file}")
    given = [f"{name} {value}" for name, value in (("rubric", rubric), ("labels", labels), ("templates", templates))
             if value]
    if given:
        parts.append("with " + ", ".join(given))
    return "queue: " + " ".join(parts)


def load_repo_bundle(config: Located | None, **explicit) -> Bundle:
    return compile_sources(sources_for(config, **explicit))


def load_repo_config_file(path: str | Path) -> Located:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_repo_config(text, str(path))


def read_repo_config(fetch, repo: str, path: str = REPO_CONFIG_PATH) -> Located:
    """The repository's file from its default branch (one request). `fetch(repo, path)` returns the text, None
    when there is no such file, or raises ConfigError when it cannot be read. Fails closed: a file that is named
    but missing, empty, malformed or invalid is a ConfigError naming it, never a fallback to another queue."""
    file = f"{repo}:{path}"
    text = fetch(repo, path)
    if text is None:
        raise ConfigError(f"{file}: not found on the default branch (the `config` input names it): add the file "
                          "there, or correct the `config` input; nothing was written")
    return parse_repo_config(text, file)
