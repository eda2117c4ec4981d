"""Every check a configuration must pass, each problem one line with the file and line it comes from.

The schema (rubric and labels), every pattern (each must compile under RE2: no backreferences or lookarounds,
whose backtracking can take exponential time, and no repetition RE2 refuses as too large — so no pattern can be
catastrophic on long issue text), routes against precedence, default and stop_after, each label a rule names in
the allowlist with the role it is used in, each module's route, and each template a step posts present and
rendering. `ptd-triage validate`, the Action at start and `load_bundle` all run these same checks.

May import: the standard library, jsonschema, `triage.config` (source, rubric, labels, templates), `triage.text`.
"""

from __future__ import annotations

from dataclasses import dataclass

from jsonschema import Draft202012Validator

from triage.config.labels import _SCHEMA as LABELS_SCHEMA, LabelsError, TYPE_KINDS, parse_labels
from triage.config.rubric import DEFAULT_COMMENT_TEMPLATES, _validator as rubric_validator, route_problems
from triage.config.names import LABEL_NAME_PATTERN, RESERVED_LABELS, label_name_problem
from triage.config.source import Located
from triage.config.words import canonical
from triage.config.templates import SUFFIX, TemplatesError, build_templates, syntax_problem
from triage.text.frames import compile_slots
from triage.text.matching import PatternError, compile_signal
from triage.text.patterns import compile_pattern


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


@dataclass
class QueueSources:
    """A queue's configuration before compiling: the rubric and label documents and the template sources."""

    rubric: Located
    labels: Located
    templates: dict[str, str]
    templates_dir: str
    template_files: dict[str, tuple[str, int | None]]  # name -> where its text came from
    prompt: tuple[str, tuple[str, int | None]] | None = None  # the model's prompt template and where it came from
    # Without a prompt: where it was looked for and how to add one (for the model planner's one-line error). Never
    # a path to open: a queue read through the contents API has no file on the runner's disk.
    prompt_missing: str = ""


def _at(doc: Located, path, message: str) -> Problem:
    file, line = doc.where(tuple(path))
    return Problem(file, line, message)


def schema_message(error) -> str:
    """A schema error in words: a label name's rule is said, not its regular expression."""
    if error.validator == "pattern" and error.validator_value == LABEL_NAME_PATTERN:
        return f"label name {error.instance!r} {label_name_problem(error.instance)}"
    return error.message


def _schema_problems(doc: Located, validator: Draft202012Validator, what: str) -> list[Problem]:
    out = []
    for error in sorted(validator.iter_errors(doc.data), key=lambda e: [str(p) for p in e.absolute_path]):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        out.append(_at(doc, error.absolute_path, f"invalid {what} at {where}: {schema_message(error)}"))
    return out


def _signal_lists(data: dict):
    """(key path, signals) for every list of signals in the rubric."""
    for name, topic in data.get("topics", {}).items():
        yield ("topics", name, "signals"), topic.get("signals", [])
    for name, route in data.get("routing", {}).get("routes", {}).items():
        yield ("routing", "routes", name, "signals"), route.get("signals", [])
    yield ("not_distributed", "signals"), data.get("not_distributed", {}).get("signals", [])
    for kind in data.get("types", {}):
        yield ("types", kind, "signals"), data["types"][kind].get("signals", [])
    hp = data.get("high_priority", {})
    for name, criterion in hp.get("criteria", {}).items():
        yield ("high_priority", "criteria", name, "signals"), criterion.get("signals", [])
    yield ("high_priority", "counter_evidence", "signals"), hp.get("counter_evidence", {}).get("signals", [])
    yield ("high_priority", "signals"), hp.get("signals", [])  # the older single-check form
    yield ("reproduction", "signals"), data.get("reproduction", {}).get("signals", [])


def _frame_problems(rubric: Located, seen: dict[str, tuple]) -> list[Problem]:
    """Step 5's slot vocabulary compiles under RE2, and every frame names defined slots with a unique id."""
    hp = rubric.data.get("high_priority", {})
    problems, slots = [], {}
    for name, source in hp.get("slots", {}).items():
        try:
            slots[name] = compile_slots({name: source}, where="high_priority/slots")[name]
        except PatternError as exc:
            problems.append(_at(rubric, ("high_priority", "slots", name), str(exc)))
    lists = [(("high_priority", "criteria", name, "frames"), c.get("frames", []))
             for name, c in hp.get("criteria", {}).items()]
    lists.append((("high_priority", "counter_evidence", "frames"), hp.get("counter_evidence", {}).get("frames", [])))
    for path, frames in lists:
        for i, raw in enumerate(frames):
            if raw["id"] in seen:
                problems.append(_at(rubric, path + (i, "id"), f"signal id '{raw['id']}' is used twice (ids must be unique)"))
            seen.setdefault(raw["id"], path + (i,))
            missing = [s for s in [*raw["all"], *raw.get("none", []), *raw.get("none_in_issue", [])] if s not in hp.get("slots", {})]
            if missing:
                problems.append(_at(rubric, path + (i,), f"frame '{raw['id']}' names slot '{missing[0]}', "
                                                         "which high_priority.slots does not define"))
    return problems


def floor_problems(labels: Located) -> list[Problem]:
    """The procedure's floor, which no configuration lowers: `forbidden` keeps every reserved label (an empty or
    partial list is refused, not silently completed), no reserved or forbidden label is declared as one the bot
    may add. (The policy enforces the floor in code anyway; this says so to whoever wrote the file.)"""
    data = labels.data
    out = []
    if "forbidden" in data:
        missing = sorted(RESERVED_LABELS - set(data["forbidden"]))
        if missing:
            out.append(_at(labels, ("forbidden",), f"forbidden must keep '{missing[0]}': the procedure reserves it "
                                                   "for people in every queue (the bot never adds it)"))
    forbidden = set(data.get("forbidden", ())) | RESERVED_LABELS
    for i, spec in enumerate(data["labels"]):
        name = spec.get("name")
        if name in RESERVED_LABELS:
            out.append(_at(labels, ("labels", i, "name"), f"label '{name}' is reserved for people by the procedure; "
                                                          "the bot may not be given it (as any role)"))
        elif name in forbidden:
            out.append(_at(labels, ("labels", i, "name"), f"label '{name}' is both allowed and forbidden"))
    return out


def _blame(doc: Located, paths: tuple[tuple, ...], message: str) -> Problem:
    """The problem at the first of `paths` that a later layer (a repository's configuration) wrote, else at the first:
    an error the user's file caused names the user's file and line, not the bundled file it was layered over."""
    for path in paths:
        file, line = doc.where(path)
        if file != doc.file and (path in doc.marks or not path):
            return Problem(file, line, message)
    file, line = doc.where(paths[0] if paths else ())
    return Problem(file, line, message)


def _removed_by(rubric: Located, message: str) -> str:
    """When a problem names a route a later layer removed (`_remove`), say where: the line to change is there,
    not in the bundled file the problem points at."""
    for path, (file, line) in rubric.removed.items():
        if path[:2] == ("routing", "routes") and f"route '{path[2]}'" in message:
            return f" (the route was removed at {file}:{line})"
    return ""


def check(sources: QueueSources) -> list[Problem]:
    labels = sources.labels
    marks = dict(sources.rubric.marks)  # `not_in_queue:` read as `not_distributed:`, its lines kept
    rubric = Located(canonical(sources.rubric.data, marks), sources.rubric.file, marks)
    problems = _schema_problems(rubric, rubric_validator(), "rubric")
    problems += _schema_problems(labels, Draft202012Validator(LABELS_SCHEMA), "labels")
    if problems:
        return problems  # the cross-references below assume the documents' shape
    r, l = rubric.data, labels.data

    for key in ("environment_heading", "comment_separator"):
        if r["text"].get(key):
            try:
                compile_pattern(r["text"][key])
            except PatternError as exc:
                problems.append(_at(rubric, ("text", key), f"text.{key} is not a pattern RE2 can run ({exc})"))
    seen: dict[str, tuple] = {}
    for path, signals in _signal_lists(r):
        for i, raw in enumerate(signals):
            if raw["id"] in seen:
                problems.append(_at(rubric, path + (i, "id"), f"signal id '{raw['id']}' is used twice (ids must be unique)"))
            seen.setdefault(raw["id"], path + (i,))
            try:
                compile_signal(raw, where="/".join(map(str, path)))
            except PatternError as exc:
                problems.append(_at(rubric, path + (i,), str(exc)))
    problems += _frame_problems(rubric, seen)
    if r["modules"]["medium"] > r["modules"]["high"]:
        problems.append(_at(rubric, ("modules", "medium"), "modules.medium must not exceed modules.high"))
    problems += [_at(rubric, path, message + _removed_by(sources.rubric, message)) for path, message in route_problems(r)]

    try:
        allow = parse_labels(l, labels.file)
    except LabelsError as exc:
        problems.append(_blame(labels, exc.at, exc.detail))
        return problems
    index = {spec.get("name"): i for i, spec in enumerate(l["labels"])}
    routes = r["routing"]["routes"]
    for name, topic in r["topics"].items():
        label = topic.get("label")
        if label is not None and allow.role(label) != "module":
            have = allow.role(label)
            why = f"which has role '{have}'" if have else "which is not in the allowlist"
            problems.append(_at(rubric, ("topics", name, "label"), f"topic '{name}' names label '{label}', {why} (needs role 'module')"))
    for name, rule in routes.items():
        label = rule.get("label")
        if label is not None and allow.role(label) != "sub-oncall":
            have = allow.role(label)
            why = f"which has role '{have}'" if have else "which is not in the allowlist"
            problems.append(_at(rubric, ("routing", "routes", name, "label"), f"route '{name}' names label '{label}', {why} (needs role 'sub-oncall')"))
    for spec in allow.specs:
        if spec.role == "module" and spec.route is not None and spec.route not in routes:
            problems.append(_at(labels, ("labels", index[spec.name], "route"),
                                f"module '{spec.name}' belongs to route '{spec.route}', which the rubric does not define"
                                + _removed_by(sources.rubric, f"route '{spec.route}'")))
    for where, route in [*((("gold", "either", i), r) for i, r in enumerate(allow.either_routes)),
                         *((("gold", "module_routes", n), r) for n, r in allow.gold_module_routes)]:
        if route not in routes:
            problems.append(_at(labels, where, f"gold names route '{route}', which the rubric does not define"
                                + _removed_by(sources.rubric, f"route '{route}'")))
    problems += floor_problems(labels)
    for kind in TYPE_KINDS:
        if not any(s.role == "type" and s.kind == kind for s in allow.specs):
            problems.append(_at(labels, ("labels",), f"the allowlist has no type label of kind '{kind}', which step 4 adds"))

    wanted = {**DEFAULT_COMMENT_TEMPLATES, **r.get("comments", {})}
    for step, name in wanted.items():
        if name not in sources.templates:
            where = ("comments", step) if step in r.get("comments", {}) else ("comments",)
            problems.append(_at(rubric, where, f"comments.{step} names template '{name}', but {sources.templates_dir} "
                                               f"has no {name}{SUFFIX}"))
    try:
        build_templates(sources.templates_dir, sources.templates, required=(), files=sources.template_files)
    except TemplatesError as exc:  # it names its own file and line
        file, _, message = str(exc).partition(": ")
        path, _, line = file.rpartition(":") if file.rpartition(":")[2].isdigit() else (file, "", "")
        problems.append(Problem(path, int(line) if line else None, message))
    return problems


def prompt_problems(sources: QueueSources) -> list[Problem]:
    """The model planners' prompt, when the queue has one, parses. Not part of `check`, which every run does: a
    rubric run never reads the prompt, and a model run checks it before any issue (triage.planners.llm)."""
    if sources.prompt is None:
        return []
    text, (file, first) = sources.prompt
    found = syntax_problem(text)
    if found is None:
        return []
    line, message = found
    if line and str(file).endswith(".j2"):  # its own file: the template's line is the file's
        line = (first or 1) + line - 1
    elif line:  # a repository config's `prompt: |` block: its text starts on the line after the key
        line = first + line if first else None
    return [Problem(file, line or first, f"the prompt template does not parse: {message}")]
