"""The `ReplayPlanner`: proposes, for an issue, the plan a `plan` job saved (the Action's plan/apply split).

The apply job has write access and no model credentials; it re-reads each issue and hands this planner to the
triage service, so the saved proposal passes through `plan_issue` -> `enforce` against the issue as it is NOW (a
person may have labelled it since, or our own earlier run may have). The saved file is treated as untrusted input:
its shape is checked, and whatever it asks for is only a proposal to the policy.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from triage.config.bundle import Bundle
from triage.config.safe_yaml import DocumentError, load_json, read_bounded
from triage.core.plan import OUTCOMES, Plan, PlannedComment
from triage.core.snapshot import IssueSnapshot
from triage.planners.base import Planner

PLANS_VERSION = 1
MAX_PLANS = 1000
# What a plan job writes: at most MAX_PLANS plans of a few hundred bytes each, nested 4 deep (usage's counts).
MAX_PLANS_BYTES = 8_000_000
MAX_PLANS_DEPTH = 8


class PlansFileError(ValueError):
    """The plans file is unreadable or malformed; one line naming the file."""


def _proposal(raw: Any, where: str) -> Plan:
    if not isinstance(raw, dict):
        raise PlansFileError(f"{where}: a plan must be a JSON object")
    number = raw.get("issue")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise PlansFileError(f"{where}: 'issue' must be a positive integer")
    labels = raw.get("add_labels", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise PlansFileError(f"{where}: 'add_labels' must be a list of strings")
    comment = raw.get("comment")
    if comment is not None and not (isinstance(comment, dict) and isinstance(comment.get("template"), str)):
        raise PlansFileError(f"{where}: 'comment' must be null or an object with a 'template'")
    outcome = raw.get("outcome")
    if outcome not in OUTCOMES:
        raise PlansFileError(f"{where}: 'outcome' must be one of {', '.join(OUTCOMES)}")
    reasons = raw.get("reasons", [])
    reasons = [str(r)[:500] for r in reasons] if isinstance(reasons, list) else []
    modules = raw.get("modules", [])
    return Plan(issue=number, add_labels=tuple(labels),
                comment=PlannedComment(comment["template"], "") if comment else None,  # the policy re-renders it
                outcome=outcome,
                modules=tuple(m for m in modules if isinstance(m, str)) if isinstance(modules, list) else (),
                reasons=tuple(reasons), planner=str(raw.get("planner") or "rubric")[:40],
                usage=raw.get("usage") if isinstance(raw.get("usage"), dict) else None)


def read_plans(path: str | Path) -> dict[str, Any]:
    """{"plans": {number: Plan}, "updated_at": {number: str}, "repo": str} from a plans file. `updated_at` is
    GitHub's `updated_at` of the issue as the plan job read it ("" when the file does not say). A `forced` key is
    read from no plan: whether a run may force is the apply run's own event and inputs (issue 20)."""
    try:
        # Refused by its size before a byte is read (a 200 MB file is not read whole to be refused).
        document = load_json(read_bounded(Path(path), MAX_PLANS_BYTES), str(path), max_bytes=MAX_PLANS_BYTES,
                             max_depth=MAX_PLANS_DEPTH)
    except OSError as exc:
        raise PlansFileError(f"{path}: cannot read the plans file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise PlansFileError(f"{path}: the plans file is not UTF-8 text") from None
    except DocumentError as exc:
        raise PlansFileError(f"{exc} (the plans file)") from None
    if not isinstance(document, dict) or document.get("version") != PLANS_VERSION:
        raise PlansFileError(f"{path}: not a ptd-triage plans file (version {PLANS_VERSION})")
    entries = document.get("plans")
    if not isinstance(entries, list) or len(entries) > MAX_PLANS:
        raise PlansFileError(f"{path}: 'plans' must be a list of at most {MAX_PLANS} plans")
    plans, updated_at = {}, {}
    for index, raw in enumerate(entries):
        plan = _proposal(raw, f"{path}: plans[{index}]")
        stamp = raw.get("issue_updated_at", "")
        if not isinstance(stamp, str) or len(stamp) > 40:
            raise PlansFileError(f"{path}: plans[{index}]: 'issue_updated_at' must be a timestamp string")
        plans[plan.issue] = plan
        updated_at[plan.issue] = stamp
    return {"plans": plans, "updated_at": updated_at, "repo": str(document.get("repo") or "")}


class ReplayPlanner(Planner):
    """Returns the saved proposal for an issue number; an issue with none gets "nothing to do"."""

    name = "replay"

    def __init__(self, plans: dict[int, Plan]):
        self.plans = dict(plans)

    def propose(self, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Plan:
        saved = self.plans.get(snapshot.number)
        if saved is None:
            return Plan(issue=snapshot.number, planner=self.name,
                        reasons=("apply: no saved plan for this issue; nothing written",))
        if bundle.labels.marker in snapshot.labels and not force:
            return Plan(issue=snapshot.number, planner=saved.planner,
                        reasons=(f"apply: already processed ('{bundle.labels.marker}' present since the plan was "
                                 "made); nothing written",))
        again = "apply: the saved plan, checked again against the issue as it is now"
        return saved.with_(reasons=tuple(saved.reasons) + (again,))


__all__ = ["MAX_PLANS", "PLANS_VERSION", "PlansFileError", "ReplayPlanner", "read_plans"]
