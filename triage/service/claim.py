"""The comment claim: two runs at once on one issue (a sweep and an event run, which cannot share a concurrency
group, or two event runs of a workflow without one) post a template once.

GitHub has no compare-and-set for comments, but it has one for reactions: `POST /issues/{n}/reactions` answers 201
when it creates the reaction and 200 when this account had already added that reaction, and of two requests at
once only one can be the creator. So just before posting, a run reacts 👀 to the issue:
- 201: it won; it posts.
- 200 with a claim made in the last CLAIM_FRESH_SECONDS: another run of ours is posting (or just posted). It reads
  the comments until the template's marker shows up (then it drops its comment and writes only its labels), for
  at most CLAIM_WAIT_SECONDS. If the marker never shows, the claimer died between its claim and its post (a killed
  runner), and this run posts: a re-run still completes a killed one.
- 200 with an older claim: the claim of an earlier comment (each issue gets at most one claim per account); the
  comments, just read, are what decides.
The claim costs one request per posted comment; the waiting only happens to a run that lost.

May import: the standard library, `triage.core`, `triage.service.ports`, `triage.service.readings`.
"""

from __future__ import annotations

import time
from typing import Callable

from triage.core.policy import already_posted
from triage.core.snapshot import IssueSnapshot
from triage.service.ports import GitHubPort
from triage.service.readings import seconds_since

CLAIM_CONTENT = "eyes"
CLAIM_FRESH_SECONDS = 600.0  # a claim younger than this is a run in progress (the sweep's "recent" window too)
CLAIM_WAIT_SECONDS = 3.5  # how long a loser waits for the winner's comment (a post takes well under a second)
# When a loser reads the comments again (seconds after losing): early reads catch the usual winner, one that is
# a second or two late is still seen, and the reads stay few (CLAIM_READS in all, each one API call).
POLL_AT = (0.5, 1.5, 3.5)
CLAIM_READS = 1 + len(POLL_AT)
CLAIM_REQUESTS = 1 + CLAIM_READS  # at most: the reaction (a write) and the reads of the comments


def may_post(client: GitHubPort, repo: str, snapshot: IssueSnapshot, template: str,
             own_logins: frozenset[str] | None, *, clock: Callable[[], float] = time.time,
             sleep: Callable[[float], None] = time.sleep, wait: float = CLAIM_WAIT_SECONDS) -> tuple[bool, str]:
    """(post?, why) for `template` on the issue: claims it, and when another run holds a fresh claim, waits for
    that run's comment. `snapshot` is the issue as this run planned it (its comments are read again here)."""
    number = snapshot.number
    won, reaction = client.claim_issue(repo, number, CLAIM_CONTENT)
    if won:
        return True, "claimed"
    age = seconds_since(reaction.get("created_at") if isinstance(reaction, dict) else None, clock())
    fresh = age is not None and age < CLAIM_FRESH_SECONDS
    # A fresh claim: read now, then at the POLL_AT offsets that fit in `wait`; an old one: read once, now.
    offsets = [0.0] + ([at for at in POLL_AT if at <= wait] if fresh else [])
    waited = 0.0
    for at in offsets:
        if at > waited:
            sleep(at - waited)
            waited = at
        if already_posted(snapshot.with_comments(client.list_comments(repo, number)), template, own_logins):
            return False, f"'{template}' was posted by another run meanwhile: not posted again"
    return True, ("another run claimed the comment and did not post it: posted" if fresh
                  else "an earlier comment's claim: the comments decide")
