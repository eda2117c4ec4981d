"""The bot removes nothing that is not its own (issue 37), through the real entrypoint against the GitHub stand-in.

A twin the bot deletes must be provably its own: written by the bot's account as configured (`bot-login`, never
inferred from the comment being examined) and a render of the same template for this issue. The red team's cases,
each of which deleted someone else's comment before:
- a person's comment, or another bot's (`pytorch-bot[bot]`), carrying the template's marker (even the whole text)
  while the bot's own POST fails with a 502 (not stored), a 500 after GitHub stored it, or a dropped connection
  after it stored it (the read-timeout path: GitHub may have acted on it). The client took that comment as the
  one stored, the claim's check then counted its author as ours, and the twin check deleted it; in the stored
  cases the bot's own comment went too, and the run still said it posted;
- another workflow's comment on the same account (`github-actions[bot]`) that carries our marker but is not our
  template's text, with no fault at all.
Each case counts violations: a comment not the bot's render deleted, the bot's only render deleted, more or fewer
than one render of ours at the end, or a run whose outputs and summary say otherwise than what is on the issue.
The controls still behave: a real duplicate of the bot's own comment is removed (the earlier kept), and a POST
stored before its 500 leaves exactly one comment."""
from __future__ import annotations

import json

import pytest
from actionrun import MARKER, NOT_DISTRIBUTED, QUEUE, REPO, expected_plan, issues_payload, run_action, seed_issue

TEMPLATE = "not_distributed"
FAULTS = {
    "502, not stored": dict(status=502),
    "500 after it was stored": dict(status=500, after_effect=True),
    "connection dropped after it was stored": dict(drop=True, after_effect=True),
}
OTHERS = {"a person": ("a-person", "User"), "another bot": ("pytorch-bot[bot]", "Bot")}


def _render(fake, number: int) -> str:
    plan = expected_plan(fake, number)
    assert plan.comment is not None and plan.comment.template == TEMPLATE
    return plan.comment.body


def _processed(fake, number: int) -> None:
    """The bot's marker label on the issue: a run reads it (and its comments) and has nothing to add."""
    fake.label_issue(REPO, number, MARKER, actor=fake.bot_login, actor_type="Bot")


def _ours(fake, number: int, body: str) -> list[dict]:
    return [c for c in fake.comments(REPO, number) if c["user"]["login"] == fake.bot_login and c["body"] == body]


def _violations(fake, run, number: int, body: str, foreign: list[dict]) -> list[str]:
    problems = []
    now = {c["id"]: c for c in fake.comments(REPO, number)}
    for comment in foreign:
        if now.get(comment["id"]) != comment:
            problems.append(f"{comment['user']['login']}'s comment {comment['id']} was deleted or changed")
    ours = _ours(fake, number, body)
    if len(ours) != 1:
        problems.append(f"{len(ours)} comments of ours from the template at the end")
    deleted = [r for r in run.requests if r.method == "DELETE" and "/comments/" in r.path]
    if any(int(r.path.rsplit("/", 1)[-1]) in {c["id"] for c in foreign} for r in deleted):
        problems.append("a DELETE was sent for a comment that is not ours")
    # What the run says is what is on the issue.
    labels = json.loads(run.outputs.get("labels-added", "[]"))
    if not set(labels) <= set(fake.issue_labels(REPO, number)):
        problems.append(f"labels-added says {labels}, the issue has {fake.issue_labels(REPO, number)}")
    said_posted = f"`{TEMPLATE}`" in run.summary.split("Comment posted", 1)[-1].split("\n\n", 1)[0] \
        if "Comment posted" in run.summary else None
    if ours and said_posted is False:
        problems.append("the summary says no comment was posted, and ours is on the issue")
    return problems


@pytest.mark.parametrize("other", OTHERS)
@pytest.mark.parametrize("fault", FAULTS)
def test_a_comment_with_our_marker_is_never_taken_for_ours_after_an_uncertain_post(fake_github, tmp_path, fault,
                                                                                   other):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    body = _render(fake_github, 1)
    login, kind = OTHERS[other]
    foreign = [fake_github.add_comment(REPO, 1, body, author=login, author_type=kind),  # our whole text, copied
               fake_github.add_comment(REPO, 1, f"see above <!-- ptd-triage:{TEMPLATE} -->", author=login,
                                       author_type=kind)]
    fake_github.inject("POST", rf"/repos/{REPO}/issues/1/comments", **FAULTS[fault])
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 1, "labeled", label=QUEUE))
    assert run.returncode == 0, run.stdout + run.stderr
    assert _violations(fake_github, run, 1, body, foreign) == []
    assert MARKER in fake_github.issue_labels(REPO, 1)


@pytest.mark.parametrize("later", ["theirs", "ours"])
def test_another_workflows_comment_on_the_same_account_is_never_deleted(fake_github, tmp_path, later):
    """The same account, our marker, another text: not a render of our template, so never a twin, whichever is
    later; and ours is not deleted on its account either."""
    seed_issue(fake_github, 2, NOT_DISTRIBUTED)
    body = _render(fake_github, 2)
    bot = dict(author=fake_github.bot_login, author_type="Bot")
    other_text = f"Deploy preview ready.\n\n<!-- ptd-triage:{TEMPLATE} -->\n"
    first, second = (body, other_text) if later == "theirs" else (other_text, body)
    comments = [fake_github.add_comment(REPO, 2, first, **bot), fake_github.add_comment(REPO, 2, second, **bot)]
    _processed(fake_github, 2)  # the run only reads
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 2, "labeled", label=QUEUE))
    assert run.returncode == 0, run.stdout + run.stderr
    assert [c["id"] for c in fake_github.comments(REPO, 2)] == [c["id"] for c in comments]
    assert not [r for r in run.requests if r.method == "DELETE"]


def test_the_control_a_real_duplicate_of_our_own_comment_is_removed(fake_github, tmp_path):
    seed_issue(fake_github, 3, NOT_DISTRIBUTED)
    body = _render(fake_github, 3)
    bot = dict(author=fake_github.bot_login, author_type="Bot")
    person = fake_github.add_comment(REPO, 3, body, author="a-person")  # a person's copy stays, as ever
    twins = [fake_github.add_comment(REPO, 3, body, **bot) for _ in range(2)]  # two runs at once, one killed
    _processed(fake_github, 3)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 3, "labeled", label=QUEUE))
    assert run.returncode == 0, run.stdout + run.stderr
    assert [c["id"] for c in fake_github.comments(REPO, 3)] == [person["id"], twins[0]["id"]]
    assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in run.requests if r.method == "DELETE"] == [
        ("DELETE", str(twins[1]["id"]))]


def test_the_control_a_post_stored_before_its_500_leaves_exactly_one_comment(fake_github, tmp_path):
    seed_issue(fake_github, 4, NOT_DISTRIBUTED)
    body = _render(fake_github, 4)
    fake_github.inject("POST", rf"/repos/{REPO}/issues/4/comments", 500, after_effect=True)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 4, "labeled", label=QUEUE))
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(_ours(fake_github, 4, body)) == 1 and len(fake_github.comments(REPO, 4)) == 1
    posts = [r for r in run.requests if r.method == "POST" and r.path.endswith("/issues/4/comments")]
    assert len(posts) == 1  # found stored on the re-read: not posted again
    assert _violations(fake_github, run, 4, body, []) == []


def test_nothing_is_deleted_when_the_bots_login_is_another_accounts(fake_github, tmp_path):
    """`bot-login` names an account the token does not write as: the bot's comments cannot be told apart from
    that account's, so nothing is deleted (its twins stay) rather than guessing."""
    seed_issue(fake_github, 5, NOT_DISTRIBUTED)
    body = _render(fake_github, 5)
    bot = dict(author=fake_github.bot_login, author_type="Bot")
    twins = [fake_github.add_comment(REPO, 5, body, **bot) for _ in range(2)]
    _processed(fake_github, 5)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 5, "labeled", label=QUEUE),
                     inputs={"bot-login": "someone-else[bot]"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert [c["id"] for c in fake_github.comments(REPO, 5)] == [t["id"] for t in twins]
    assert not [r for r in run.requests if r.method == "DELETE"]
