"""Every check a configuration must pass, each problem one line with the file and line it comes from.

The schema (rubric and labels), every pattern (each must compile under RE2: no backreferences or lookarounds,
whose backtracking can take exponential time, and no repetition RE2 refuses as too large — so no pattern can be
catastrophic on long issue text), routes against precedence, default and stop_after, each label a rule names in
the allowlist with the role it is used in, each module's route, each template a step posts present and
rendering, each part, slot and cue a rule names defined (`triage.config.parts`), and every `examples:` entry run
against its pattern (`triage.config.examples`). `ptd-triage validate`, the Action at start and `load_bundle` all run these same checks.

May import: the standard library, jsonschema, `triage.config` (source, rubric, labels, templates, parts, examples),
`triage.text`.
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.config.labels import LabelsError, TYPE_KINDS, parse_labels, validator as labels_validator
from triage.config.route_checks import route_problems
from triage.config.rubric import DEFAULT_COMMENT_TEMPLATES, _validator as rubric_validator
from triage.config.names import LABEL_NAME_PATTERN, RESERVED_LABELS, is_reserved, label_key, label_name_problem
from triage.config.examples import example_problems
from triage.config.part_rules import part_rule_problems
from triage.config.parts import (SLOT_SECTIONS, VERSION_SLOT, expand, frame_lists, signal_lists, slot_pattern,
                                 slot_sources, slots_path, vocabulary_of)
from triage.config.reading import ReadingError, prepare
from triage.config.source import Located
from triage.config.words import canonical
from triage.config.templates import SUFFIX, TemplatesError, build_templates, syntax_problem
from triage.text.frames import compile_slots
from triage.text.matching import PatternError, compile_signal
from triage.text.modifiers import compile_modifiers
from triage.text.patterns import check_pattern, compile_pattern


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


def _schema_problems(doc: Located, validator, what: str) -> list[Problem]:
    out = []
    for error in sorted(validator.iter_errors(doc.data), key=lambda e: [str(p) for p in e.absolute_path]):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        out.append(_at(doc, error.absolute_path, f"invalid {what} at {where}: {schema_message(error)}"))
    return out


def _slot_problems(rubric: Located, data: dict) -> tuple[dict, list[Problem]]:
    """Each slot vocabulary (step 5's, step 4's) compiles under RE2 (each slot a pattern, or {match: pattern,
    examples: ...}). Returns the compiled vocabularies by section."""
    problems, vocabularies = [], {}
    for section in SLOT_SECTIONS:
        slots = vocabularies[section] = {}
        for name, raw in slot_sources(data, section).items():
            try:
                slots[name] = compile_slots({name: slot_pattern(raw)}, where=f"{section}/slots")[name]
            except PatternError as exc:
                problems.append(_at(rubric, slots_path(section) + (name,), str(exc)))
    return vocabularies, problems


def _frame_problems(rubric: Located, data: dict, seen: dict[str, tuple]) -> list[Problem]:
    """Every frame names slots its own section defines (step 4's frames `types.slots`, the others
    `high_priority.slots`), with a unique id."""
    problems = []
    for path, frames in frame_lists(data):
        section = vocabulary_of(path)
        slots = slot_sources(data, section)
        for i, raw in enumerate(frames):
            if raw["id"] in seen:
                problems.append(_at(rubric, path + (i, "id"), f"signal id '{raw['id']}' is used twice (ids must be unique)"))
            seen.setdefault(raw["id"], path + (i,))
            for key in ("all", "none", "none_in_issue", "also_in_issue"):
                for j, name in enumerate(raw.get(key, [])):
                    if name not in slots:
                        problems.append(_at(rubric, path + (i, key, j), f"frame '{raw['id']}' names slot '{name}', "
                                                                       f"which {section}.slots does not define"))
            problems += _mind_problems(rubric, data, path + (i,), raw)
    return problems


def _modifier_problems(rubric: Located, data: dict) -> list[Problem]:
    """Each modifier's cue patterns compile under RE2."""
    problems = []
    for name, spec in (data.get("modifiers") or {}).items():
        try:
            compile_modifiers({name: spec}, where="modifiers")
        except PatternError as exc:
            problems.append(_at(rubric, ("modifiers", name), str(exc)))
    return problems


def _mind_problems(rubric: Located, data: dict, path: tuple, raw: dict) -> list[Problem]:
    """A signal or frame minds only modifiers `modifiers:` defines, each named at its line."""
    defined = data.get("modifiers") or {}
    return [_at(rubric, path + ("mind", j), f"'{raw['id']}' minds modifier '{name}', which `modifiers:` does not define")
            for j, name in enumerate(raw.get("mind", [])) if name not in defined]


def _part_problems(rubric: Located, data: dict) -> list[Problem]:
    """Each part is a whole pattern on its own (composed, it is a group: half a bracket would break its users). Only
    RE2's verdict is asked: a part never runs alone, so it needs no literal pre-check (a load checks ~250 parts)."""
    problems = []
    for name, source in (data.get("parts") or {}).items():
        try:
            check_pattern(source)
        except PatternError as exc:
            problems.append(_at(rubric, ("parts", name), f"part '{name}' is not a pattern RE2 can run on its own ({exc})"))
    return problems


def _name_problems(rubric: Located, data: dict) -> list[Problem]:
    """Names the hybrid planner's step-5 gate gives (slot names) must be slots the rubric defines: a misspelt cue
    would otherwise never fire, silently."""
    gate = (data.get("hybrid") or {}).get("high_priority") or {}
    slots = slot_sources(data)
    problems = []
    for key in ("cues", "version_with", "request_cues"):
        for j, name in enumerate(gate.get(key, [])):
            if name not in slots:
                problems.append(_at(rubric, ("hybrid", "high_priority", key, j),
                                    f"hybrid.high_priority.{key} names slot '{name}', which high_priority.slots does not define"))
    if gate.get("version_with") and VERSION_SLOT not in slots:
        problems.append(_at(rubric, ("hybrid", "high_priority", "version_with"),
                            f"hybrid.high_priority.version_with needs the slot '{VERSION_SLOT}', which high_priority.slots does not define"))
    return problems


def _pattern_problems(rubric: Located, data: dict) -> list[Problem]:
    """Parts expand, every signal, slot and frame compiles with unique ids and known names, and its examples hold."""
    r, part_problems = expand(data)
    problems = [_at(rubric, path, message) for path, message in part_problems]
    problems += _part_problems(rubric, data)
    for key in ("environment_heading", "comment_separator"):
        if r["text"].get(key):
            try:
                compile_pattern(r["text"][key])
            except PatternError as exc:
                problems.append(_at(rubric, ("text", key), f"text.{key} is not a pattern RE2 can run ({exc})"))
    seen: dict[str, tuple] = {}
    for path, signals in signal_lists(r):
        for i, raw in enumerate(signals):
            if raw["id"] in seen:
                problems.append(_at(rubric, path + (i, "id"), f"signal id '{raw['id']}' is used twice (ids must be unique)"))
            seen.setdefault(raw["id"], path + (i,))
            try:
                compile_signal({**raw, "mind": ()}, where="/".join(map(str, path)))
            except PatternError as exc:
                problems.append(_at(rubric, path + (i,), str(exc)))
            problems += _mind_problems(rubric, r, path + (i,), raw)
    problems += _modifier_problems(rubric, r)
    vocabularies, slot_problems = _slot_problems(rubric, r)
    problems += slot_problems + _frame_problems(rubric, r, seen)
    if not part_problems:  # an entry that did not expand would fail its examples for that reason alone
        try:
            modifiers = compile_modifiers(r.get("modifiers"), where="modifiers")
        except PatternError:
            modifiers = {}  # its own problem (`_modifier_problems`); entries that mind them are then skipped
        problems += [_at(rubric, path, message)
                     for path, message in example_problems(r, vocabularies["high_priority"], vocabularies, modifiers)]
    return problems + _name_problems(rubric, r)


def floor_problems(labels: Located) -> list[Problem]:
    """The procedure's floor, which no configuration lowers: `forbidden` keeps every reserved label (an empty or
    partial list is refused, not silently completed), no reserved or forbidden label is declared as one the bot
    may add. (The policy enforces the floor in code anyway; this says so to whoever wrote the file.)"""
    data = labels.data
    out = []
    if "forbidden" in data:  # names compared as GitHub compares them: without regard to case
        kept = {label_key(n) for n in data["forbidden"] if isinstance(n, str)}
        missing = sorted(n for n in RESERVED_LABELS if label_key(n) not in kept)
        if missing:
            out.append(_at(labels, ("forbidden",), f"forbidden must keep '{missing[0]}': the procedure reserves it "
                                                   "for people in every queue (the bot never adds it)"))
    forbidden = {label_key(n) for n in (*data.get("forbidden", ()), *RESERVED_LABELS) if isinstance(n, str)}
    for i, spec in enumerate(data["labels"]):
        name = spec.get("name")
        if is_reserved(name):
            out.append(_at(labels, ("labels", i, "name"), f"label '{name}' is reserved for people by the procedure "
                                                          "(label names are compared without regard to case, as "
                                                          "GitHub compares them); the bot may not be given it (as "
                                                          "any role)"))
        elif isinstance(name, str) and label_key(name) in forbidden:
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
    data = canonical(sources.rubric.data, marks)
    try:  # the shared reading merged under it, its entries marked with the shared file's lines; `names:` lists
        data = prepare(data, marks)
    except ReadingError as exc:
        return [_at(Located(data, sources.rubric.file, marks), exc.at, str(exc))]
    rubric = Located(data, sources.rubric.file, marks)
    problems = _schema_problems(rubric, rubric_validator(), "rubric")
    problems += _schema_problems(labels, labels_validator(), "labels")
    if problems:
        return problems  # the cross-references below assume the documents' shape
    r, l = rubric.data, labels.data
    problems += _pattern_problems(rubric, r)
    own_parts = sources.rubric.data.get("parts") if isinstance(sources.rubric.data, dict) else None
    # A layer over another queue (a repository's file over a bundled one) may replace the sections that used a
    # part of the queue below: the use rule is the whole queue's, checked where it is written in one file.
    layered = len({file for file, _ in sources.rubric.marks.values()}) > 1
    problems += [_at(rubric, path, message) for path, message in
                 part_rule_problems(r, set(own_parts) if isinstance(own_parts, dict) else set(),
                                    lambda name: rubric.where(("parts", name))[1] or 0, count_uses=not layered)]
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
    request_ids = {item["id"] for key in ("signals", "frames") for item in r["types"]["request"].get(key, [])}
    for j, name in enumerate(r["types"].get("scorer_defers_to", [])):
        if name not in request_ids:
            problems.append(_at(rubric, ("types", "scorer_defers_to", j),
                                f"types.scorer_defers_to names '{name}', which is no signal or frame of types.request"))
    for kind in TYPE_KINDS:
        if not any(s.role == "type" and s.kind == kind for s in allow.specs):
            problems.append(_at(labels, ("labels",), f"the allowlist has no type label of kind '{kind}', which step 4 adds"))

    wanted = {**DEFAULT_COMMENT_TEMPLATES, **r.get("comments", {})}
    for step, name in wanted.items():
        if name not in sources.templates:
            where = ("comments", step) if step in r.get("comments", {}) else ("comments",)
            problem = _at(rubric, where, "")
            problems.append(Problem(problem.file, problem.line, _missing_template(sources, step, name, problem.file)))
    try:
        build_templates(sources.templates_dir, sources.templates, required=(), files=sources.template_files)
    except TemplatesError as exc:  # it names its own file and line
        file, _, message = str(exc).partition(": ")
        path, _, line = file.rpartition(":") if file.rpartition(":")[2].isdigit() else (file, "", "")
        problems.append(Problem(path, int(line) if line else None, message))
    return problems


def _missing_template(sources: QueueSources, step: str, name: str, file: str) -> str:
    """Where the template should be, in the form the queue is written in: a folder's NAME.md.j2, or one file's
    `templates:` (a whole queue in one file has no folder to name)."""
    said = f"comments.{step} names template '{name}'"
    one_file = sources.templates_dir in (sources.rubric.file, sources.labels.file)
    if one_file:
        return f"{said}, which `templates:` does not define"
    if file != sources.rubric.file:  # a repository file changed `comments:` over a queue folder
        return f"{said}, which neither `templates:` in {file} defines nor {sources.templates_dir} has ({name}{SUFFIX})"
    return f"{said}, but {sources.templates_dir} has no {name}{SUFFIX}"


def prompt_problems(sources: QueueSources) -> list[Problem]:
    """The model planners' prompt, when the queue has one, parses. Not part of `check`, which every run does: a
    rubric run never reads the prompt, and a model run checks it before any issue (triage.planners.check_prompt)."""
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
