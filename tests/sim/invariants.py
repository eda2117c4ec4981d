"""The README's promises as checks over the stand-in's state and request log (issue 11's invariants).

Each check returns a list of human-readable violations (empty: the promise held). They read only the world:
what is on GitHub now and which requests reached it, never the Action's own report of itself.

May import: the standard library, `actionrun`, `triage.service.claim` (how many reads a lost claim may cost).
"""
from __future__ import annotations

import re
from typing import Iterable

from actionrun import MARKER, QUEUE, REPO
from triage.service.claim import CLAIM_READS

REVIEW = "triage review"
SUB_ONCALLS = ("oncall: distributed parallelisms", "oncall: distributed infra", "oncall: distributed checkpointing")
# The only writes the Action may make: a comment, labels (added), a reaction to a command.
ALLOWED_WRITES = (re.compile(rf"POST /repos/{REPO}/issues/\d+/comments"),
                  re.compile(rf"POST /repos/{REPO}/issues/\d+/labels"),
                  re.compile(rf"POST /repos/{REPO}/issues/comments/\d+/reactions"),
                  re.compile(rf"POST /repos/{REPO}/issues/\d+/reactions"),  # the comment claim (issue 20)
                  # The claim's removals (issue 30): the account's own 👀 taken over, a duplicate of its own comment.
                  re.compile(rf"DELETE /repos/{REPO}/issues/\d+/reactions/\d+"),
                  re.compile(rf"DELETE /repos/{REPO}/issues/comments/\d+"))

# A run's own calls that are not about any issue: the repository's configuration file (one contents read per run,
# unless the `config` input is `none`). Counted apart from the per-issue budget below.
PER_RUN = re.compile(r"/repos/[^/]+/[^/]+/contents/.*")

# API calls one run may cost, when GitHub answers every call at once (no injected failure, no run at the same time).
# One issue: read it, its comments (one page in the simulator), its label events (only when step 0 could stop or a
# high-priority flag is planned), the comment's claim (a reaction on the issue), the comment, the comments read
# again after it (issue 30: a twin is deleted), the labels. A command adds the role check and the reaction. A sweep
# adds its search page.
ISSUE_BUDGET = 7
COMMAND_BUDGET = ISSUE_BUDGET + 2
SWEEP_PER_ISSUE = ISSUE_BUDGET


def templates() -> tuple[str, ...]:
    from triage.config.bundle import load_bundle

    return tuple(load_bundle().templates.names)


def duplicate_comments(fake, numbers: Iterable[int]) -> list[str]:
    found = []
    for n in numbers:
        for template in templates():
            mark = f"<!-- ptd-triage:{template} -->"
            ours = [c for c in fake.comments(REPO, n) if mark in (c["body"] or "") and c["user"]["login"] == fake.bot_login]
            if len(ours) > 1:
                found.append(f"#{n}: {len(ours)} comments from template {template}")
    return found


# The reactions the bot may add: on an issue, the comment claim's 👀; on a comment, a command's 👀 (taken) or 😕
# (refused: triage.action.routers.command.REFUSED_REACTION).
_REACTIONS = {False: ("eyes",), True: ("eyes", "confused")}


def forbidden_requests(requests, allowlist: frozenset[str]) -> list[str]:
    found = []
    for r in requests:
        if r.method in ("GET", "HEAD"):
            continue
        call = f"{r.method} {r.path}"
        if not any(p.fullmatch(call) for p in ALLOWED_WRITES):
            found.append(f"forbidden write: {call}")
        elif call.endswith("/reactions") and (r.body or {}).get("content") not in _REACTIONS[
                "/comments/" in call]:
            found.append(f"{call} reacts with {(r.body or {}).get('content')!r}, not the claim's 👀 (or, on a "
                         "comment, the command's 👀 or a refused command's 😕)")
        elif call.endswith("/labels"):
            names = (r.body or {}).get("labels", []) if isinstance(r.body, dict) else r.body or []
            outside = [l for l in names if (l if isinstance(l, str) else l.get("name")) not in allowlist]
            if outside:
                found.append(f"{call} adds labels outside the allowlist: {outside}")
    return found


def removed_labels(before: dict[int, set[str]], fake) -> list[str]:
    found = []
    for n, labels in before.items():
        gone = labels - set(fake.issue_labels(REPO, n))
        if gone:
            found.append(f"#{n}: labels removed during a run: {sorted(gone)}")
    return found


def state_violations(fake, numbers: Iterable[int]) -> list[str]:
    found = []
    for n in numbers:
        issue = fake.issue(REPO, n)
        labels = fake.issue_labels(REPO, n)
        subs = [l for l in labels if l in SUB_ONCALLS]
        if len(subs) > 1:
            found.append(f"#{n}: {len(subs)} sub-oncalls: {subs}")
        if issue.get("assignees") or issue.get("assignee"):
            found.append(f"#{n}: assigned")
        if "high priority" in labels:
            found.append(f"#{n}: 'high priority' added")
    return found


def held(fake, numbers: Iterable[int]) -> set[int]:
    """Issues the bot flagged and is holding for a person: the review label, added by the bot, and no marker."""
    out = set()
    for n in numbers:
        labels = fake.issue_labels(REPO, n)
        if REVIEW in labels and MARKER not in labels and fake.label_adders(REPO, n).get(REVIEW) == fake.bot_login:
            out.add(n)
    return out


def flagged_at(fake, n: int) -> int:
    """Index (in the issue's events) of the bot's latest `labeled` event for the review label, or -1."""
    events = fake.events(REPO, n)
    return max((i for i, e in enumerate(events) if e["event"] == "labeled" and e["label"]["name"] == REVIEW
                and e["actor"]["login"] == fake.bot_login), default=-1)


def released_holds(fake, holds: set[int], touched_by_people: set[int]) -> list[str]:
    return [f"#{n}: flagged for a person, got '{MARKER}' although no person acted on it"
            for n in sorted(holds - touched_by_people) if MARKER in fake.issue_labels(REPO, n)]


def unfinished(fake, numbers: Iterable[int]) -> list[str]:
    """At the end: every open queued issue is processed (marker) or waiting for a person (review, no marker)."""
    found = []
    for n in numbers:
        issue = fake.issue(REPO, n)
        labels = fake.issue_labels(REPO, n)
        if issue["state"] == "open" and QUEUE in labels and MARKER not in labels and REVIEW not in labels:
            found.append(f"#{n}: still queued, neither processed nor waiting for a person ({labels})")
    return found


ISSUE_REACTION = re.compile(rf"/repos/{REPO}/issues/\d+/reactions")
TAKEN_OVER = re.compile(rf"/repos/{REPO}/issues/\d+/reactions/\d+")


def over_budget(record, issues_in_sweep: int = 0) -> list[str]:
    """Calls of one run against its budget (only meaningful for a run alone with no injected failure)."""
    count = len([r for r in record.requests if not PER_RUN.fullmatch(r.path)])
    # A run that lost a claim (200: the reaction was already there) reads the comments a few more times while it
    # waits for the winner's comment (triage.service.claim): at most CLAIM_READS - 1 more reads per lost claim.
    lost = sum(1 for r in record.requests if r.method == "POST" and ISSUE_REACTION.fullmatch(r.path)
               and r.status == 200)
    count -= min(lost * (CLAIM_READS - 1), sum(1 for r in record.requests if r.path.endswith("/comments")
                                              and r.method == "GET"))
    # A 👀 nobody was using (a killed run's, an earlier comment's, another workflow's) is taken over: its delete, a
    # second claim and the comments read once more (issue 30).
    count -= 3 * sum(1 for r in record.requests if r.method == "DELETE" and TAKEN_OVER.fullmatch(r.path))
    event = record.launch.event
    if event == "schedule" or (event == "workflow_dispatch" and "issue-number" not in record.launch.inputs):
        budget = 1 + SWEEP_PER_ISSUE * issues_in_sweep
    elif event == "issue_comment":
        budget = COMMAND_BUDGET
    else:
        budget = ISSUE_BUDGET
    if count > budget:
        calls = ", ".join(f"{r.method} {r.path}" for r in record.requests)
        return [f"{record.launch.label}: {count} API calls > budget {budget}: {calls}"]
    return []
