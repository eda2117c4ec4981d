"""A stand-in for the rubric's `unread` note (what the rubric's reading of an issue could not read), for tests run
before that reading exists: `install()` wraps `triage.core.steps.analyse` so the analysis of the issues named in
the environment variable PTD_TEST_UNREAD (JSON: issue number -> note) carries `unread`. Once the analysis has an
`unread` field of its own, `install()` changes nothing and the real reading decides.

Used in a subprocess (`python -c "import unread_standin; unread_standin.install(); ..."`), so the CLI under test is
the real one. Imports: the standard library and `triage.core.steps`."""
from __future__ import annotations

import dataclasses
import json
import os

from triage.core import steps

VARIABLE = "PTD_TEST_UNREAD"


def has_own_reading() -> bool:
    return any(f.name == "unread" for f in dataclasses.fields(steps.Analysis))


@dataclasses.dataclass(frozen=True)
class _Read(steps.Analysis):
    unread: tuple[str, ...] = ()


def install() -> None:
    if has_own_reading():
        return
    notes = {int(k): tuple(v) if isinstance(v, list) else (v,) for k, v in
             json.loads(os.environ.get(VARIABLE) or "{}").items()}
    analyse = steps.analyse

    def analyse_with_note(snapshot, *args, **kwargs):
        analysis = analyse(snapshot, *args, **kwargs)
        note = notes.get(snapshot.number)
        if not note:
            return analysis
        values = {f.name: getattr(analysis, f.name) for f in dataclasses.fields(analysis)}
        return _Read(**values, unread=note)

    steps.analyse = analyse_with_note
