"""The service's GitHub port (triage.service.ports) is what the real client offers: checked structurally, member by
member and parameter by parameter, for the HTTP client and for the in-memory one the service tests use. Without it
the port could drift from the client (a renamed keyword, a new required argument) and only a live run would tell."""
from __future__ import annotations

import inspect
from contextlib import AbstractContextManager

import pytest
from memory_github import MemoryGitHub

from triage.github.client import GitHubClient
from triage.service.ports import GitHubPort


def port_members(protocol: type) -> dict[str, object]:
    """The protocol's own members (its protocol bases' included), by name."""
    members: dict[str, object] = {}
    for cls in reversed(protocol.__mro__):
        if cls is object or not getattr(cls, "_is_protocol", False):
            continue
        members.update({name: value for name, value in vars(cls).items()
                        if not name.startswith("_") and (callable(value) or isinstance(value, property))})
    return members


def mismatches(protocol: type, implementation: object) -> list[str]:
    """How `implementation` (an instance) fails to offer `protocol`: missing members, and methods whose calls as
    the protocol writes them it would not accept (a parameter missing, of another kind or default, or an extra
    parameter without a default)."""
    problems = []
    for name, member in port_members(protocol).items():
        if not hasattr(implementation, name):
            problems.append(f"{name}: missing")
            continue
        value = getattr(implementation, name)
        if isinstance(member, property):
            if callable(value):
                problems.append(f"{name}: a method, the port reads an attribute")
            continue
        if not callable(value):
            problems.append(f"{name}: not callable")
            continue
        wanted = inspect.signature(member).parameters
        offered = inspect.signature(value).parameters
        for pname, param in list(wanted.items())[1:]:  # past `self`
            got = offered.get(pname)
            if got is None or got.kind != param.kind:
                problems.append(f"{name}({pname}): {'missing' if got is None else got.kind.description}")
            elif param.default is not inspect.Parameter.empty and got.default != param.default:
                problems.append(f"{name}({pname}): default {got.default!r}, the port's is {param.default!r}")
        for pname, got in offered.items():
            if pname not in wanted and got.default is inspect.Parameter.empty \
                    and got.kind not in (got.VAR_POSITIONAL, got.VAR_KEYWORD):
                problems.append(f"{name}({pname}): required, the port does not pass it")
    return problems


def test_the_port_is_what_the_service_uses_and_no_more():
    assert set(port_members(GitHubPort)) == {
        "request_count", "get_issue", "list_comments", "list_events", "search_page", "create_comment",
        "add_labels", "add_reaction", "claim_issue", "release_claim", "delete_own_comment", "deadline", "reserve",
        "room_for"}


@pytest.mark.parametrize("make", [lambda: GitHubClient("token"), MemoryGitHub], ids=["http", "memory"])
def test_each_implementation_offers_the_port(make):
    client = make()
    assert mismatches(GitHubPort, client) == []
    assert isinstance(client.request_count, int)
    for scope in (client.deadline(5.0), client.deadline(None), client.reserve(10)):
        assert isinstance(scope, AbstractContextManager)
        with scope:
            pass


def test_the_check_finds_a_client_that_drifted():
    class Drifted(MemoryGitHub):
        claim_issue = None  # gone

        def search_page(self, query, *, sort="updated", order="asc"):  # another default
            return [], 0

        def add_labels(self, repo, number, labels, actor):  # a new required argument
            return []

        def get_issue(self, repo, issue):  # a renamed parameter
            return {}

    assert sorted(mismatches(GitHubPort, Drifted())) == sorted([
        "get_issue(number): missing", "get_issue(issue): required, the port does not pass it",
        "search_page(sort): default 'updated', the port's is 'created'", "claim_issue: not callable",
        "add_labels(actor): required, the port does not pass it"])
