"""What the policy took out of a proposal (or changed in it), and why, as records: `Drop(kind, subject, context)`.

The policy records; the edges (a plan's JSON, the CLI's text, the Action's summary) render. Code and tests look at
`kind` and `subject`, never at the wording, so the wording can change without touching a rule.

May import: the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class DropKind(StrEnum):
    NOTHING_TO_DO = "nothing_to_do"  # the proposal claims nothing to do but asked to write
    UNKNOWN_OUTCOME = "unknown_outcome"  # subject: the claimed outcome (treated as an ordinary triage)
    NOT_ALLOWLISTED = "not_allowlisted"  # subject: the label (or forbidden)
    SUB_ONCALL_EXISTS = "sub_oncall_exists"  # subject: the proposed sub-oncall; context: (the issue's,)
    SUB_ONCALLS_REFUSED = "sub_oncalls_refused"  # subject: the proposed sub-oncalls (refusing to guess)
    MODULE_WITHOUT_ROUTE = "module_without_route"  # subject: the module
    MODULE_OF_OTHER_ROUTE = "module_of_other_route"  # subject: the module; context: (its route, the route)
    MODULES_OVER_CAP = "modules_over_cap"  # subject: the module; context: (the queue's cap,)
    ROUTING_NOT_IN_QUEUE = "routing_not_in_queue"  # subject: a routing label on an issue step 1 sent back
    REVIEW_NO_SUB_ONCALL = "review_no_sub_oncall"  # no sub-oncall: sent to review
    REVIEW_NO_MODULE = "review_no_module"  # a classification without module: sent to review
    MARKER_IN_HIGH_PRIORITY = "marker_in_high_priority"  # the marker, in the high-priority flow
    UNKNOWN_TEMPLATE = "unknown_template"  # subject: the comment's template name
    TEMPLATE_OF_NO_STEP = "template_of_no_step"  # subject: a configured template no step posts
    NOT_IN_QUEUE_COMMENT = "not_in_queue_comment"  # subject: step 1's template, without step 1's flow
    ALREADY_POSTED = "already_posted"  # subject: the template, already posted by this bot
    OPTED_OUT = "opted_out"  # subject: the opt-out label the issue carries (labels.json role `skip`)
    LABEL_DISABLED = "label_disabled"  # subject: a type label the queue disabled (labels.json `disabled`)
    BEFORE_CUTOFF = "before_cutoff"  # subject: the template; context: (the not-before cut-off,)


@dataclass(frozen=True)
class Drop:
    kind: DropKind
    subject: Any = None  # what was dropped: a label, a template name, the labels refused; as the proposal said it
    context: tuple[Any, ...] = ()  # what it was weighed against (see each kind)
    # The queue's words (rubric `words:`, set by the policy): what a team label is called, and step 1's "not ours".
    # Wording only: two drops that differ only here are the same drop.
    team: str = field(default="team", compare=False)
    not_in_queue: str = field(default="not in this queue", compare=False)

    def text(self) -> str:
        """The one-line wording of this drop, for the edges (a plan's reasons), in the queue's words."""
        return "policy: " + _WORDING[self.kind](self, self.subject, *self.context)


def _refused(d: Drop, names) -> str:
    return f"refused {len(names)} {d.team}s ({', '.join(names)}): refusing to guess, a human routes it"


_WORDING: dict[DropKind, Callable[..., str]] = {
    DropKind.NOTHING_TO_DO: lambda d, _: "the plan says nothing to do; nothing is written",
    DropKind.UNKNOWN_OUTCOME: lambda d, claim: f"unknown outcome {claim!r}: treated as an ordinary triage",
    DropKind.NOT_ALLOWLISTED: lambda d, name: f"dropped label {name!r} (not in the allowlist)",
    DropKind.SUB_ONCALL_EXISTS: lambda d, name, there: (
        f"dropped {d.team} '{name}': the issue already has '{there}'"),
    DropKind.SUB_ONCALLS_REFUSED: _refused,
    DropKind.MODULE_WITHOUT_ROUTE: lambda d, name: (
        f"dropped '{name}': no route for the issue, so no module is classified"),
    DropKind.MODULE_OF_OTHER_ROUTE: lambda d, name, home, route: (
        f"dropped '{name}': it belongs to route {home}, and the issue is routed {route}"),
    DropKind.MODULES_OVER_CAP: lambda d, name, cap: (
        f"dropped '{name}': at most {cap} module labels are added to one issue (rubric modules.max_labels)"),
    DropKind.ROUTING_NOT_IN_QUEUE: lambda d, name: (
        f"dropped '{name}': an issue flagged as {d.not_in_queue} is left for a human to route"),
    DropKind.REVIEW_NO_SUB_ONCALL: lambda d, _: f"no {d.team} for the issue: sent to review",
    DropKind.REVIEW_NO_MODULE: lambda d, _: "a classification with no module label: sent to review",
    DropKind.MARKER_IN_HIGH_PRIORITY: lambda d, _: (
        "no marker label in the high-priority flow (a human looks first)"),
    DropKind.UNKNOWN_TEMPLATE: lambda d, name: f"dropped comment from unknown template {name!r}",
    DropKind.TEMPLATE_OF_NO_STEP: lambda d, name: f"dropped comment {name!r}: no step of the procedure posts it",
    DropKind.NOT_IN_QUEUE_COMMENT: lambda d, name: (
        f"dropped comment {name!r}: the plan does not flag the issue as {d.not_in_queue}"),
    DropKind.ALREADY_POSTED: lambda d, name: f"'{name}' comment already posted, not posting again",
    DropKind.LABEL_DISABLED: lambda d, name: f"'{name}' is disabled (labels.json disabled): not added",
    DropKind.BEFORE_CUTOFF: lambda d, name, cutoff: (
        f"created before not-before ({cutoff}): labels only, no comment (not-before-mode labels-only)"),
    DropKind.OPTED_OUT: lambda d, name: (
        f"the issue carries '{name}': a person asked the bot to leave it alone; nothing is written"),
}

__all__ = ["Drop", "DropKind"]
