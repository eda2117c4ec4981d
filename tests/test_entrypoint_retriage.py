"""End to end: the `/ptd-retriage` command (issue_comment.created) and who may use it.

Allowed: repository roles triage, write, maintain, admin (acknowledged with 👀 once the issue is read again, so an
opt-out added since the command is seen before any write, then re-triaged). Denied: read,
none: answered with one 😕 reaction on the command's comment and nothing else (no reply, no label), once however
often the event is delivered. Ignored: bots (including ourselves), comments on pull requests, the command inside
fenced code or a `>` quote: nothing is written at all.
"""
from __future__ import annotations

import pytest
from actionrun import MARKER, NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, expected_plan, run_action, seed_issue

REACTIONS = f"/repos/{REPO}/issues/comments/{{id}}/reactions"

# Every run that talks to GitHub first reads the repository's config file (one contents request; `config: none`
# skips it). It is per run, not per issue: the budgets below count the calls about the issue.
CONFIG_READ = f"GET /repos/{REPO}/contents/.github/ptd-triage.yml"


def _calls(run) -> list[str]:
    return [c for c in run.calls() if c != CONFIG_READ]


def _triaged_issue(fake, number: int, *, extra_labels=()) -> None:
    """An issue the bot already processed (comment posted, marker label) that a human now wants redone."""
    seed_issue(fake, number, NOT_DISTRIBUTED)
    plan = expected_plan(fake, number)
    seed_issue(fake, number, NOT_DISTRIBUTED, labels=(QUEUE, MARKER, *extra_labels))
    fake.add_comment(REPO, number, plan.comment.body, author=fake.bot_login, author_type="Bot")


def _command(fake, number: int, body: str, *, login: str, role: str | None, user_type: str = "User") -> dict:
    if role is not None:
        fake.set_role(REPO, login, role, user_type=user_type)
    return fake.add_comment(REPO, number, body, author=login, author_type=user_type)


@pytest.mark.parametrize("role", ["admin", "maintain", "write", "triage"])
def test_allowed_roles_retriage_with_force_and_a_reaction(fake_github, tmp_path, role):
    seed_issue(fake_github, 41, NOT_DISTRIBUTED, labels=(QUEUE, MARKER))  # processed, labels since lost
    comment = _command(fake_github, 41, "Please look again.\n/ptd-retriage\n", login=f"user-{role}", role=role)
    plan = expected_plan(fake_github, 41, force=True)
    assert plan.add_labels, "a forced re-triage of this issue must have labels to add"

    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 41, comment))

    assert run.returncode == 0, run.stdout + run.stderr
    calls = _calls(run)
    assert calls[0] == f"GET /repos/{REPO}/collaborators/user-{role}/permission"
    # The issue read again (and its comments, since the command is one), then acknowledged before any other write
    assert calls[1:4] == [f"GET /repos/{REPO}/issues/41", f"GET /repos/{REPO}/issues/41/comments",
                          f"POST {REACTIONS.format(id=comment['id'])}"]
    assert fake_github.reactions(REPO, comment["id"])[0]["content"] == "eyes"
    # Then what any run on one issue costs (the comment's claim, the comment, the comments read again, the labels):
    # a command costs two calls more than an event run, the role check and the reaction.
    assert calls[4:] == [f"POST /repos/{REPO}/issues/41/reactions", f"POST /repos/{REPO}/issues/41/comments",
                         f"GET /repos/{REPO}/issues/41/comments", f"POST /repos/{REPO}/issues/41/labels"]
    assert set(plan.add_labels) <= set(fake_github.issue_labels(REPO, 41))
    assert run.outputs["outcome"] == plan.outcome
    assert f"/ptd-retriage by user-{role} ({role})" in run.stdout


@pytest.mark.parametrize("role", ["read", "none"])
def test_read_and_none_roles_are_denied_with_one_reaction_and_nothing_else(fake_github, tmp_path, role):
    seed_issue(fake_github, 42, NOT_DISTRIBUTED)
    comment = _command(fake_github, 42, "/ptd-retriage", login=f"user-{role}", role=role)

    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 42, comment))

    assert run.returncode == 0
    assert _calls(run) == [f"GET /repos/{REPO}/collaborators/user-{role}/permission",
                           f"POST {REACTIONS.format(id=comment['id'])}"]
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["confused"]
    assert f"whose role is '{role}'" in run.stdout and "'confused' reaction" in run.stdout
    assert run.outputs["outcome"] == "ignored"
    assert fake_github.issue_labels(REPO, 42) == [QUEUE]
    assert [c["id"] for c in fake_github.comments(REPO, 42)] == [comment["id"]]  # no reply
    assert fake_github.issue_reactions(REPO, 42) == []  # no claim: nothing was triaged


def test_a_refused_command_delivered_again_adds_nothing(fake_github, tmp_path):
    """A re-run of the job, or the same person posting the command again on the same comment's event: GitHub keeps
    one reaction of a kind per account on a comment, so the refusal never piles up."""
    seed_issue(fake_github, 51, NOT_DISTRIBUTED)
    comment = _command(fake_github, 51, "/ptd-retriage", login="passer-by", role="read")
    for attempt in range(3):
        run = run_action(fake_github, tmp_path / str(attempt), "issue_comment",
                         comment_payload(fake_github, 51, comment))
        assert run.returncode == 0, run.stdout
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["confused"]
    assert [c["id"] for c in fake_github.comments(REPO, 51)] == [comment["id"]]


def test_a_refused_command_in_dry_run_writes_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 52, NOT_DISTRIBUTED)
    comment = _command(fake_github, 52, "/ptd-retriage", login="passer-by", role="read")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 52, comment),
                     inputs={"dry-run": "true"})
    assert run.returncode == 0 and run.writes == []
    assert "Nothing written (dry run)" in run.stdout


def test_a_refusal_the_token_may_not_write_does_not_fail_the_run(fake_github, tmp_path):
    seed_issue(fake_github, 53, NOT_DISTRIBUTED)
    comment = _command(fake_github, 53, "/ptd-retriage", login="passer-by", role="read")
    fake_github.inject("POST", f"/repos/{REPO}/issues/comments/\\d+/reactions", 403, times=5)
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 53, comment))
    assert run.returncode == 0, run.stdout
    assert run.outputs["outcome"] == "ignored" and "could not be added" in run.stdout
    assert fake_github.reactions(REPO, comment["id"]) == []


def test_unknown_user_is_denied(fake_github, tmp_path):
    seed_issue(fake_github, 43, NOT_DISTRIBUTED)
    comment = fake_github.add_comment(REPO, 43, "/ptd-retriage", author="drive-by")
    payload = comment_payload(fake_github, 43, comment)
    payload["comment"]["user"]["login"] = "ghost-user-not-on-github"  # the permission API answers 404

    run = run_action(fake_github, tmp_path, "issue_comment", payload)

    assert run.returncode == 0 and "whose role is 'none'" in run.stdout
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["confused"]
    assert fake_github.issue_labels(REPO, 43) == [QUEUE]


@pytest.mark.parametrize("login,user_type", [("github-actions[bot]", "Bot"), ("renovate[bot]", "User"),
                                             ("helper-app", "Bot")])
def test_bots_are_ignored_without_asking_for_permission(fake_github, tmp_path, login, user_type):
    seed_issue(fake_github, 44, NOT_DISTRIBUTED)
    comment = _command(fake_github, 44, "/ptd-retriage", login=login, role="admin", user_type=user_type)
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 44, comment))
    assert run.returncode == 0 and run.requests == []
    assert "bot" in run.stdout


def test_our_own_comment_quoting_the_command_is_ignored(fake_github, tmp_path):
    seed_issue(fake_github, 45, NOT_DISTRIBUTED)
    body = "A maintainer can run\n/ptd-retriage\n\n<!-- ptd-triage:not_distributed -->\n"
    comment = _command(fake_github, 45, body, login="bot-as-user", role="admin")  # a PAT user posting for us
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 45, comment))
    assert run.returncode == 0 and run.requests == []


def test_comment_on_a_pull_request_is_ignored(fake_github, tmp_path):
    seed_issue(fake_github, 46, NOT_DISTRIBUTED, pull_request=True)
    comment = _command(fake_github, 46, "/ptd-retriage", login="maint", role="maintain")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 46, comment))
    assert run.returncode == 0 and run.requests == []
    assert "pull request" in run.stdout


@pytest.mark.parametrize("body", [
    "```\n/ptd-retriage\n```",
    "~~~text\n/ptd-retriage\n~~~",
    "> /ptd-retriage",
    "   > /ptd-retriage",
    "<!--\n/ptd-retriage\n-->",
    "Please /ptd-retriage this",
    "/ptd-retriage please",
    "/PTD-RETRIAGE",
    "\n    /ptd-retriage",
])
def test_command_must_be_a_line_of_its_own_outside_code_and_quotes(fake_github, tmp_path, body):
    seed_issue(fake_github, 47, NOT_DISTRIBUTED)
    comment = _command(fake_github, 47, body, login="maint", role="maintain")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 47, comment))
    # Knowing the command word takes the repository's config file (the one per-run read); nothing else.
    assert run.returncode == 0 and _calls(run) == [] and run.writes == []
    assert "has no line '/ptd-retriage'" in run.stdout or "has no command line" in run.stdout


def test_retriage_never_duplicates_the_comment_and_only_adds_labels(fake_github, tmp_path):
    _triaged_issue(fake_github, 48, extra_labels=("bug",))
    comment = _command(fake_github, 48, "/ptd-retriage", login="maint", role="maintain")

    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 48, comment))

    assert run.returncode == 0, run.stdout
    assert not any(r.method == "POST" and r.path.endswith("/48/comments") for r in run.requests)
    assert not any(r.method in ("DELETE", "PUT", "PATCH") for r in run.requests)
    assert {QUEUE, MARKER, "bug"} <= set(fake_github.issue_labels(REPO, 48))
    markers = [c for c in fake_github.comments(REPO, 48) if "<!-- ptd-triage:" in (c["body"] or "")]
    assert len(markers) == 1


def test_retriage_on_an_issue_outside_the_queue_is_ignored(fake_github, tmp_path):
    seed_issue(fake_github, 49, NOT_DISTRIBUTED, labels=("bug",))
    comment = _command(fake_github, 49, "/ptd-retriage", login="maint", role="maintain")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 49, comment))
    assert run.returncode == 0 and _calls(run) == [] and run.writes == []
    assert "does not have the queue label" in run.stdout


def test_retriage_in_dry_run_checks_permission_but_writes_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 50, NOT_DISTRIBUTED, labels=(QUEUE, MARKER))
    comment = _command(fake_github, 50, "/ptd-retriage", login="maint", role="maintain")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 50, comment),
                     inputs={"dry-run": "true"})
    assert run.returncode == 0 and run.writes == []
    assert fake_github.reactions(REPO, comment["id"]) == []
    assert run.outputs["outcome"] == expected_plan(fake_github, 50, force=True).outcome
