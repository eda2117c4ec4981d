"""Unit tests of triage.github.client.GitHubClient against `responses` mocks (HTTP behaviour, retries, errors)."""
from __future__ import annotations

import random

import pytest
import requests
import responses

from triage.github.client import GitHubClient, GitHubError

API = "https://ghes.example.com/api/v3"
TOKEN = "ghs_SECRET_token_value_123"
ISSUE = f"{API}/repos/pytorch/pytorch/issues/7"
COMMENTS = f"{ISSUE}/comments"


@pytest.fixture
def slept():
    return []


@pytest.fixture
def client(slept):
    return GitHubClient(TOKEN, API + "/", sleep=slept.append, clock=lambda: 1_000_000.0, rng=random.Random(0))


@responses.activate
def test_sends_github_headers_and_strips_trailing_slash(client):
    responses.get(ISSUE, json={"number": 7})
    assert client.get_issue("pytorch/pytorch", 7) == {"number": 7}
    sent = responses.calls[0].request
    assert sent.url == ISSUE
    assert sent.headers["Authorization"] == f"Bearer {TOKEN}"
    assert sent.headers["Accept"] == "application/vnd.github+json"
    assert sent.headers["X-GitHub-Api-Version"] == "2022-11-28"
    assert sent.headers["User-Agent"].startswith("ptd-triage/")
    assert client.request_count == 1


@responses.activate
def test_follows_link_pagination_with_per_page_100(client):
    responses.get(COMMENTS, json=[{"id": 1}, {"id": 2}],
                  headers={"Link": f'<{COMMENTS}?per_page=100&page=2>; rel="next", <{COMMENTS}?page=2>; rel="last"'},
                  match=[responses.matchers.query_param_matcher({"per_page": "100"})])
    responses.get(COMMENTS, json=[{"id": 3}], match=[responses.matchers.query_param_matcher(
        {"per_page": "100", "page": "2"})])
    assert [c["id"] for c in client.list_comments("pytorch/pytorch", 7)] == [1, 2, 3]
    assert client.request_count == 2


@responses.activate
def test_search_stops_at_item_budget_without_fetching_more_pages(client):
    search = f"{API}/search/issues"
    responses.get(search, json={"total_count": 300, "items": [{"number": n} for n in range(100)]},
                  headers={"Link": f'<{search}?q=x&page=2>; rel="next"'})
    found = list(client.search_issues("repo:pytorch/pytorch is:open", limit=5))
    assert [i["number"] for i in found] == [0, 1, 2, 3, 4]
    assert len(responses.calls) == 1
    assert "q=repo%3Apytorch%2Fpytorch+is%3Aopen" in responses.calls[0].request.url


@responses.activate
def test_refuses_pagination_link_to_another_host(client):
    responses.get(COMMENTS, json=[{"id": 1}], headers={"Link": '<https://evil.example/steal>; rel="next"'})
    with pytest.raises(GitHubError, match="off the API host"):
        client.list_comments("pytorch/pytorch", 7)


@responses.activate
def test_retries_502_then_succeeds_with_backoff(client, slept):
    responses.get(ISSUE, status=502, json={"message": "Server Error"})
    responses.get(ISSUE, json={"number": 7})
    assert client.get_issue("pytorch/pytorch", 7)["number"] == 7
    assert len(slept) == 1 and 1.0 <= slept[0] <= 1.1
    assert client.request_count == 2


@responses.activate
def test_retries_connection_errors_and_gives_up_after_max_retries(slept):
    client = GitHubClient(TOKEN, API, sleep=slept.append, max_retries=2, rng=random.Random(0))
    responses.get(ISSUE, body=requests.ConnectionError("connection reset"))
    with pytest.raises(GitHubError, match=r"gave up after 3 attempts") as info:
        client.get_issue("pytorch/pytorch", 7)
    assert info.value.status is None
    assert len(slept) == 2 and slept[1] > slept[0]  # exponential


@responses.activate
def test_429_waits_retry_after_seconds(client, slept):
    responses.get(ISSUE, status=429, headers={"Retry-After": "7"}, json={"message": "slow down"})
    responses.get(ISSUE, json={"number": 7})
    client.get_issue("pytorch/pytorch", 7)
    assert slept == [7.0]


@responses.activate
def test_403_secondary_limit_with_retry_after(client, slept):
    responses.get(ISSUE, status=403, headers={"retry-after": "3"},
                  json={"message": "You have exceeded a secondary rate limit. Please wait a few minutes."})
    responses.get(ISSUE, json={"number": 7})
    client.get_issue("pytorch/pytorch", 7)
    assert slept == [3.0]


@responses.activate
def test_403_secondary_limit_without_headers_waits_at_least_a_minute(slept):
    client = GitHubClient(TOKEN, API, sleep=slept.append, max_wait=300)
    responses.get(ISSUE, status=403, json={"message": "You have exceeded a secondary rate limit."})
    responses.get(ISSUE, json={"number": 7})
    client.get_issue("pytorch/pytorch", 7)
    assert len(slept) == 1 and slept[0] >= 60


@responses.activate
def test_403_primary_limit_waits_until_reset(client, slept):
    responses.get(ISSUE, status=403, json={"message": "API rate limit exceeded"},
                  headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(1_000_000 + 30)})
    responses.get(ISSUE, json={"number": 7})
    client.get_issue("pytorch/pytorch", 7)
    assert len(slept) == 1 and 30 <= slept[0] <= 31


@responses.activate
def test_403_permission_error_is_not_retried(client, slept):
    responses.get(ISSUE, status=403, json={"message": "Resource not accessible by integration"})
    with pytest.raises(GitHubError, match="Resource not accessible by integration") as info:
        client.get_issue("pytorch/pytorch", 7)
    assert info.value.status == 403 and slept == [] and client.request_count == 1


@responses.activate
def test_404_is_not_retried(client, slept):
    responses.get(ISSUE, status=404, json={"message": "Not Found"})
    with pytest.raises(GitHubError) as info:
        client.get_issue("pytorch/pytorch", 7)
    assert info.value.status == 404 and slept == []
    assert str(info.value) == "GitHub API GET /repos/pytorch/pytorch/issues/7 failed (404): Not Found"


@responses.activate
def test_wait_longer_than_max_wait_fails_fast(client, slept):
    responses.get(ISSUE, status=403, json={"message": "API rate limit exceeded"},
                  headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(1_000_000 + 3600)})
    with pytest.raises(GitHubError, match="more than max_wait"):
        client.get_issue("pytorch/pytorch", 7)
    assert slept == [] and client.request_count == 1


@responses.activate
def test_create_comment_after_502_returns_the_comment_that_was_stored(client, slept):
    marker = "<!-- ptd-triage:routed -->"
    responses.post(COMMENTS, status=502, json={"message": "Server Error"})
    responses.get(COMMENTS, json=[{"id": 1, "body": "unrelated"}, {"id": 99, "body": f"hello\n{marker}"}])
    comment = client.create_comment("pytorch/pytorch", 7, f"hello\n{marker}", dedupe_marker=marker)
    assert comment["id"] == 99
    assert [c.request.method for c in responses.calls] == ["POST", "GET"]  # no second POST


@responses.activate
def test_create_comment_after_502_posts_again_when_the_comment_is_absent(client):
    marker = "<!-- ptd-triage:routed -->"
    responses.post(COMMENTS, status=502, json={"message": "Server Error"})
    responses.get(COMMENTS, json=[])
    responses.post(COMMENTS, status=201, json={"id": 5, "body": marker})
    assert client.create_comment("pytorch/pytorch", 7, marker, dedupe_marker=marker)["id"] == 5
    assert [c.request.method for c in responses.calls] == ["POST", "GET", "POST"]


@responses.activate
def test_create_comment_without_marker_is_never_blindly_retried(client):
    responses.post(COMMENTS, status=502, json={"message": "Server Error"})
    with pytest.raises(GitHubError, match="may or may not have been posted"):
        client.create_comment("pytorch/pytorch", 7, "hello")
    assert len(responses.calls) == 1


@responses.activate
def test_create_comment_is_retried_after_a_rate_limit_refusal(client, slept):
    responses.post(COMMENTS, status=429, headers={"Retry-After": "2"}, json={"message": "slow down"})
    responses.post(COMMENTS, status=201, json={"id": 8, "body": "hi"})
    assert client.create_comment("pytorch/pytorch", 7, "hi")["id"] == 8
    assert slept == [2.0]


@responses.activate
def test_add_labels_posts_labels_object_and_retries_5xx(client):
    responses.post(f"{ISSUE}/labels", status=503, json={"message": "unavailable"})
    responses.post(f"{ISSUE}/labels", json=[{"name": "module: c10d"}],
                   match=[responses.matchers.json_params_matcher({"labels": ["module: c10d"]})])
    assert client.add_labels("pytorch/pytorch", 7, ["module: c10d"]) == [{"name": "module: c10d"}]


@responses.activate
def test_token_never_appears_in_errors_or_repr(client):
    responses.get(ISSUE, status=500, json={"message": f"echo {TOKEN}"})  # even if a server echoed it back
    client.max_retries = 0
    with pytest.raises(GitHubError) as info:
        client.get_issue("pytorch/pytorch", 7)
    assert TOKEN not in repr(client) and TOKEN not in str(info.value) and "***" in str(info.value)
    assert "\n" not in str(info.value)
    responses.replace(responses.GET, ISSUE, status=401, json={"message": "Bad credentials"})
    with pytest.raises(GitHubError) as info:
        client.get_issue("pytorch/pytorch", 7)
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)


@pytest.mark.parametrize("bad", ["pytorch", "pytorch/pytorch/extra", "../etc", "owner/", "/name", "a b/c", "o/.."])
def test_malformed_repo_is_one_clear_error(client, bad):
    with pytest.raises(ValueError, match=r'invalid repository .*expected "owner/name"'):
        client.get_issue(bad, 1)
    assert client.request_count == 0


def test_client_has_no_destructive_methods():
    destructive = ("remove", "delete", "replace", "set_labels", "close", "edit", "update", "assign", "lock")
    public = [name for name in dir(GitHubClient) if not name.startswith("_")]
    assert not [name for name in public if any(word in name for word in destructive)]
