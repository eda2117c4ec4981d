"""Loading the rubric: YAML, checked against `rubric.schema.json`, compiled into matchers.

All of the triage knowledge (which words point at which module, which phrasing suggests a
regression, how much a traceback frame counts) is data in the YAML. This module only checks its
shape, compiles its regular expressions, and reports the first problem in one line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from triage.config.parts import expand, slot_pattern, slot_said_by
from triage.config.reading import ReadingError, prepare
from triage.config.route_checks import route_problem
from triage.config.words import canonical
from triage.reading.scorer import ScorerError, TypeScorer, load_scorer

from triage.text.frames import Frame, compile_frame, compile_slots
from triage.text.matching import PatternError, Signal, compile_pattern, compile_signal
from triage.text.modifiers import Modifier, compile_modifiers
from triage.text.patterns import Pattern

DEFAULT_COMMAND = "/ptd-retriage"
DEFAULT_MODULE_MAX_LABELS = 3  # no issue in the dev sets needs more; the rubric's own plans never exceed it
# Step 4's decisions in the procedure's words (the seed's step 4), when a rubric's `types:` gives no `description`:
# what the model planners' prompt states, so the prompt says what the procedure says.
DEFAULT_TYPE_DESCRIPTIONS = {
    "request": "the issue asks for functionality rather than reporting a bug (most issues are bug reports, and a "
               "bug report gets no type label)",
    "feature": "wholly new functionality that does not exist today in any form",
    "enhancement": "an improvement to something that already works (for example a performance optimisation, a "
                   "better error message, or a native backend for an op that already runs through a fallback); "
                   "an issue that says the operation \"currently works\" or \"falls back to\" a slower path asks "
                   "for an enhancement, not a feature",
    "performance": "the enhancement's purpose, as the issue gives it, is speed or memory (making something faster "
                   "or lighter, or an option or case whose point is to save time or memory), not only its "
                   "background",
}
DEFAULT_COMMENT_TEMPLATES = {"not_distributed": "not_distributed", "needs_reproduction": "needs_distributed_reproduction"}


class RubricError(ValueError):
    """The rubric file is unreadable or invalid; the message is one line naming the file."""


@dataclass(frozen=True)
class Topic:
    name: str
    label: str | None
    route: str | None  # None: classifies its module on every route and adds nothing to any route's score
    signals: tuple[Signal, ...]


@dataclass(frozen=True)
class Check:
    """A yes/no decision: the signals' total (plus, for step 4's checks, every frame that holds) must reach
    `min_score`."""

    min_score: float
    signals: tuple[Signal, ...]
    frames: tuple[Frame, ...] = ()  # step 4: frames over `Rubric.type_slots`
    description: str = ""  # what the decision means, in the procedure's words (the model planners' prompt says it)


@dataclass(frozen=True)
class Declared:
    """Step 1: the reporter's own word that no distributed code is involved ("a single process, no process group").
    It sends the issue away unless distributed code is actually run (evidence in `locations`, a script or a
    traceback, above `max_run_score`) or the issue is about distributed code through and through (its evidence
    is `outweighed` times the declaration's score or more)."""

    check: Check
    max_run_score: float
    outweighed: float
    locations: tuple[str, ...]
    # The reporter's experiment: the failure outlives the distributed code ("removed DDP, same assert"). It adds to
    # the declaration and stands whatever code the issue shows (that code is what was removed).
    experiments: tuple[Signal, ...] = ()
    weights: dict[str, float] = field(default_factory=dict)  # its own location weights, over `locations`


@dataclass(frozen=True)
class Criterion:
    """One of step 5's high-priority criteria (crash, silent wrong results, ...): its own evidence."""

    name: str
    description: str
    signals: tuple[Signal, ...]
    frames: tuple[Frame, ...] = ()  # co-occurrence of slot classes in one sentence (`triage.text.frames`)


@dataclass(frozen=True)
class HighPriority:
    """Step 5: the issue's score is its best criterion's score plus the counter-evidence (negative weights, and
    `request_weight` when step 4 finds a request); flagged when it reaches `threshold`, the operating point."""

    threshold: float
    criteria: tuple[Criterion, ...]
    counter: tuple[Signal, ...] = ()
    request_weight: float = 0.0
    slots: dict[str, Pattern] = field(default_factory=dict)  # the frames' vocabulary: slot name -> pattern
    counter_frames: tuple[Frame, ...] = ()
    locations: dict[str, float] = field(default_factory=dict)  # step 5's own location weights, over `locations`
    # Why an issue is not flagged, in the queue's words and order (`no_flag_reasons`; the model planners' prompt).
    no_flag_reasons: dict[str, str] = field(default_factory=dict)
    slot_said_by: dict[str, frozenset[str]] = field(default_factory=dict)  # slots read in some speakers' words only
    unread_review: bool = False  # what the rubric could not read gets the review label when nothing is flagged

    @property
    def frames(self) -> tuple[Frame, ...]:
        return tuple(f for c in self.criteria for f in c.frames) + self.counter_frames


@dataclass(frozen=True)
class RouteRule:
    label: str | None  # None: the route's team adds no sub-oncall label (an issue with none is on this route)
    min_score: float
    min_ratio: float
    signals: tuple[Signal, ...]


@dataclass(frozen=True)
class Rubric:
    path: str
    environment_heading: Pattern  # RE2 (`triage.text.patterns`)
    comment_separator: Pattern | None
    locations: dict[str, float]
    topics: tuple[Topic, ...]
    default_route: str
    precedence: tuple[str, ...]
    existing_module_weight: float
    routes: dict[str, RouteRule]
    stop_after: tuple[str, ...]
    checks_on_every_route: tuple[str, ...]
    not_in_queue: Check  # step 1's trap (the rubric's `not_distributed:`, or `not_in_queue:`)
    max_queue_score: float
    module_high: float
    module_medium: float
    module_min_share: float
    request: Check  # step 4: is the issue a request at all (not a bug report, question or CI/test report)?
    feature: Check  # among requests: wholly new functionality
    enhancement: Check  # among requests: an improvement to something that works
    performance: Check  # an enhancement about speed or memory
    high_priority: HighPriority
    reproduction: Check
    # Which template each commenting step posts: {"not_distributed": ..., "needs_reproduction": ...}.
    comment_templates: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_COMMENT_TEMPLATES))
    command: str = DEFAULT_COMMAND  # the slash command that asks for a re-triage
    # When the hybrid planner asks a model (rubric `hybrid:`; `triage.planners.hybrid.HybridSettings` reads it).
    hybrid: dict = field(default_factory=dict)
    # What reports call step 1's decisions (rubric `words:`; `triage.config.words.queue_words` fills the gaps).
    words: dict = field(default_factory=dict)
    # At most this many module labels added to one issue (rubric `modules.max_labels`): the policy's cap.
    module_max_labels: int = DEFAULT_MODULE_MAX_LABELS
    # Negation, hypothetical, attribution... (rubric `modifiers:`): signals and frames that mind them hold them.
    modifiers: dict[str, Modifier] = field(default_factory=dict)
    declared_not_in_queue: Declared | None = None  # step 1: `not_distributed.declared`
    # Step 1: with no distributed evidence at all, a trap this strong is enough (None: `min_trap_score` always).
    min_trap_score_unopposed: float | None = None
    # Step 4's slot classes (`types.slots`): the vocabulary of the request, feature and enhancement frames.
    type_slots: dict[str, Pattern] = field(default_factory=dict)
    type_slot_said_by: dict[str, frozenset[str]] = field(default_factory=dict)  # `types.slots` with `said_by`
    type_scorer: TypeScorer | None = None  # `types.scorer`: step 4's learned reading (triage.reading)
    scorer_defers_to: tuple[str, ...] = ()  # `types.scorer_defers_to`: counter-evidence the scorer does not overrule

    @property
    def type_frames(self) -> tuple[Frame, ...]:
        return self.request.frames + self.feature.frames + self.enhancement.frames + self.performance.frames

    def route_label(self, route: str) -> str | None:
        return self.routes[route].label

    @property
    def unlabelled_route(self) -> str | None:
        """The route whose team adds no sub-oncall label: an issue without a sub-oncall label is on it."""
        return next((name for name, rule in self.routes.items() if rule.label is None), None)

    @property
    def classifying_routes(self) -> tuple[str, ...]:
        """Routes after which the procedure goes on to classify modules (those that do not stop)."""
        return tuple(name for name in self.routes if name not in self.stop_after)

    @property
    def criteria_descriptions(self) -> dict[str, str]:
        """Step 5's criteria as people read them (id -> `description`), for reports: ids are for rules and tools."""
        return {c.name: c.description for c in self.high_priority.criteria if c.description}

    def route_of_label(self, label: str) -> str | None:
        for route, rule in self.routes.items():
            if rule.label == label:
                return route
        return None


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # here: a compiled queue is loaded without jsonschema

    schema = json.loads((Path(__file__).with_name("rubric.schema.json")).read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def _where(error) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def _regex(source: str, path: str, what: str) -> Pattern:
    """An RE2 pattern (`triage.text.patterns`): it runs on issue text, so its cost must be linear."""
    try:
        return compile_pattern(source)
    except PatternError as exc:
        raise RubricError(f"{path}: {what} is not a pattern RE2 can run ({exc})") from None


def compile_rubric(data: object, path: str, *, checked: bool = False) -> Rubric:
    """The rubric compiled. `checked`: the document is known to fit the schema (`triage.config.validate.check`
    runs before every load that is not a compiled queue's, triage.config.compiled), so it is not walked a second
    time (the walk is most of a load's cost)."""
    data = canonical(data)  # `not_in_queue:` is `not_distributed:` (a queue's rubric need not say another's name)
    try:  # the shared reading merged under it (`reading:`), and `names:` lists made patterns
        data = prepare(data)
    except ReadingError as exc:
        raise RubricError(f"{path}: {'/'.join(map(str, exc.at))}: {exc}") from None
    errors = [] if checked else sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        raise RubricError(f"{path}: invalid rubric at {_where(first)}: {first.message}")
    assert isinstance(data, dict)
    data, part_problems = expand(data)  # `{name}` references composed from `parts:`, once, here
    if part_problems:
        where, message = part_problems[0]
        raise RubricError(f"{path}: {'/'.join(map(str, where))}: {message}")
    seen: set[str] = set()
    try:
        modifiers = compile_modifiers(data.get("modifiers"), where=f"{path}: modifiers")
    except ValueError as exc:  # a cue RE2 cannot run, or a `said_by` that names no role
        raise RubricError(str(exc)) from None

    def signals(raw: list[dict], where: str) -> tuple[Signal, ...]:
        out = []
        for item in raw:
            if item["id"] in seen:
                raise RubricError(f"{path}: signal id '{item['id']}' is used twice (ids must be unique)")
            seen.add(item["id"])
            try:
                out.append(compile_signal(item, where=f"{path}: {where}", modifiers=modifiers))
            except ValueError as exc:
                raise RubricError(str(exc)) from None
        return tuple(out)

    def check(raw: dict, where: str) -> Check:
        return Check(float(raw["min_score"]), signals(raw["signals"], where))

    def frames(raw: list[dict], slots: dict, where: str, vocabulary: str = "high_priority.slots") -> tuple[Frame, ...]:
        out = []
        for item in raw:
            if item["id"] in seen:
                raise RubricError(f"{path}: signal id '{item['id']}' is used twice (ids must be unique)")
            seen.add(item["id"])
            try:
                out.append(compile_frame(item, slots, where=f"{path}: {where}", modifiers=modifiers,
                                         vocabulary=vocabulary))
            except ValueError as exc:
                raise RubricError(str(exc)) from None
        return tuple(out)

    def type_checks(raw: dict) -> tuple[dict[str, Pattern], dict[str, Check], TypeScorer | None]:
        try:
            slots = compile_slots({name: slot_pattern(spec) for name, spec in raw.get("slots", {}).items()},
                                  where=f"{path}: types/slots")
            scorer = load_scorer(raw["scorer"], where=f"{path}: types.scorer") if raw.get("scorer") else None
        except (PatternError, ScorerError) as exc:
            raise RubricError(str(exc)) from None
        checks = {}
        for name in ("request", "feature", "enhancement", "performance"):
            where = f"types/{name}"
            checks[name] = Check(float(raw[name]["min_score"]), signals(raw[name].get("signals", []), where),
                                 frames(raw[name].get("frames", []), slots, where, "types.slots"),
                                 raw[name].get("description", DEFAULT_TYPE_DESCRIPTIONS[name]))
        return slots, checks, scorer

    def high_priority(raw: dict) -> HighPriority:
        counter = raw.get("counter_evidence", {})
        try:
            slots = compile_slots({name: slot_pattern(spec) for name, spec in raw.get("slots", {}).items()},
                                  where=f"{path}: high_priority/slots")
        except PatternError as exc:
            raise RubricError(str(exc)) from None
        where = "high_priority/criteria/"
        return HighPriority(
            threshold=float(raw["threshold"]),
            criteria=tuple(
                Criterion(name, spec.get("description", ""), signals(spec.get("signals", []), where + name),
                          frames(spec.get("frames", []), slots, where + name))
                for name, spec in raw["criteria"].items()
            ),
            counter=signals(counter.get("signals", []), "high_priority/counter_evidence"),
            request_weight=float(counter.get("request_weight", 0)),
            slots=slots,
            counter_frames=frames(counter.get("frames", []), slots, "high_priority/counter_evidence"),
            locations={k: float(v) for k, v in (raw.get("locations") or {}).items()},
            no_flag_reasons={str(k): str(v) for k, v in (raw.get("no_flag_reasons") or {}).items()},
            slot_said_by=slot_said_by(raw.get("slots")),
            unread_review=bool(raw.get("unread_review", False)),
        )

    def declared(raw: dict | None) -> Declared | None:
        if not raw:
            return None
        return Declared(Check(float(raw["min_score"]), signals(raw["signals"], "not_distributed/declared")),
                        float(raw["max_run_score"]), float(raw["outweighed"]), tuple(raw["in"]),
                        signals((raw.get("experiments") or {}).get("signals", []),
                                "not_distributed/declared/experiments"),
                        {k: float(v) for k, v in (raw.get("locations") or {}).items()})

    topics = tuple(
        Topic(name, spec.get("label"), spec.get("route"), signals(spec["signals"], f"topics/{name}"))
        for name, spec in data["topics"].items()
    )
    routing = data["routing"]
    routes = {
        name: RouteRule(
            label=spec.get("label"),
            min_score=float(spec.get("min_score", 0)),
            min_ratio=float(spec.get("min_ratio", 0)),
            signals=signals(spec.get("signals", []), f"routing/routes/{name}"),
        )
        for name, spec in routing["routes"].items()
    }
    text = data["text"]
    nd = data["not_distributed"]
    mods = data["modules"]
    if mods["medium"] > mods["high"]:
        raise RubricError(f"{path}: modules.medium must not exceed modules.high")
    type_slots, types, type_scorer = type_checks(data["types"])
    problem = route_problem(data)
    if problem:
        raise RubricError(f"{path}: {problem[1]}")
    return Rubric(
        path=path,
        environment_heading=_regex(text["environment_heading"], path, "text.environment_heading"),
        comment_separator=_regex(text["comment_separator"], path, "text.comment_separator")
        if text.get("comment_separator")
        else None,
        locations={k: float(v) for k, v in data["locations"].items()},
        topics=topics,
        default_route=routing["default"],
        precedence=tuple(routing["precedence"]),
        existing_module_weight=float(routing["existing_module_weight"]),
        routes=routes,
        stop_after=tuple(routing.get("stop_after", [])),
        checks_on_every_route=tuple(routing.get("checks_on_every_route", [])),
        not_in_queue=Check(float(nd["min_trap_score"]), signals(nd["signals"], "not_distributed")),
        max_queue_score=float(nd["max_distributed_score"]),
        module_high=float(mods["high"]),
        module_medium=float(mods["medium"]),
        module_min_share=float(mods["min_share"]),
        request=types["request"],
        feature=types["feature"],
        enhancement=types["enhancement"],
        performance=types["performance"],
        high_priority=high_priority(data["high_priority"]),
        reproduction=check(data["reproduction"], "reproduction"),
        comment_templates={**DEFAULT_COMMENT_TEMPLATES, **data.get("comments", {})},
        command=data.get("command", DEFAULT_COMMAND),
        hybrid=dict(data.get("hybrid") or {}),
        words=dict(data.get("words") or {}),
        module_max_labels=int(mods.get("max_labels", DEFAULT_MODULE_MAX_LABELS)),
        modifiers=modifiers,
        declared_not_in_queue=declared(nd.get("declared")),
        min_trap_score_unopposed=(float(nd["min_trap_score_unopposed"]) if "min_trap_score_unopposed" in nd
                                  else None),
        type_slots=type_slots,
        type_slot_said_by=slot_said_by(data["types"].get("slots")),
        type_scorer=type_scorer,
        scorer_defers_to=tuple(data["types"].get("scorer_defers_to", ())),
    )
