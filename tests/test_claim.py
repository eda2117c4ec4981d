"""The comment claim (issues 20 and 30, triage.service.claim): a 👀 reaction on the issue that GitHub creates for one
run only (201; 200 to the others); a 👀 the account already has (an earlier claim, another workflow) taken over by
its id; and the safety net after posting (a twin of our own comment deleted, the earliest kept). Real HTTP
against the GitHub stand-in, whose reaction and delete endpoints answer as GitHub documents; the sleeps are
recorded, not slept, except where two threads race."""
from __future__ import annotations

import threading
import time
from dataclasses import astuple
from datetime import datetime

import pytest
from actionrun import NOT_DISTRIBUTED, REPO, seed_issue

from triage.core.effects import DeleteTwin, Effects, own_twins
from triage.service.claim import CLAIM_FRESH_SECONDS, CLAIM_READS, may_post, seen, settle
from triage.service.executor import LiveExecutor

TEMPLATE = "not_distributed"


def _body(template: str = TEMPLATE) -> str:
    return f"An earlier run's comment.\n\n<!-- ptd-triage:{template} -->\n"


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _claim_args(fake, number: int):
    return fake.issue(REPO, number)["number"], frozenset({fake.bot_login})


def _calls(fake, before: int) -> list[tuple[str, str, int]]:
    return [(r.method, r.path.rsplit(f"/issues/", 1)[-1], r.status) for r in fake.requests[before:]]


def _bot_eyes(fake, number: int) -> list[dict]:
    return [r for r in fake.issue_reactions(REPO, number)
            if r["user"]["login"] == fake.bot_login and r["content"] == "eyes"]


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
    claim = may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=lambda s: None)
    assert (claim.post, claim.why) == (True, "claimed")
    assert [(r.method, r.status) for r in fake_github.requests[before:]] == [("POST", 201)]


def test_a_run_that_finds_a_young_claim_waits_for_its_comment_and_does_not_post(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    slept: list[float] = []

    def sleep(seconds):  # the holder's comment lands while this run waits
        slept.append(seconds)
        if len(slept) == 2:
            fake_github.add_comment(REPO, 1, _body(), author=fake_github.bot_login, author_type="Bot")

    post, why, *_ = astuple(may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=sleep,
                                     clock=lambda: _seconds(claim["created_at"]) + 2))
    assert not post and "posted by another run meanwhile" in why
    assert len(slept) == 2 and sum(slept) <= 2.0
    assert _bot_eyes(fake_github, 1) == [claim]  # a claim in use is never taken over


def test_a_young_claim_never_followed_by_its_comment_is_taken_over_after_a_bounded_wait(fake_github, github_client):
    """The holder was killed between its claim and its post (or the 👀 is another workflow's, just made): after
    CLAIM_READS reads of the comments, its reaction is deleted by id and claimed again, and this run posts."""
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    slept: list[float] = []
    before = len(fake_github.requests)
    post, why, *_ = astuple(may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=slept.append,
                                     clock=lambda: _seconds(claim["created_at"]) + 1))
    assert post and "taken over" in why
    assert _calls(fake_github, before) == [("POST", "1/reactions", 200)] + [("GET", "1/comments", 200)] * CLAIM_READS \
        + [("DELETE", f"1/reactions/{claim['id']}", 204), ("POST", "1/reactions", 201), ("GET", "1/comments", 200)]
    assert 0 < sum(slept) <= 4.0
    (eyes,) = _bot_eyes(fake_github, 1)  # still one 👀 of the account: the new claim
    assert eyes["id"] != claim["id"]


@pytest.mark.parametrize("age_days", [30, 0.0007])  # a 30-day-old 👀, and one a minute old (60 s)
def test_an_old_claim_is_read_once_then_taken_over_without_waiting(fake_github, github_client, age_days):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    old = lambda: _seconds(claim["created_at"]) + max(age_days * 86400, CLAIM_FRESH_SECONDS + 1)  # noqa: E731
    slept: list[float] = []
    before = len(fake_github.requests)
    assert may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=slept.append, clock=old).post
    assert slept == []  # no waiting on a claim nobody can be using
    assert _calls(fake_github, before) == [("POST", "1/reactions", 200), ("GET", "1/comments", 200),
                                           ("DELETE", f"1/reactions/{claim['id']}", 204),
                                           ("POST", "1/reactions", 201), ("GET", "1/comments", 200)]
    # Once our comment is there, the old claim (now ours) decides nothing: the comments do, and nothing is deleted.
    fake_github.add_comment(REPO, 1, _body(), author=fake_github.bot_login, author_type="Bot")
    before = len(fake_github.requests)
    assert not may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=slept.append,
                        clock=lambda: time.time() + 3600).post
    assert [r.method for r in fake_github.requests[before:]] == ["POST", "GET"]


def test_taking_over_by_id_never_deletes_a_claim_another_run_has_just_made(fake_github, github_client):
    """Two runs find the same old 👀. The other run takes it over first (deletes it, makes its own); this run's
    delete of the old id answers 404, its claim answers 200 with the other run's new 👀, and it waits for that
    run's comment instead of deleting its claim."""
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    old = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    taken: dict = {}

    class FirstTheOtherRun:
        """This run's client; just before its delete, the other run (same account) takes the 👀 over."""

        def __getattr__(self, name):
            return getattr(github_client, name)

        def release_claim(self, repo, number, reaction_id):
            assert github_client.release_claim(repo, number, reaction_id)  # the other run's delete
            taken["won"], taken["claim"] = github_client.claim_issue(repo, number)
            return github_client.release_claim(repo, number, reaction_id)

    slept: list[float] = []

    def sleep(seconds):  # the other run posts while this one waits
        slept.append(seconds)
        fake_github.add_comment(REPO, 1, _body(), author=fake_github.bot_login, author_type="Bot")

    def clock():  # the old 👀 is a day old; the other run's is a second old when this run looks at it
        return _seconds(taken["claim"]["created_at"]) + 1 if taken else _seconds(old["created_at"]) + 86400

    post, why, *_ = astuple(may_post(FirstTheOtherRun(), REPO, snapshot, TEMPLATE, own, sleep=sleep, clock=clock))
    assert taken["won"] and not post and "posted by another run" in why
    assert _bot_eyes(fake_github, 1) == [taken["claim"]]
    deletes = [(r.path.rsplit("/", 1)[-1], r.status) for r in fake_github.requests if r.method == "DELETE"]
    assert deletes == [(str(old["id"]), 204), (str(old["id"]), 404)]


def test_two_runs_at_once_on_an_issue_whose_account_already_reacted_post_once():
    """The red team's case (issue 30): the account's 👀 is already there (30 days old), two runs plan the comment at
    the same moment and both claim. One takes the 👀 over and posts; the other waits for that comment: no duplicate
    is even posted. Five issues, on the stand-in with wall-clock timestamps, real sleeps (a run's wait is at most a
    few seconds)."""
    from sim.world import SimGitHub

    from triage.github.client import GitHubClient

    with SimGitHub() as fake_github:
        _two_runs_at_once(fake_github, GitHubClient)
    assert not fake_github.violations


def _two_runs_at_once(fake_github, GitHubClient) -> None:
    for n in range(1, 6):
        seed_issue(fake_github, n, NOT_DISTRIBUTED)
        fake_github.add_issue_reaction(REPO, n, "eyes", author=fake_github.bot_login)
    fake_github.age(30 * 86400)
    posted: dict[int, list[bool]] = {n: [] for n in range(1, 6)}
    barrier = threading.Barrier(2)

    def run():
        client = GitHubClient(fake_github.token, fake_github.url, timeout=(2, 5))
        for n in range(1, 6):
            snapshot, own = _claim_args(fake_github, n)
            barrier.wait()
            claim = may_post(client, REPO, snapshot, TEMPLATE, own)
            post = claim.post
            if post:
                comment = client.create_comment(REPO, n, _body())
                post = settle(client, REPO, n, TEMPLATE, _body(), comment, fake_github.bot_login)[0] is None
            posted[n].append(post)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(sorted(v) == [False, True] for v in posted.values()), posted
    for n in posted:
        assert len(fake_github.comments(REPO, n)) == 1 and len(_bot_eyes(fake_github, n)) == 1
    assert not [r for r in fake_github.requests if r.method == "DELETE" and "/comments/" in r.path]


def test_a_marker_pasted_by_a_person_does_not_count_as_the_holders_comment(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    snapshot, own = _claim_args(fake_github, 1)
    claim = fake_github.add_issue_reaction(REPO, 1, "eyes", author=fake_github.bot_login)
    fake_github.add_comment(REPO, 1, _body(), author="someone")
    assert may_post(github_client, REPO, snapshot, TEMPLATE, own, sleep=lambda s: None,
                    clock=lambda: _seconds(claim["created_at"]) + 1).post


def test_after_posting_a_twin_of_ours_is_deleted_and_the_earliest_kept(fake_github, github_client):
    """The safety net: two of our comments from one template (runs at once). Whichever run checks deletes the later
    one; a person's pasted marker, another template's comment and the earliest stay."""
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    bot = dict(author=fake_github.bot_login, author_type="Bot")
    person = fake_github.add_comment(REPO, 1, _body(), author="someone")
    first = fake_github.add_comment(REPO, 1, _body(), **bot)
    other = fake_github.add_comment(REPO, 1, _body("needs_distributed_reproduction"), **bot)
    second = github_client.create_comment(REPO, 1, _body())
    own = fake_github.bot_login
    why, removed = settle(github_client, REPO, 1, TEMPLATE, _body(), second, own)
    assert why and "deleted" in why and removed == (second["id"],)
    assert [c["id"] for c in fake_github.comments(REPO, 1)] == [person["id"], first["id"], other["id"]]
    assert fake_github.issue(REPO, 1)["comments"] == 3
    # The earlier run's own check then finds nothing to do (its twin is gone: 0 deletes).
    assert settle(github_client, REPO, 1, TEMPLATE, _body(), first, own) == (None, ())
    assert [r.method for r in fake_github.requests].count("DELETE") == 1


def test_a_twin_already_deleted_by_the_other_run_is_not_an_error(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    bot = dict(author=fake_github.bot_login, author_type="Bot")
    comments = [fake_github.add_comment(REPO, 1, _body(), **bot) for _ in range(2)]
    own = fake_github.bot_login
    twins = own_twins(seen(comments), own, (TEMPLATE,), lambda name: _body(name))
    assert [t.comment_id for t in twins] == [comments[1]["id"]]
    executor = LiveExecutor(github_client, REPO, own_login=own)
    for _ in range(2):  # the second run's delete of the same twin: 404, already gone
        assert executor.execute(Effects(1, tuple(twins), own)).deleted == (comments[1]["id"],)
    assert [r.status for r in fake_github.requests if r.method == "DELETE"] == [204, 404]


def test_nothing_is_deleted_when_our_account_is_unknown_or_the_comment_is_not_ours(fake_github, github_client):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    bot = dict(author=fake_github.bot_login, author_type="Bot")
    comments = [fake_github.add_comment(REPO, 1, _body(), **bot) for _ in range(2)]
    assert own_twins(seen(comments), None, (TEMPLATE,), lambda name: _body(name)) == []
    person = fake_github.add_comment(REPO, 1, _body(), author="someone")
    # A render of the template under another author, or our marker in a body that is not the render: not a twin.
    assert own_twins(seen(comments + [person]), "someone", (TEMPLATE,), lambda name: _body(name)) == []
    assert own_twins(seen(comments), fake_github.bot_login, (TEMPLATE,), lambda name: "another body") == []
    with pytest.raises(ValueError, match="only our own"):
        LiveExecutor(github_client, REPO, own_login=fake_github.bot_login).execute(
            Effects(1, (DeleteTwin(person["id"], "someone", TEMPLATE),)))
    with pytest.raises(ValueError, match="only our own"):
        github_client.delete_own_comment(REPO, person, fake_github.bot_login)
    assert not [r for r in fake_github.requests if r.method == "DELETE"]
