"""The write guard (issue 36): in a dry run, in plan mode and in shadow mode nothing writes, by construction (the run's
executor is a `DryRun`, which holds no client), and, as a second line of defence, the GitHub client those modes
build refuses every request that is not a GET: one clear error (`ReadOnly`), and nothing reaches the stand-in.

Each mode's client is built the way that mode builds it (the Action's settings from the runner's environment; the
CLI's options), then every write the client has is sent through it against the loopback stand-in. The control: a
live run's client writes. And end to end: a triage service handed a live executor over a dry run's client (a bug
planted on purpose) fails the issue with the guard's error, and the stand-in sees no write."""
from __future__ import annotations

import argparse

import pytest
from actionrun import NOT_DISTRIBUTED, REPO, seed_issue

from triage.action.context import github_client
from triage.action.settings import settings_from_environ
from triage.config.bundle import load_bundle
from triage.http.errors import ReadOnly, is_fatal_for_run
from triage.service.executor import DryRun, LiveExecutor, executor_for
from triage.service.triager import Triager


def _settings(fake, **inputs: str):
    env = {"GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": fake.url, "INPUT_GITHUB_TOKEN": fake.token}
    env.update({f"INPUT_{name.replace('-', '_').upper()}": value for name, value in inputs.items()})
    return settings_from_environ(env)


def _every_write(client, number: int, comment_id: int) -> list[tuple[str, object]]:
    """Send each write the client has; what each did (the error, or what GitHub answered)."""
    writes = [
        ("comment", lambda: client.create_comment(REPO, number, "hello", own_login="github-actions[bot]")),
        ("labels", lambda: client.add_labels(REPO, number, ["ptd-bot-triaged"])),
        ("claim", lambda: client.claim_issue(REPO, number)),
        ("reaction", lambda: client.add_reaction(REPO, comment_id, "eyes")),
        ("release", lambda: client.release_claim(REPO, number, 1)),
        ("delete", lambda: client.delete_own_comment(REPO, {"id": comment_id, "user": {"login": "u"}}, "u")),
        ("create label", lambda: client.create_label(REPO, "x", "ededed", "d")),
        ("update label", lambda: client.update_label(REPO, "x", "ededed", "d")),
    ]
    done = []
    for name, write in writes:
        try:
            done.append((name, write()))
        except ReadOnly as exc:
            done.append((name, exc))
    return done


@pytest.mark.parametrize("mode", ["dry-run", "plan", "shadow", "cli --dry-run", "cli shadow"])
def test_a_read_only_modes_client_refuses_every_write_and_sends_none(fake_github, mode):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    comment = fake_github.add_comment(REPO, 1, "a person's comment", author="u")
    if mode.startswith("cli"):
        from triage.cli.common import github_client as cli_client

        args = argparse.Namespace(repo=REPO, api_url=fake_github.url)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("GITHUB_TOKEN", fake_github.token)
            client = cli_client(args, write=False)  # what `sweep --dry-run` and `shadow` ask for
    else:
        inputs = {"dry-run": {"dry_run": "true"}, "plan": {"mode": "plan"}, "shadow": {"mode": "shadow"}}[mode]
        client = github_client(_settings(fake_github, **{k.replace("_", "-"): v for k, v in inputs.items()}))
    before = len(fake_github.requests)
    done = _every_write(client, 1, comment["id"])
    assert all(isinstance(what, ReadOnly) for _, what in done), done
    assert len({str(what) for _, what in done}) == len(done)  # each names its own request
    assert all("not sent" in str(what) and "read-only" in str(what) for _, what in done)
    assert is_fatal_for_run(done[0][1])  # a sweep stops at once: every further write would be refused too
    assert fake_github.requests[before:] == [] and fake_github.writes() == []
    assert client.get_issue(REPO, 1)["number"] == 1  # reads still go through
    assert fake_github.comments(REPO, 1) == [comment] and fake_github.issue_labels(REPO, 1) != ["ptd-bot-triaged"]


def test_the_control_a_live_runs_client_writes(fake_github):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    client = github_client(_settings(fake_github))
    assert not client.read_only
    client.add_labels(REPO, 1, ["ptd-bot-triaged"])
    assert [r.method for r in fake_github.writes()] == ["POST"]


def test_a_dry_runs_executor_holds_no_client():
    assert isinstance(executor_for(object(), REPO, dry_run=True, own_login="x"), DryRun)
    assert not hasattr(DryRun(), "client")
    assert isinstance(executor_for(object(), REPO, dry_run=False, own_login="x"), LiveExecutor)


def test_a_live_executor_planted_in_a_dry_run_is_stopped_by_the_client(fake_github):
    """The second line of defence on its own: a dry run's client under a live executor (a bug planted on purpose).
    The issue fails with the guard's error and the stand-in sees no write: not the comment, not the labels."""
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    client = github_client(_settings(fake_github, **{"dry-run": "true"}))
    planted = LiveExecutor(client, REPO, own_login="github-actions[bot]")
    result = Triager(client, load_bundle(), repo=REPO, executor=planted, own_logins=("github-actions[bot]",)).triage(1)
    assert result.error and "read-only" in result.error and result.fatal
    assert fake_github.writes() == [] and result.applied.labels == () and result.applied.comment_template is None
    # The same issue through the dry run's own executor: planned, recorded, nothing sent.
    dry = Triager(client, load_bundle(), repo=REPO, dry_run=True, own_logins=("github-actions[bot]",)).triage(1)
    assert dry.error is None and dry.plan is not None and dry.plan.comment is not None and dry.applied.dry_run
    assert fake_github.writes() == []
