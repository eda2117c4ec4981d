"""What the routers share: triage one issue through the service.

May import: `triage.action.context`.
"""
from __future__ import annotations

from triage.action.context import Context, Result


def triage_issue(context: Context, number: int, **options) -> Result:
    # The service re-reads the issue from GitHub: the payload can predate our own earlier writes.
    return Result("issue", issue=context.triager.triage(number, **options))
