"""Every write one issue gets, as one value: pure ("the issue as read + the policy's plan -> ordered Effects");
the one executor is `triage.service.executor`.

`plan_effects` turns what was decided into an `Effects` value, each effect with its reason, in the order they must
happen:
1. `React`: a reaction on a comment (the re-triage command answered: 👀 when it runs, 😕 when it may not), decided
   after the issue was read again, so an opt-out added since the command was written is seen first;
2. `DeleteTwin`: a twin of the bot's own comment, found in the comments as read: a comment whose author IS the
   bot's account (its login as configured, never inferred from the comment being examined) and whose body is a
   render of the same template for this issue, other than the earliest such comment. Nothing else is ever
   deleted: a person's comment, another bot's, or another workflow's on the same account that is not that render,
   whatever marker it carries; and when the bot's login is not known, nothing at all;
3. `PostComment`: the comment, from a template, claimed first (the executor's claim, triage.service.claim),
carrying its hidden marker, so a re-run sees it and the policy drops it;
4. `AddLabels`: all labels in ONE call, the marker label among them, so an issue never ends up marked as processed
   with half its labels.
The order is what makes a run safe to kill and re-run (in the spirit of PyTorch's apply step): a run killed between
the comment and the labels re-plans the same labels (nothing marks the issue processed yet) and posts no second
comment. Only additive writes exist besides the twin (and the claim's own 👀, the executor's): there is no effect
that removes labels, edits or closes anything.

Nothing edits an `Effects` value after it is made: the policy (`triage.core.policy.enforce`) has already filtered
the plan, with a `Drop` for each removal; the allowlist is checked once more here, the last gate before the
network (`UnsafeWrite`). What the executor could not do (another run's claim, a twin of this run's own comment) is
recorded in what it applied, not written back here.

May import: the standard library, `triage.config`, `triage.core.plan`, `triage.core.snapshot`,
`triage.github.names`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from triage.config.bundle import Bundle
from triage.config.names import is_reserved
from triage.config.templates import comment_marker, has_marker
from triage.core.plan import Plan
from triage.core.snapshot import IssueSnapshot
from triage.github.names import same_body


class UnsafeWrite(ValueError):
    """A plan asked for a label outside the allowlist: refused before anything is sent."""


@dataclass(frozen=True)
class React:
    """A reaction on a comment (`comment_id`): `content` is GitHub's reaction name ("eyes", "confused")."""

    comment_id: int
    content: str
    reason: str = ""


@dataclass(frozen=True)
class DeleteTwin:
    """Delete the bot's own comment `comment_id` (by `author`, the bot's login): a twin of `template`'s comment."""

    comment_id: int
    author: str
    template: str
    reason: str = ""


@dataclass(frozen=True)
class PostComment:
    """Post `body` (the rendered template `template`); `claim_first`: the executor claims it before posting (two
    runs at once post it once)."""

    template: str
    body: str
    reason: str = ""
    claim_first: bool = True

    @property
    def marker(self) -> str:
        return comment_marker(self.template)


@dataclass(frozen=True)
class AddLabels:
    labels: tuple[str, ...]
    reason: str = ""


Effect = React | DeleteTwin | PostComment | AddLabels


@dataclass(frozen=True)
class Effects:
    """One issue's writes, in order (see the module's docstring); `own_login` is the account they are made as."""

    issue: int
    items: tuple[Effect, ...] = ()
    own_login: str | None = None

    def of(self, kind: type) -> tuple:
        return tuple(e for e in self.items if isinstance(e, kind))

    @property
    def comment(self) -> PostComment | None:
        found = self.of(PostComment)
        return found[0] if found else None

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(label for e in self.of(AddLabels) for label in e.labels)

    def __bool__(self) -> bool:
        return bool(self.items)


def plan_effects(number: int, plan: Plan | None, *, bundle: Bundle, snapshot: IssueSnapshot | None = None,
                 own_login: str | None = None, acknowledge: React | None = None) -> Effects:
    """The writes for issue `number`: `acknowledge` (the command's reaction), the twins of the bot's own comments
    in `snapshot`'s comments, and `plan`'s comment and labels (`plan` is the policy's; None: the issue is left).
    UnsafeWrite when the plan names a label outside the allowlist (nothing is written)."""
    items: list[Effect] = [acknowledge] if acknowledge is not None else []
    if snapshot is not None:
        author = snapshot.author
        items += own_twins(snapshot.comments, own_login, bundle.templates.names,
                           lambda name: bundle.templates.render(name, author=author))
    if plan is not None:
        outside = [label for label in plan.add_labels if label not in bundle.labels.names or is_reserved(label)]
        # A reserved label in any spelling (GitHub compares names without case) is outside, listed or not.
        if outside:
            raise UnsafeWrite(f"issue #{number}: refusing to add labels outside the allowlist: {outside}")
        if plan.comment is not None:
            items.append(PostComment(plan.comment.template, plan.comment.body, _comment_reason(plan)))
        if plan.add_labels:
            items.append(AddLabels(tuple(plan.add_labels), f"the plan's labels (outcome {plan.outcome})"))
    return Effects(number, tuple(items), own_login)


def _comment_reason(plan: Plan) -> str:
    name = plan.comment.template if plan.comment is not None else ""
    step = next((s for s in plan.steps if getattr(s, "comment", None) == name), None)
    return step.reason if step is not None else f"the plan's comment '{name}'"


class Seen(Protocol):
    """A comment as read: its id, its author's login and its body (`triage.core.snapshot.Comment` is one)."""

    @property
    def id(self) -> int | None: ...
    @property
    def author(self) -> str: ...
    @property
    def body(self) -> str: ...


def own_twins(comments: Sequence[Seen], own_login: str | None, templates: Iterable[str],
              render: Callable[[str], str]) -> list[DeleteTwin]:
    """Of the bot's own comments (`own_login`'s) that are a render of the same template for this issue
    (`render(name)`: the template's body for this issue, asked only where two of ours carry its marker), every one
    but the earliest (the lowest id: GitHub numbers comments in the order it stores them, so every run keeps the
    same one), for each of `templates`. None when the bot's login is not known: nothing is deleted on a guess."""
    if not own_login:
        return []
    ours = [c for c in comments if c.author == own_login and isinstance(c.id, int)]
    found: list[DeleteTwin] = []
    for name in templates:
        marked = [c for c in ours if has_marker(c.body, name)]
        if len(marked) < 2:
            continue
        text = same_body(render(name))
        twins = sorted((c for c in marked if same_body(c.body) == text), key=lambda c: c.id or 0)
        found += [DeleteTwin(int(c.id or 0), own_login, name,
                             f"a twin of the bot's own '{name}' comment (#{twins[0].id} is kept, the earliest)")
                  for c in twins[1:]]
    return found


__all__ = ["AddLabels", "DeleteTwin", "Effect", "Effects", "PostComment", "React", "UnsafeWrite", "own_twins",
           "plan_effects", "Seen"]
