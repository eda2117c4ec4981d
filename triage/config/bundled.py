"""Where the bundled queues are, and the default queue's label, with the standard library only: the Action's cheap
check (is this event's label the queue label?) answers from it for a run with no `config` input, without loading
a queue.

May import: the standard library.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # triage/
DEFAULT_QUEUE = "distributed"
# `queues/` in a checkout; in a wheel, `triage/_bundled/queues/` (pyproject's force-include).
ROOTS = (_PACKAGE / "_bundled" / "queues", _PACKAGE.parent / "queues")


def bundled_folder(name: str) -> Path | None:
    """The bundled queue `name`'s folder, or None when no bundled queue has that name."""
    for root in ROOTS:
        if (root / name).is_dir():
            return root / name
    return None


def bundled_names() -> list[str]:
    found: set[str] = set()
    for root in ROOTS:
        if root.is_dir():
            found.update(p.name for p in root.iterdir() if (p / "rubric.yaml").is_file())
    return sorted(found)


@lru_cache(maxsize=1)
def default_queue_label() -> str:
    """The bundled default queue's `queue_label` (its labels.json, read as JSON: no schema, no queue loaded). Empty
    when it cannot be read: then the configuration, loaded as a whole, decides."""
    folder = bundled_folder(DEFAULT_QUEUE)
    try:
        label = json.loads((folder / "labels.json").read_text(encoding="utf-8")).get("queue_label") if folder else ""
    except (OSError, ValueError, AttributeError):
        return ""
    return label if isinstance(label, str) else ""
