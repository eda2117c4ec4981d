"""Who wrote each part of an issue, as the rubric's `said_by` and the model's prompt name them.

- the reporter: the issue's author; the title and the description are theirs, and so is each comment they wrote;
- a maintainer: a comment whose author GitHub calls OWNER, MEMBER or COLLABORATOR of the repository (the comment's
  `author_association`: GitHub's word for the account's relation to the repository, the same in every queue);
- anyone else: every other comment, and a comment whose association is not known (`CONTRIBUTOR`,
  `FIRST_TIME_CONTRIBUTOR`, `NONE`, ...: having sent a pull request once gives no say over another person's issue).

A retraction ("my bad", "works now"), an admission of fault or the reporter's own setup lowers a criterion only in
the words of the first two (`queues/*/rubric.yaml`, `said_by`; `triage.text.speakers`). Comments by bot accounts,
and the bot's own earlier comments, are no evidence at all and are left out here.

May import: the standard library, `triage.config` (templates), `triage.core.snapshot`, `triage.text` (speakers).
"""

from __future__ import annotations

from triage.config.templates import has_marker
from triage.core.snapshot import Comment, IssueSnapshot
from triage.text.speakers import MAINTAINER, OTHER, REPORTER, Speaker

# GitHub's author_association values that make a comment's author one of the repository's maintainers.
MAINTAINER_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


def reporter(snapshot: IssueSnapshot) -> Speaker:
    return Speaker(REPORTER, snapshot.author.casefold())


def speaker(comment: Comment, snapshot: IssueSnapshot, index: int) -> Speaker:
    """Who wrote the comment (the `index`-th of the issue: an author with no login is somebody of their own)."""
    login = comment.author.casefold()
    if login and login == snapshot.author.casefold():
        return reporter(snapshot)
    role = MAINTAINER if comment.association.upper() in MAINTAINER_ASSOCIATIONS else OTHER
    return Speaker(role, login or f"#{index}")


def people_comments(snapshot: IssueSnapshot, template_names=()) -> list[tuple[Comment, Speaker]]:
    """Comments by people, each with its speaker: the repro or the real error often arrives there. Bots (our own
    earlier comments included) add no evidence about the issue."""
    out = []
    for index, comment in enumerate(snapshot.comments):
        if comment.by_bot or any(has_marker(comment.body, name) for name in template_names):
            continue
        out.append((comment, speaker(comment, snapshot, index)))
    return out


def describe(who: Speaker) -> str:
    """A speaker as the model's prompt names them."""
    return {REPORTER: "the reporter", MAINTAINER: "a maintainer"}.get(who.role, "another user")


__all__ = ["MAINTAINER_ASSOCIATIONS", "describe", "people_comments", "reporter", "speaker"]
