"""A repository's own configuration, `.github/ptd-triage.yml`: which bundled queue it starts from and what it changes.

    queue: pt2                      # a bundled queue (default: distributed)
    queue_label: "oncall: pt2"      # optional: the label that puts an issue in the queue
    command: /pt2-retriage          # optional: the re-triage slash command
    rubric:                         # optional: merged into the queue's rubric.yaml, mapping by mapping;
      routing:                      #   lists and values replace, `add_signals:` appends to a `signals` list,
        routes: {_remove: [cpu-inductor]}  # and `_remove: [...]` deletes keys
        precedence: [export, core]
      topics:
        dynamo:
          add_signals:
            - {id: my-dynamo-words, match: '\\bmy_compiler\\b', weight: 2}
    labels:                         # optional
      add:                          #   labels to add to the allowlist (one with an existing name replaces it)
        - {name: "module: my thing", role: module, description: "...", color: "c5def5"}
      forbidden: ["high priority"]  #   replaces the forbidden list
    templates:                      # optional: template name -> text (replaces or adds a template)
      not_pt2: |
        Hi {% if author %}@{{ author }}{% endif %}, ...

Layering: the bundled queue <- this file <- the Action's explicit inputs; the result is validated as a whole, and
each problem names the file and line it comes from (this file's own lines for what it changed). The Action reads
it through the contents API from the default branch, one request per run (`read_repo_config`).

May import: the standard library, jsonschema, `triage.config`.
"""

from __future__ import annotations

import copy
from pathlib import Path

from jsonschema import Draft202012Validator

from triage.config.bundle import Bundle, ConfigError, DEFAULT_QUEUE, bundled_queue, compile_sources, read_sources
from triage.config.names import LABEL_NAME_PATTERN
from triage.config.source import Located, SourceError, load_document, merge, parse_document
from triage.config.validate import Problem, QueueSources, check, schema_message

REPO_CONFIG_PATH = ".github/ptd-triage.yml"

_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "queue": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"},
        "queue_label": {"type": "string", "pattern": LABEL_NAME_PATTERN},
        "command": {"type": "string"},
        "rubric": {"type": "object"},
        "labels": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "add": {"type": "array", "items": {"type": "object"}},
                "forbidden": {"type": "array", "items": {"type": "string", "pattern": LABEL_NAME_PATTERN}},
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
        raise ConfigError(f"{file}: is empty (it configures nothing); give it a queue, or stop naming it in "
                          "the `config` input to run the bundled distributed queue")
    problems = schema_problems(doc)
    if problems:
        raise ConfigError(str(problems[0]))
    return doc


def schema_problems(doc: Located) -> list[Problem]:
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
    if "forbidden" in changes:
        labels = merge(labels, {"forbidden": changes["forbidden"]}, {
            k[1:]: v for k, v in marks.items() if k[:2] == ("labels", "forbidden")})
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
    return QueueSources(rubric, labels, templates, base.templates_dir, files)


def sources_for(config: Located | None, *, rubric: str | None = None, labels: str | None = None,
                templates: str | None = None) -> QueueSources:
    """Bundled queue (named by the config, default distributed) <- the config <- explicit files."""
    name = (config.data.get("queue") if config is not None else None) or DEFAULT_QUEUE
    folder = bundled_queue(name)
    sources = read_sources(folder / "rubric.yaml", folder / "labels.json", folder / "templates")
    if config is not None:
        sources = layer(sources, config)
    if rubric or labels or templates:  # the Action's inputs: whole files, they replace what is layered
        explicit = read_sources(Path(rubric) if rubric else folder / "rubric.yaml",
                                Path(labels) if labels else folder / "labels.json",
                                Path(templates) if templates else folder / "templates")
        sources = QueueSources(explicit.rubric if rubric else sources.rubric,
                               explicit.labels if labels else sources.labels,
                               explicit.templates if templates else sources.templates,
                               explicit.templates_dir if templates else sources.templates_dir,
                               explicit.template_files if templates else sources.template_files)
    return sources


def precheck_inputs(*, rubric: str | None = None, labels: str | None = None, templates: str | None = None) -> None:
    """The Action's own file inputs, read and shape-checked before any request: a typo in a workflow fails at
    once, with nothing sent to GitHub. (Cross-references are checked after layering, as a whole.)"""
    from triage.config.labels import _SCHEMA as LABELS_SCHEMA
    from triage.config.rubric import _validator
    from triage.config.validate import _schema_problems

    try:
        docs = [(load_document(rubric), _validator(), "rubric")] if rubric else []
        docs += [(load_document(labels), Draft202012Validator(LABELS_SCHEMA), "labels")] if labels else []
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
    base = (config.data.get("queue") if config is not None else None) or DEFAULT_QUEUE
    parts = [f"the bundled '{base}' queue"]
    if config is None and not (rubric or labels or templates):
        parts.append("(the default: no `config` input names a repository configuration)")
    if config is not None:
        parts.append(f"changed by {config.file}")
    given = [f"{name} {value}" for name, value in (("rubric", rubric), ("labels", labels), ("templates", templates))
             if value]
    if given:
        parts.append("with " + ", ".join(given))
    return "queue: " + " ".join(parts)


def load_repo_bundle(config: Located | None, **explicit) -> Bundle:
    return compile_sources(sources_for(config, **explicit))


def repo_problems(config: Located | None, **explicit) -> list[Problem]:
    problems = schema_problems(config) if config is not None else []
    if problems:
        return problems
    return check(sources_for(config, **explicit))


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
        raise ConfigError(f"{file}: not found on the default branch (the `config` input names it): add the file, "
                          "or set `config` to empty to run the bundled distributed queue")
    return parse_repo_config(text, file)
