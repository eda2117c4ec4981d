"""pytest fixtures for the LLM stand-ins. Register in tests/conftest.py with
`pytest_plugins = ["fakellm.fixtures"]` (or import the fixtures into a test module).

Each fixture starts a fresh stand-in on 127.0.0.1 for one test and fails the test on teardown when the stand-in
sent anything that disagrees with its provider's contract (use `server.take_violations()` in a test that provokes
one on purpose). Imports: pytest and this package.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import STAND_INS, FakeAnthropic, FakeBedrock, FakeOpenAI, StandIn


def _serve(server: StandIn) -> Iterator[StandIn]:
    with server:
        yield server
    assert not server.violations, (f"the {server.provider} stand-in broke its contract:\n"
                                   + "\n".join(server.violations))


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """An OpenAI-compatible stand-in: `.url` (…/v1) and `.api_key` for the client, `.script(...)`, `.calls`."""
    yield from _serve(FakeOpenAI())


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """An Anthropic Messages stand-in: `.url` (no /v1) and `.api_key` for the client, `.script(...)`, `.calls`."""
    yield from _serve(FakeAnthropic())


@pytest.fixture
def fake_bedrock() -> Iterator[FakeBedrock]:
    """A Bedrock Converse stand-in: `.url` (endpoint_url), `.region` and `.credentials` (AWS_* variables)."""
    yield from _serve(FakeBedrock())


@pytest.fixture(params=sorted(STAND_INS))
def fake_llm(request) -> Iterator[StandIn]:
    """Each of the three stand-ins in turn (the test runs once per provider; `.provider` says which)."""
    yield from _serve(STAND_INS[request.param]())
