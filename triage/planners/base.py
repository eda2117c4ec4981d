"""What a planner is: something that proposes a plan for one issue. Proposals are requests, never decisions.

Every planner returns a `Plan` (labels to add, perhaps a template, the outcome it claims, reasons); whatever it
says, `triage.planners.plan_issue` passes it through `triage.core.policy.enforce` before anything is written.

May import: the standard library, `triage.config`, `triage.core`.
"""

from __future__ import annotations

from typing import Protocol

from triage.config.bundle import Bundle
from triage.core.plan import Plan
from triage.core.snapshot import IssueSnapshot


class Planner(Protocol):
    name: str

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan: ...
