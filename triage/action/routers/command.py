"""The re-triage command: a comment whose line is the configured command word, by someone with triage rights,
re-triages the issue (forced). The cheap check answers most comments from the payload alone: a pull request, a
bot's comment, a comment with no line starting with "/" needs neither the configuration nor a request.

May import: `triage.action.command`, `triage.action.context`, `triage.action.routing`, `triage.action.settings`,
`triage.action.routers.*`, and inside functions `triage.core.effects`, `triage.http.errors`,
`triage.service.request`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from triage.action.command import has_command, is_bot, role_allows_retriage
from triage.action.context import Context, Event, Result, ignored
from triage.action.routers.common import triage_issue
from triage.action.routers.queue_label import outside_result
from triage.action.routing import Router
from triage.action.settings import ActionError

OWN_COMMENT_MARK = "<!-- ptd-triage:"  # every comment we post carries it (triage.config.templates.comment_marker)

router = Router()


def _comment(payload: Mapping[str, Any]) -> dict:
    comment = payload.get("comment")
    if not isinstance(comment, dict) or not isinstance(comment.get("user"), dict) \
            or not isinstance(comment.get("id"), int):
        raise ActionError("malformed event payload: issue_comment without comment.id and comment.user")
    return comment


def _body(comment: dict) -> str:
    body = comment.get("body")
    return body if isinstance(body, str) else ""


def _check(event: Event) -> Result | None:
    comment = _comment(event.payload)
    body = _body(comment)
    snapshot = event.issue()
    login = str(comment["user"].get("login") or "")
    if snapshot.is_pull_request:
        return ignored(f"comment on pull request #{snapshot.number}: ptd-triage only triages issues")
    if is_bot(comment["user"]) or OWN_COMMENT_MARK in body:
        return ignored(f"comment by bot {login!r} (bots, including ptd-triage, cannot run commands)")
    if not may_hold_a_command(body):  # most comments: no line starts with "/", so no config read, no scan
        return ignored("comment has no command line (no line starts with '/')")
    wanted = event.settings.known_queue_label  # when it is known, an issue outside the queue needs no config
    if wanted and not snapshot.has_label(wanted):
        return outside_result(snapshot, wanted, f"comment on #{snapshot.number}, which does not have the queue "
                                                f"label {wanted!r}")
    return None


def _configured(context: Context) -> Result | None:
    body = _body(_comment(context.payload))
    snapshot = context.issue()
    word = context.command
    if word not in body:
        return ignored(f"comment has no line '{word}'")
    if not snapshot.has_label(context.queue_label):
        return outside_result(snapshot, context.queue_label, f"{word} on #{snapshot.number}, which does not have "
                                                             f"the queue label {context.queue_label!r}")
    if not has_command(body, word):
        return ignored(f"comment on #{snapshot.number} has no line '{word}'")
    return None


def _allowed(context: Context) -> Result | None:
    """Before anything is planned (no planner, no model client, for a command that is refused): the payload's
    opt-out, then the commenter's role. The run's own re-read of the issue checks the opt-out again, before its
    reaction (triage.service.triager)."""
    comment = _comment(context.payload)
    number = context.issue().number
    login = str(comment["user"].get("login") or "")
    word = context.command
    labels = context.bundle.labels
    if labels.opted_out(context.issue().labels):  # before any request: the command is answered, not run
        return refuse(context, comment, f"{word} by {login!r} on #{number}, which carries '{labels.skip}': a "
                                        f"person asked the bot to leave it alone; remove the label, then run "
                                        f"{word} again.")
    allowed, role = role_allows_retriage(permission_of(context, login))
    if not allowed:
        return refuse(context, comment, f"{word} by {login!r}, whose role is {role!r}; "
                                        f"it needs triage, write, maintain or admin.")
    context.notes.append(f"{word} by {login} ({role})")
    return None


@router.on("issue_comment.created", check=_check, configured=_configured, allowed=_allowed)
def on_comment_created(context: Context) -> Result:
    comment = _comment(context.payload)
    number = context.issue().number
    from triage.service.request import Answer

    # Re-read, then answered: 👀 on the command's comment once the issue as it is now is read (😕 if it opted out
    # since the comment was written), in the same effects as the issue's writes.
    answer = Answer(comment["id"], running=ACKNOWLEDGED_REACTION, refused=REFUSED_REACTION)
    result = triage_issue(context, number, force=True, answer=answer)
    issue = result.issue
    if issue is not None and issue.left and issue.opted_out:
        skip = context.bundle.labels.skip
        return ignored(f"{context.command} on #{number}, which carries '{skip}' now: a person asked the bot to "
                       f"leave it alone; remove the label, then run {context.command} again. "
                       + _answered(issue.applied.reactions, issue.dry_run))
    result.notes.extend(context.notes)
    return result


def _answered(reactions: tuple[str, ...], dry_run: bool) -> str:
    if REFUSED_REACTION in reactions:
        return f"Answered with a {REFUSED_REACTION!r} reaction on the comment; nothing else written."
    return "Nothing written (dry run)." if dry_run else "Nothing written."


# A refused command is answered with this reaction on the command's comment, and nothing else: the person sees that
# the bot read it and did not act (the README says who may run it). A reaction cannot spam: GitHub keeps at most
# one of each kind per account on a comment (a second POST answers 200 and adds nothing), so a re-run or a
# redelivered event adds nothing; it notifies nobody, where a reply would notify every subscriber of the issue each
# time someone without the role tries; and it does not say in public what role a person has.
REFUSED_REACTION = "confused"
ACKNOWLEDGED_REACTION = "eyes"  # the command runs: once the issue as it is now is read


def refuse(context: Context, comment: dict, why: str) -> Result:
    """The command answered with 😕 on its comment, through the run's executor (a dry run writes nothing)."""
    from triage.core.effects import Effects, React
    from triage.http.errors import HTTPError

    effects = Effects(context.issue().number, (React(comment["id"], REFUSED_REACTION, why),))
    try:
        applied = context.executor.execute(effects)
    except HTTPError as exc:  # a refused stranger's command is not worth a failed run (e.g. a read-only token)
        return ignored(f"{why} The {REFUSED_REACTION!r} reaction could not be added ({exc}); nothing written.")
    return ignored(f"{why} {_answered(applied.reactions, applied.dry_run)}")


def may_hold_a_command(body: str) -> bool:
    """Cheap and linear: a command is a line of its own that starts with "/" (the configuration's command word
    always does), so a comment with no such line needs neither the configuration nor the markdown scanner."""
    return any(line.lstrip(" \t").startswith("/") for line in body[:65536].splitlines())


def permission_of(context: Context, login: str) -> Mapping[str, Any]:
    from triage.http.errors import NotFound

    try:
        return context.client.get_permission(context.settings.repo, login)
    except NotFound:  # not a collaborator GitHub knows of: no role at all
        return {"permission": "none", "role_name": "none"}
