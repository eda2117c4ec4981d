"""What the routers share: triage one issue through the service.

May import: `triage.action.context`.
"""
from __future__ import annotations

from typing import Any

from triage.action.context import Context, Result, ResultKind


def triage_issue(context: Context, number: int, **options: Any) -> Result:
    # The service re-reads the issue from GitHub: the payload can predate our own earlier writes.
    return Result(ResultKind.ISSUE, issue=context.service.triage(number, **options))
