"""The queue label: an issue labelled with it, or opened/reopened carrying it, is triaged. When the label is known
before any configuration is read (the `queue-label` input names it, or no `config` input: the bundled queue's), an
event for another label or an issue without it is answered from the payload alone: no queue is loaded and nothing
is read. Otherwise (action.yml's default: the configuration's label) the configuration is read first.

May import: `triage.action.context`, `triage.action.routing`, `triage.action.settings`, `triage.action.routers.*`,
and inside functions `triage.service.queue_check`.
"""
from __future__ import annotations

from triage.action.context import Context, Event, Result, ignored
from triage.action.routers.common import triage_issue
from triage.action.routing import Router
from triage.action.settings import ActionError

router = Router()


def _label_name(payload) -> str:
    label = payload.get("label")
    if not isinstance(label, dict) or not isinstance(label.get("name"), str):
        raise ActionError("malformed event payload: issues.labeled without label.name")
    return label["name"]


def _check_labeled(event: Event) -> Result | None:
    event.issue()  # a malformed payload fails before anything is read
    name = _label_name(event.payload)
    wanted = event.settings.known_queue_label  # when it is known, no configuration is needed to say "not ours"
    if wanted and name != wanted:
        return _other_label(name, wanted)
    return None


def _configured_labeled(context: Context) -> Result | None:
    name = _label_name(context.payload)
    if name != context.queue_label:
        return _other_label(name, context.queue_label)
    return None


def _other_label(name: str, wanted: str) -> Result:
    """Ignored: not the queue label. A label that nearly is (another case or spacing: the repository's own label,
    since the event added it) is a misspelt queue label, said as a warning: else every event is dropped quietly."""
    from triage.service.queue_check import near_miss, near_miss_line

    result = ignored(f"label {name!r} is not the queue label {wanted!r}")
    if near_miss(wanted, [name]):
        result.warning = near_miss_line(wanted, name, "this event added the label")
    return result


@router.on("issues.labeled", check=_check_labeled, configured=_configured_labeled)
def on_issue_labeled(context: Context) -> Result:
    return triage_issue(context, context.issue().number)


def _check_opened(event: Event) -> Result | None:
    snapshot = event.issue()  # a malformed payload fails before anything is read
    return _outside(snapshot, event.settings.known_queue_label)


def _outside(snapshot, label: str) -> Result | None:
    """The issue does not carry the queue label (`label`, empty when only the configuration knows it)."""
    if label and not snapshot.has_label(label):
        return outside_result(snapshot, label, f"issue #{snapshot.number} does not have the queue label {label!r}")
    return None


def outside_result(snapshot, label: str, why: str) -> Result:
    """Ignored: the issue is not in the queue; with a warning when one of its labels nearly is the queue label."""
    from triage.service.queue_check import near_miss, near_miss_line

    result = ignored(why)
    close = near_miss(label, snapshot.labels)
    if close:
        result.warning = near_miss_line(label, close, f"issue #{snapshot.number} carries the label")
    return result


def _configured_opened(context: Context) -> Result | None:
    return _outside(context.issue(), context.queue_label)


@router.on("issues.opened", "issues.reopened", check=_check_opened, configured=_configured_opened)
def on_issue_opened(context: Context) -> Result:
    return triage_issue(context, context.issue().number)
