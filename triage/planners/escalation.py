"""When the hybrid planner asks the model about step 5: by the issue's class, not by closeness to a threshold.

The high-priority issues the rubric misses score zero: no rule of any criterion matched, because the reporter
stated the criterion in words the rubric does not know. A gate that asks the model only near the threshold never
shows the model those issues. So step 5 is escalated by what kind of issue it is, read from the rubric's own
slot vocabulary (`high_priority.slots`, `triage.text.frames`):
- a bug report (step 4 found no request) in which any criterion's evidence matched at all (a frame or a
  signal, however far below the threshold), or a cue slot occurs (a crash, hang or wrongness word), or a version
  is named together with a failure word (a regression the rubric could not read);
- a request (step 4 found a type) only with a strong cue (`request_cues`): a request is not an emergency, but a
  misread bug report must not hide behind the request's counter-weight. An issue the rubric flags is asked too
  (`confirm_flags`, on by default): the model reads every step-5 decision that would hold a person up, and may
  clear the flag for a reason from its closed list with a quote from the issue. The classes are data, in the
  rubric's `hybrid:` section:

    hybrid:
      high_priority:
        on_evidence: true                 # any criterion matched, below the threshold
        cues: [crash_signal, blocking, wrongness, silent, corruption, internal_assert]
        version_with: [failure]           # a version slot with one of these anywhere in the issue
        request_cues: [crash_signal]
        where: [title, prose, error]
        confirm_flags: true

May import: the standard library, `triage.config`, `triage.core`, `triage.text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from triage.config.parts import VERSION_SLOT
from triage.core.plan import Plan
from triage.core.steps import Analysis, StepResult
from triage.core.vocab import Flag
from triage.text.frames import SlotHits, read_slots


@dataclass(frozen=True)
class HighPriorityGate:
    """The step 5 classes, as the queue's rubric names them. The cues are slot names of the queue's own vocabulary
    (`high_priority.slots`), so none is written here: a queue whose rubric names none escalates on evidence and on
    its flags only."""

    on_evidence: bool = True
    cues: tuple[str, ...] = ()
    version_with: tuple[str, ...] = ()
    request_cues: tuple[str, ...] = ()
    where: tuple[str, ...] = ("title", "prose", "error")  # the document's parts (triage.text.document)
    confirm_flags: bool = True

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any] | None) -> HighPriorityGate:
        raw = raw or {}
        base = cls()
        return cls(
            on_evidence=bool(raw.get("on_evidence", base.on_evidence)),
            cues=tuple(raw.get("cues", base.cues)),
            version_with=tuple(raw.get("version_with", base.version_with)),
            request_cues=tuple(raw.get("request_cues", base.request_cues)),
            where=tuple(raw.get("where", base.where)),
            confirm_flags=bool(raw.get("confirm_flags", base.confirm_flags)),
        )


def _first_cue(hits: SlotHits, slots: tuple[str, ...], where: tuple[str, ...]) -> str | None:
    for slot in slots:
        for location in where:
            text = hits.first(location, slot)
            if text is not None:
                return f"{slot} '{text}' in {location}"
    return None


def step5_escalation(own: Plan | Mapping[int, StepResult], analysis: Analysis, rubric,
                     gate: HighPriorityGate) -> str | None:
    """Why the model should decide step 5 for this issue (None: the rubric's answer stands). `own`: the rubric's
    own result of each step along its own path (or its plan)."""
    by_step = {r.step: r for r in own.steps} if isinstance(own, Plan) else own
    s5, s4 = by_step.get(5), by_step.get(4)
    if s5 is None or s5.skipped:
        return None
    if s5.decision == Flag.FLAG:
        return "confirm the rubric's high-priority flag" if gate.confirm_flags else None
    hits = read_slots(rubric.high_priority.slots, analysis.doc, gate.where)
    if s4 is not None and s4.labels:  # a request
        cue = _first_cue(hits, gate.request_cues, gate.where)
        return f"a request with a high-priority cue ({cue})" if cue else None
    matched = [e for e in s5.evidence if e.points > 0]
    if gate.on_evidence and matched:
        return f"a bug report with high-priority evidence below the threshold ({matched[0].describe()})"
    cue = _first_cue(hits, gate.cues, gate.where)
    if cue:
        return f"a bug report with a high-priority cue ({cue})"
    version = _first_cue(hits, (VERSION_SLOT,), gate.where)
    failure = _first_cue(hits, gate.version_with, gate.where)
    if version and failure:
        return f"a bug report naming a version ({version}) and a failure ({failure})"
    return None
