"""What a planner is: something that proposes a plan for one issue. Proposals are requests, never decisions.

Every planner returns a `Plan` (labels to add, perhaps a template, the outcome it claims, reasons); whatever it
says, `triage.planners.plan_issue` passes it through `triage.core.policy.enforce` before anything is written.
A planner also says what the CLI and the Action need to know about it before and after a run, through this
interface (nobody probes a planner for its parts): whether it asks a model (`needs_prompt`: its queue's prompt is
checked before any issue) and what it spent (`usage_totals`: run totals; each plan carries its own issue's usage,
a failed model call's cost included).

May import: the standard library, `triage.config`, `triage.core`.
"""

from __future__ import annotations

from typing import Any

from triage.config.bundle import Bundle
from triage.core.plan import Plan
from triage.core.snapshot import IssueSnapshot


class Planner:
    """The base every planner derives from (a fork's too)."""

    name: str = ""
    # A planner that asks a model: the queue's prompt template must exist and parse before any issue is planned.
    needs_prompt: bool = False

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        raise NotImplementedError

    def usage_totals(self) -> dict[str, Any] | None:
        """What the run spent so far (issues asked, calls, tokens, estimated cost, fallbacks, latency); None for a
        planner that spends nothing."""
        return None
