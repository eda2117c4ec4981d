"""The comment claim: two runs at once on one issue (a sweep and an event run, which cannot share a concurrency
group, or two event runs of a workflow without one) post a template once.

GitHub has no compare-and-set for comments, but it has one for reactions: `POST /issues/{n}/reactions` answers 201
when it creates the reaction and 200 when this account had already added it, and of two requests at once only one
can be the creator. But the token's account (`github-actions[bot]`, shared by every workflow of the repository)
keeps ONE 👀 per issue: once it has reacted, from an earlier comment's claim or from any other workflow, every
later claim answers 200. So a 200 does not mean "another run is posting", only "the account's 👀 is there":
whether a run may still be posting under it is what the rest decides.

1. Claim: react 👀 to the issue. 201: this run holds the claim; it posts.
2. 200: the account's 👀 is there. Its age says whether a run may still be posting under it: younger than
   CLAIM_FRESH_SECONDS, read the comments at 0 and POLL_AT seconds until the template's marker shows; older, read
   them once (a run posts within a second or two of its claim). The marker there: another run posted; this one
   drops its comment and writes only its labels.
3. No marker: nobody is posting under that 👀 (an earlier comment's claim, another workflow's, a run killed after
   its claim). Take it over: delete THAT reaction, by its id, and claim again. By id, so of two runs taking over at
   once one deletes it and the other gets 404; both claim again, GitHub creates one new 👀 (201) and the other run
   finds it young and waits for its comment as in 2. A 👀 a run has just made has a new id: a run that looked at
   the old one never deletes it.
   A run that wins after taking over reads the comments once more before posting: the holder it took over from
   may have been slow, not dead, and posted meanwhile.
4. No claim after CLAIM_ROUNDS and no comment: post anyway (a re-run must complete a killed run's work).
5. After posting, every run reads the comments once (`settle`): of the bot's own renders of the template (its
   configured login's comments with the same body, `triage.core.effects.own_twins`) it keeps the earliest and
   deletes the others. Of two runs that both posted, the one whose read comes later sees both, so at most one
   comment stays, whatever the timing (a holder slower than a loser's wait, a stalled runner). Any run that reads
   the comments later does the same (its effects' `DeleteTwin`s), which finishes a run killed between its post and
   its read. This is the safety net, not the mechanism: the claim keeps two runs from posting at all, save when a
   holder is slower than CLAIM_WAIT_SECONDS between its claim and its post. Nothing that is not provably the
   bot's own is ever deleted: not a person's comment, another bot's, or another workflow's on the same account.

Costs: the 👀 and the read after posting, for a comment on an issue without the account's 👀; where the 👀 was
already there, one read, the take-over (a delete and a second 👀) and the read before posting; the waiting (up to
CLAIM_READS reads) only for a run that found a young 👀. The only removals are the bot's own: its 👀 (made again at
once) and a duplicate of its own comment.

May import: the standard library, `triage.core`, `triage.service.ports`, `triage.service.readings`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from triage.core.effects import own_twins
from triage.core.policy import already_posted
from triage.core.snapshot import IssueSnapshot
from triage.service.ports import GitHubPort
from triage.service.readings import seconds_since

CLAIM_CONTENT = "eyes"
CLAIM_WAIT_SECONDS = 3.5  # how long a run waits for the comment of a run that holds a young claim
# A claim older than this is nobody's work in progress: a run posts within a second or two of its claim. Margin
# over CLAIM_WAIT_SECONDS for GitHub's whole-second timestamps and a runner's clock a few seconds off.
CLAIM_FRESH_SECONDS = 10.0
CLAIM_ROUNDS = 2  # claims per comment: the first, and one after taking over a reaction nobody uses
# When a run reads the comments again (seconds after it found a young claim): early reads catch the usual holder,
# one that is a second or two late is still seen, and the reads stay few (each one API call).
POLL_AT = (0.5, 1.5, 3.5)
CLAIM_READS = 1 + len(POLL_AT)  # reads of the comments while waiting on one young claim
# At most, for one comment: per round the 👀, the reads and the take-over's delete, the read after a take-over;
# then the read after posting and one duplicate deleted. The writes among them: the 👀s and the deletes.
CLAIM_REQUESTS = CLAIM_ROUNDS * (2 + CLAIM_READS) + 3
CLAIM_WRITES = 2 * CLAIM_ROUNDS + 1


@dataclass(frozen=True)
class Claim:
    """A run's answer for one comment: post it or not, and why."""

    post: bool
    why: str


@dataclass(frozen=True)
class _Seen:
    """A comment as GitHub gave it back (its id, author and body), for `triage.core.effects.own_twins`."""

    id: int | None
    author: str
    body: str


def seen(raw: list[dict]) -> list[_Seen]:
    """The comments GitHub answered, as `own_twins` reads them (anything not shaped like a comment is skipped)."""
    found = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        user = item.get("user")
        user = user if isinstance(user, dict) else {}
        cid, body = item.get("id"), item.get("body")
        found.append(_Seen(cid if isinstance(cid, int) else None, str(user.get("login") or ""),
                           body if isinstance(body, str) else ""))
    return found


def may_post(client: GitHubPort, repo: str, number: int, template: str, own_logins: frozenset[str] | None, *,
             clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep,
             wait: float = CLAIM_WAIT_SECONDS) -> Claim:
    """Claims `template`'s comment on issue `number`; where the account's 👀 is already there, waits for the
    comment of a run that may be posting under it, and takes over a 👀 nobody uses. `clock`: wall time (a 👀's
    age). A comment counts as posted when one of our own accounts (`own_logins`) wrote it with the marker."""
    for attempt in range(CLAIM_ROUNDS):
        won, reaction = client.claim_issue(repo, number, CLAIM_CONTENT)
        reaction = reaction if isinstance(reaction, dict) else {}
        if won and attempt == 0:
            return Claim(True, "claimed")
        # After a take-over, the comments once more (the holder taken over may have been slow, and posted since).
        offsets = [0.0]
        if not won:
            age = seconds_since(reaction.get("created_at"), clock())
            young = age is None or age < CLAIM_FRESH_SECONDS  # no age said: cautious, wait for its comment
            offsets += [at for at in POLL_AT if at <= wait] if young else []
        if _posted_meanwhile(client, repo, number, template, own_logins, offsets, sleep):
            return Claim(False, f"'{template}' was posted by another run meanwhile: not posted again")
        if won:
            return Claim(True, "claimed (a 👀 nobody was using taken over)")
        reaction_id = reaction.get("id")
        if attempt + 1 == CLAIM_ROUNDS or not isinstance(reaction_id, int):
            break
        client.release_claim(repo, number, reaction_id)  # False: another run took it over first; claim again
    return Claim(True, "another run's claim was not followed by its comment: posted (a duplicate would be "
                       "removed)")


def _posted_meanwhile(client: GitHubPort, repo: str, number: int, template: str,
                      own_logins: frozenset[str] | None, offsets: list[float],
                      sleep: Callable[[float], None]) -> bool:
    """Whether the template's marker shows up in a comment of ours, reading the comments at `offsets` seconds."""
    waited = 0.0
    bare = IssueSnapshot(number=number, title="", body="", labels=())
    for at in offsets:
        if at > waited:
            sleep(at - waited)
            waited = at
        if already_posted(bare.with_comments(client.list_comments(repo, number)), template, own_logins):
            return True
    return False


def settle(client: GitHubPort, repo: str, number: int, template: str, body: str, posted: dict,
           own_login: str | None) -> tuple[str | None, tuple[int, ...]]:
    """Just after posting `body` (`template`'s render; `posted`: the comment GitHub answered): read the comments;
    of the bot's own renders of the template, keep the earliest and delete the others
    (`triage.core.effects.own_twins`: the author is the bot's configured login, never inferred from a comment).
    Returns (why, when ours was the one deleted: its twin, posted by another run, stays; the ids deleted).
    Nothing is deleted when the login is not known, or when GitHub says our comment's author is another account
    (then the configured login is not the token's: nothing of ours can be told apart)."""
    user = posted.get("user") if isinstance(posted, dict) else None
    author = user.get("login") if isinstance(user, dict) else None
    if not own_login or (author is not None and author != own_login):
        return None, ()
    twins = own_twins(seen(client.list_comments(repo, number)), own_login, (template,), lambda _: body)
    for twin in twins:  # False: already gone (another run's read deleted it first)
        client.delete_own_comment(repo, {"id": twin.comment_id, "user": {"login": twin.author}}, own_login)
    removed = tuple(twin.comment_id for twin in twins)
    if isinstance(posted, dict) and posted.get("id") in removed:
        return (f"'{template}' was posted by another run at the same moment: this run's copy was deleted, "
                "theirs stays"), removed
    return None, removed
