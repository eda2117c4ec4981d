"""The label allowlist (labels.json): which labels the bot may add, and the role each plays."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from triage.config.names import LABEL_NAME_PATTERN, RESERVED_LABELS, label_key, label_name_problem


class Role(StrEnum):
    """The part a label plays in the procedure (labels.json's `role`). A str: JSON and comparisons see the name."""

    SUB_ONCALL = "sub-oncall"
    MODULE = "module"
    TYPE = "type"
    MARKER = "marker"
    REVIEW = "review"
    REPRODUCTION = "reproduction"
    SKIP = "skip"  # the opt-out label: people add it, the bot then writes nothing to the issue (never adds it)


ROLES = tuple(r.value for r in Role)
# The opt-out label when labels.json gives none the role `skip`: every queue honours one.
DEFAULT_SKIP_LABEL = "ptd-bot-skip"
TYPE_KINDS = ("feature", "enhancement", "performance")
# Allowlists written before `kind` existed name PyTorch's type labels; their kind follows from the name.
_LEGACY_KINDS = {"feature": "feature", "enhancement": "enhancement", "module: performance": "performance"}

_LABEL_NAME = {"type": "string", "pattern": LABEL_NAME_PATTERN}
_ROUTE_NAME = {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"}


_SCHEMA = {
    "type": "object",
    "required": ["queue_label", "labels"],
    "properties": {
        "queue_label": _LABEL_NAME,
        "forbidden": {"type": "array", "items": _LABEL_NAME},
        # Type labels (role `type`) the bot does not add: step 4 still reads the issue and says what it found, but
        # writes no label the queue's people never use (what shadow's report suggests from their history).
        "disabled": {"type": "array", "items": _LABEL_NAME, "uniqueItems": True},
        # How measuring reads the labels people gave (`triage.evaluation.gold`); the bot never applies these.
        "gold": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                # The routes a gold `either` accepts: an issue whose module labels point at several of them.
                "either": {"type": "array", "items": _ROUTE_NAME, "minItems": 2, "uniqueItems": True},
                # Module labels outside the allowlist that people give, and the route each points at.
                "module_routes": {"type": "object", "propertyNames": _LABEL_NAME, "additionalProperties": _ROUTE_NAME},
            },
        },
        "labels": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "role", "description", "color"],
                "properties": {
                    "name": _LABEL_NAME,
                    "role": {"enum": list(ROLES)},
                    # A module's route (a rubric route name); absent or null: the module is classified on every route.
                    "route": {"type": ["string", "null"], "pattern": _ROUTE_NAME["pattern"]},
                    # For `role: type`: which of step 4's decisions adds it (performance goes with enhancement).
                    "kind": {"enum": list(TYPE_KINDS)},
                    "description": {"type": "string", "maxLength": 100},
                    "color": {"type": "string", "pattern": "^[0-9a-fA-F]{6}$"},
                },
            },
        },
    },
}


class LabelsError(ValueError):
    """labels.json is unreadable or invalid; one line naming the file. `detail` is the message without the file,
    `at` the key paths of what is wrong (most telling first), so that a layered configuration can name the file
    and line that made it so (`triage.config.validate`), not the base it was layered over."""

    def __init__(self, path: str, detail: str, at: tuple[tuple, ...] = ((),)):
        super().__init__(f"{path}: {detail}")
        self.detail, self.at = detail, at


@dataclass(frozen=True)
class LabelSpec:
    name: str
    role: Role
    route: str | None
    description: str
    color: str
    kind: str | None = None  # role "type" only: feature, enhancement or performance


@dataclass(frozen=True)
class LabelSet:
    queue_label: str
    specs: tuple[LabelSpec, ...]
    forbidden_names: frozenset[str] = RESERVED_LABELS
    # labels.json `gold`: how measuring reads the labels people gave (see the schema above).
    either_routes: tuple[str, ...] = ()
    # labels.json `disabled`: listed type labels the bot does not add (the policy drops them; see the schema above).
    disabled: frozenset[str] = frozenset()
    gold_module_routes: tuple[tuple[str, str], ...] = ()

    @property
    def names(self) -> frozenset[str]:
        """The allowlist: every label the bot may add. The opt-out label (role `skip`) is listed in the file, so
        that `labels sync` creates it, but only people add it: it is not in the allowlist."""
        return frozenset(s.name for s in self.specs if s.role != Role.SKIP)

    def role(self, name: str) -> str | None:
        for spec in self.specs:
            if spec.name == name:
                return spec.role
        return None

    def route(self, name: str) -> str | None:
        for spec in self.specs:
            if spec.name == name:
                return spec.route
        return None

    def with_role(self, role: str) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs if s.role == role)

    def _single(self, role: str) -> str:
        return self.with_role(role)[0]

    @property
    def forbidden(self) -> frozenset[str]:
        """Labels the bot must never add, even if listed: the reserved ones (`high priority` is for a human to
        confirm) whatever the file says, and the file's own `forbidden`."""
        return self.forbidden_names | RESERVED_LABELS

    def is_forbidden(self, name: object) -> bool:
        """Whether the bot must never add `name`, compared as GitHub compares label names (without regard to case):
        `High Priority` is `high priority`."""
        return isinstance(name, str) and label_key(name) in {label_key(n) for n in self.forbidden}

    @property
    def marker(self) -> str:
        return self._single(Role.MARKER)

    @property
    def skip(self) -> str:
        """The opt-out label (role `skip`; `ptd-bot-skip` when the file names none): an issue that carries it gets
        no write from any event, command, sweep or dispatch."""
        found = self.with_role(Role.SKIP)
        return found[0] if found else DEFAULT_SKIP_LABEL

    def opted_out(self, issue_labels) -> bool:
        """Whether an issue's labels include the opt-out label. Compared as GitHub compares label names (without
        regard to case): an opt-out must never be missed for its spelling."""
        skip = self.skip.casefold()
        return any(isinstance(name, str) and name.casefold() == skip for name in issue_labels)

    @property
    def review(self) -> str:
        return self._single(Role.REVIEW)

    @property
    def reproduction(self) -> str:
        return self._single(Role.REPRODUCTION)

    def _kind(self, kind: str) -> str:
        for spec in self.specs:
            if spec.role == Role.TYPE and spec.kind == kind:
                return spec.name
        raise KeyError(kind)

    @property
    def feature(self) -> str:
        return self._kind("feature")

    @property
    def enhancement(self) -> str:
        return self._kind("enhancement")

    @property
    def performance(self) -> str:
        return self._kind("performance")

    @property
    def sub_oncalls(self) -> tuple[str, ...]:
        return self.with_role(Role.SUB_ONCALL)


def parse_labels(data: object, path: str, *, checked: bool = False) -> LabelSet:
    """`checked`: the data is known to fit the schema (a compiled queue, triage.config.compiled)."""
    errors = [] if checked else schema_errors(data)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        message = errors[0].message
        if errors[0].validator == "pattern" and errors[0].validator_value == LABEL_NAME_PATTERN:
            message = f"label name {errors[0].instance!r} {label_name_problem(errors[0].instance)}"
        raise LabelsError(path, f"invalid labels file at {where}: {message}", (tuple(errors[0].absolute_path),))
    assert isinstance(data, dict)
    specs = tuple(
        LabelSpec(i["name"], Role(i["role"]), i.get("route"), i["description"], i["color"],
                  i.get("kind") or (_LEGACY_KINDS.get(i["name"]) if i["role"] == "type" else None)) for i in data["labels"]
    )
    # Compared as GitHub compares label names: `Triage Review` and `triage review` are one label there.
    names = [label_key(s.name) for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        twice = [i for i, n in enumerate(names) if n == duplicates[0]]
        raise LabelsError(path, f"label '{specs[twice[-1]].name}' is listed twice (label names are compared "
                                "without regard to case, as GitHub compares them)",
                          tuple(("labels", i, "name") for i in reversed(twice)))
    if label_key(data["queue_label"]) in names:
        raise LabelsError(path, f"the queue label '{data['queue_label']}' must not be in the allowlist",
                          (("queue_label",), ("labels", names.index(label_key(data["queue_label"])), "name")))
    for role in (Role.MARKER, Role.REVIEW, Role.REPRODUCTION):
        having = [i for i, s in enumerate(specs) if s.role == role]
        if len(having) != 1:
            # Two: the second is the one to look at. None: the list, or an entry that took the role's label.
            at = tuple(("labels", i, "role") for i in reversed(having)) if having else (("labels",),) + tuple(
                ("labels", i) for i in range(len(specs)))
            raise LabelsError(path, f"exactly one label must have role '{role}' (found {len(having)})", at)
    skips = [i for i, s in enumerate(specs) if s.role == Role.SKIP]
    if len(skips) > 1:
        raise LabelsError(path, f"at most one label may have role '{Role.SKIP}' (found {len(skips)})",
                          tuple(("labels", i, "role") for i in reversed(skips)))
    for kind in TYPE_KINDS:
        having = [i for i, s in enumerate(specs) if s.role == Role.TYPE and s.kind == kind]
        if len(having) > 1:
            raise LabelsError(path, f"at most one label of role 'type' may have kind '{kind}' (found {len(having)})",
                              tuple(("labels", i, "kind") for i in reversed(having)))
    # The reserved labels are forbidden whatever the file says (and a forbidden label that is also listed stays
    # forbidden): a misconfigured fork must not be able to give the bot `high priority`; `ptd-triage validate`
    # reports both contradictions (triage.config.validate.floor_problems).
    forbidden = frozenset(data.get("forbidden", sorted(RESERVED_LABELS))) | RESERVED_LABELS
    roles = {s.name: s.role for s in specs}
    for i, name in enumerate(data.get("disabled", ())):
        if roles.get(name) != Role.TYPE:
            what = f"a label of role '{roles[name]}'" if name in roles else "not a listed label"
            raise LabelsError(path, f"disabled names '{name}', {what}: only a type label (role 'type') can be disabled",
                              (("disabled", i),))
    gold = data.get("gold", {})
    return LabelSet(queue_label=data["queue_label"], specs=specs, forbidden_names=forbidden,
                    disabled=frozenset(data.get("disabled", ())),
                    either_routes=tuple(gold.get("either", ())),
                    gold_module_routes=tuple(gold.get("module_routes", {}).items()))


def validator():
    from jsonschema import Draft202012Validator  # here: a compiled queue is loaded without jsonschema

    return Draft202012Validator(_SCHEMA)


def schema_errors(data: object) -> list:
    return sorted(validator().iter_errors(data), key=lambda e: list(e.absolute_path))
