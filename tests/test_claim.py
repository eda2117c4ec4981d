"""The comment claim (issue 20, triage.service.claim): a 👀 reaction on the issue that GitHub creates for one run
only (201; 200 to the others), and what a run does when it loses. Real HTTP against the GitHub stand-in, whose
reactions endpoint answers as GitHub documents; the sleeps are recorded, not slept."""
from __future__ import annotations

import threading
from datetime import datetime

from actionrun import NOT_DISTRIBUTED, REPO, seed_issue

from triage.core.snapshot import snapshot_from_json
from triage.service.claim import CLAIM_READS, may_post

TEMPLATE = "not_distributed"


def _body(template: str = TEMPLATE) -> str:
    return f"An earlier run's comment.\n\n<!-- ptd-triage:{template} -->\n"


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _claim_args(fake, number: int):
    issue = fake.issue(REPO, number)
    return snapshot_from_json(issue, []), frozenset({fake.bot_login})


def test_of_two_claims_at_once_exactly_one_is_created(fake_github, github_client):
    """Twenty issues, two threads claiming each at the same moment: one 201 per issue, never two."""
    for n in range(1, 21):
        seed_issue(fake_github, n, NOT_DISTRIBUTED)
    outcomes: dict[int, list[bool]] = {n: [] for n in range(1, 21)}
    barrier = threading.Barrier(2)

    def claimer():
        for n in range(1, 21):
            barrier.wait()
            won, reaction = github_client.claim_issue(REPO, n)
            assert reaction["content"] == "eyes" and reaction["user"]["login"] == fake_github.bot_login
            outcomes[n].append(won)

    threads = [threading.Thread(target=claimer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(sorted(v) == [False, True] for v in outcomes.values()), outcomes
    assert all(len(fake_github.issue_reactions(REPO, n)) == 1 for n in outcomes)


def test_the_winner_posts_without_reading_the_comments_again(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    before = len(fake_github.requests)
    assert may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=lambda s: None) == (True, "claimed")
    assert [(r.method, r.status) for r in fake_github.requests[before:]] == [("POST", 201)]


def test_a_loser_waits_for_the_winners_comment_and_does_not_post(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    slept: list[float] = []

    def sleep(seconds):  # the winner's comment lands while the loser waits
        slept.append(seconds)
        if len(slept) == 2:
            fake_github.add_comment(REPO, 1, _body(), author=fake_github.bot_login, author_type="Bot")

    post, why = may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=sleep,
                         clock=lambda: _seconds(claim["created_at"]) + 2)
    assert not post and "posted by another run meanwhile" in why
    assert len(slept) == 2 and sum(slept) <= 2.0


def test_a_claimer_that_never_posts_is_completed_after_a_bounded_wait(fake_github, github_client):
    """A claim with no comment behind it: the claimer was killed between its claim and its post. The next run
    posts after at most CLAIM_READS reads of the comments (a re-run completes a killed run)."""
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    slept: list[float] = []
    before = len(fake_github.requests)
    post, why = may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=slept.append,
                         clock=lambda: _seconds(claim["created_at"]) + 1)
    assert post and "did not post it" in why
    reads = [r for r in fake_github.requests[before:] if r.method == "GET"]
    assert len(reads) == CLAIM_READS and 0 < sum(slept) <= 4.0


def test_an_old_claim_is_an_earlier_comments_and_the_comments_decide(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    old = lambda: _seconds(claim["created_at"]) + 3600  # noqa: E731
    slept: list[float] = []
    assert may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=slept.append, clock=old)[0]
    assert slept == []  # no waiting on a claim an hour old
    fake_github.add_comment(REPO, 1, _body(), author=fake_github.bot_login, author_type="Bot")
    assert not may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=slept.append, clock=old)[0]


def test_a_marker_pasted_by_a_person_does_not_count_as_the_winners_comment(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    fake_github.add_comment(REPO, 1, _body(), author="someone")
    post, _ = may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=lambda s: None,
                       clock=lambda: _seconds(claim["created_at"]) + 1)
    assert post
