"""Shared pytest fixtures. Keep each fixture small and documented; helpers live in their own modules.

tests/ is on sys.path (pytest's rootdir-relative import of this conftest), so `fakegithub` imports directly.
"""
from __future__ import annotations

import pytest
from fakegithub import FakeGitHub

pytest_plugins = ["fakellm.fixtures"]


@pytest.fixture
def fake_github():
    """A running GitHub stand-in on 127.0.0.1 (`.url`, `.token`, seeding/inspection helpers, `.requests`,
    `.inject(...)`). Fails the test if any response it sent disagreed with GitHub's contract."""
    with FakeGitHub() as server:
        yield server
    assert not server.violations, "the stand-in sent responses that break GitHub's contract:\n" + "\n".join(
        server.violations)


@pytest.fixture
def github_client(fake_github):
    """A triage.github.client.GitHubClient for `fake_github` whose sleeps are instant and recorded in `.slept`."""
    from triage.github.client import GitHubClient

    slept: list[float] = []
    client = GitHubClient(fake_github.token, fake_github.url, sleep=slept.append, timeout=(2, 5))
    client.slept = slept
    return client
