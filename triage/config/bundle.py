"""The configuration bundle the planner needs: rubric, label allowlist, comment templates.

Defaults are the files shipped with the project: `triage/rubric.yaml`, and `labels.json` and
`templates/` at the top of the repository (inside the wheel they are copied to `triage/_bundled/`).
A fork points at its own files with --rubric/--labels/--templates or the Action's inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from triage.config.labels import LabelsError, LabelSet, load_labels
from triage.config.rubric import Rubric, RubricError, load_rubric
from triage.config.templates import Templates, TemplatesError, load_templates

_PACKAGE = Path(__file__).resolve().parent.parent  # triage/
DEFAULT_QUEUE = "distributed"


class ConfigError(ValueError):
    """Some configuration file is invalid; one line naming the file."""


def bundled_queue(name: str = DEFAULT_QUEUE) -> Path:
    """A queue shipped with the project: `queues/NAME/` in a checkout, `triage/_bundled/queues/NAME/` in a wheel."""
    for candidate in (_PACKAGE / "_bundled" / "queues" / name, _PACKAGE.parent / "queues" / name):
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"bundled queue {name!r} not found (looked in {_PACKAGE / '_bundled' / 'queues'} and {_PACKAGE.parent / 'queues'})")


def default_paths() -> dict[str, Path]:
    queue = bundled_queue()
    return {"rubric": queue / "rubric.yaml", "labels": queue / "labels.json", "templates": queue / "templates"}


@dataclass(frozen=True)
class Bundle:
    rubric: Rubric
    labels: LabelSet
    templates: Templates


def _check_consistency(rubric: Rubric, labels: LabelSet) -> None:
    """The rubric may only name labels that the allowlist has, in the role it uses them for."""
    for topic in rubric.topics:
        if topic.label is not None and labels.role(topic.label) != "module":
            raise ConfigError(
                f"{rubric.path}: topic '{topic.name}' names label '{topic.label}', which is not a module label in the allowlist"
            )
    for route, rule in rubric.routes.items():
        if labels.role(rule.label) != "sub-oncall":
            raise ConfigError(
                f"{rubric.path}: route '{route}' names label '{rule.label}', which is not a sub-oncall label in the allowlist"
            )
    for name in ("feature", "enhancement", "module: performance"):
        if name not in labels.names:
            raise ConfigError(f"{rubric.path}: the allowlist has no '{name}' label, which step 4 adds")


@lru_cache(maxsize=8)
def _load(rubric: Path, labels: Path, templates: Path) -> Bundle:
    try:
        bundle = Bundle(load_rubric(rubric), load_labels(labels), load_templates(templates))
    except (RubricError, LabelsError, TemplatesError) as exc:
        raise ConfigError(str(exc)) from None
    _check_consistency(bundle.rubric, bundle.labels)
    return bundle


def load_bundle(
    rubric: str | Path | None = None,
    labels: str | Path | None = None,
    templates: str | Path | None = None,
) -> Bundle:
    defaults = default_paths()
    return _load(
        Path(rubric or defaults["rubric"]).resolve(),
        Path(labels or defaults["labels"]).resolve(),
        Path(templates or defaults["templates"]).resolve(),
    )
