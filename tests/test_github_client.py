"""Tests of triage.github.client.GitHubClient: narrow unit tests against `responses` mocks (headers, retries,
errors), then the client against the GitHub stand-in over real loopback HTTP (rate-limit budget, write pacing,
timeouts and deadlines, typed errors, contents, label updates, search order and consistency), on a virtual clock
so that an hour of GitHub time passes in milliseconds."""
from __future__ import annotations

import random

import pytest
import requests
import responses

from paged_search import search_issues

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
def test_the_pager_refuses_a_page_it_has_already_read(client):
    """A page that links to itself (its query spelt in another order) or a ring of two is refused after one
    round, not read until the budget runs out; so is a page whose body repeats an earlier page's."""
    from triage.github.client import BadRequest

    responses.get(COMMENTS, json=[{"id": 1}], headers={"Link": f'<{COMMENTS}?page=1&per_page=100>; rel="next"'},
                  match=[responses.matchers.query_param_matcher({"per_page": "100"})])
    responses.get(COMMENTS, json=[{"id": 2}], headers={"Link": f'<{COMMENTS}?per_page=100&page=1>; rel="next"'},
                  match=[responses.matchers.query_param_matcher({"per_page": "100", "page": "1"})])
    with pytest.raises(BadRequest, match="links to a page already read"):
        client.list_comments("pytorch/pytorch", 7)
    assert client.request_count == 2
    events = f"{API}/repos/pytorch/pytorch/issues/7/events"
    for page in range(1, 4):  # every link is new, but the bodies repeat
        responses.get(events, json=[{"id": 9}], headers={"Link": f'<{events}?per_page=100&page={page + 1}>; rel="next"'},
                      match=[responses.matchers.query_param_matcher(
                          {"per_page": "100", **({"page": str(page)} if page > 1 else {})})])
    with pytest.raises(BadRequest, match="repeats a page already read"):
        client.list_events("pytorch/pytorch", 7)
    assert client.request_count == 4
    # the control: distinct pages are all read
    labels = f"{API}/repos/pytorch/pytorch/labels"
    responses.get(labels, json=[{"name": "a"}], headers={"Link": f'<{labels}?per_page=100&page=2>; rel="next"'},
                  match=[responses.matchers.query_param_matcher({"per_page": "100"})])
    responses.get(labels, json=[{"name": "b"}], match=[responses.matchers.query_param_matcher(
        {"per_page": "100", "page": "2"})])
    assert [x["name"] for x in client.list_repo_labels("pytorch/pytorch")] == ["a", "b"]


@responses.activate
def test_search_stops_at_item_budget_without_fetching_more_pages(client):
    search = f"{API}/search/issues"
    responses.get(search, json={"total_count": 300, "items": [{"number": n} for n in range(100)]},
                  headers={"Link": f'<{search}?q=x&page=2>; rel="next"'})
    found = list(search_issues(client, "repo:pytorch/pytorch is:open", limit=5))
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


BOT_USER = {"login": "ptd-bot[bot]", "type": "Bot"}


@responses.activate
def test_create_comment_after_502_returns_the_comment_that_was_stored(client, slept):
    marker = "<!-- ptd-triage:routed -->"
    responses.post(COMMENTS, status=502, json={"message": "Server Error"})
    responses.get(COMMENTS, json=[{"id": 1, "body": "unrelated", "user": BOT_USER},
                                  {"id": 99, "body": f"hello\r\n{marker}", "user": BOT_USER}])
    comment = client.create_comment("pytorch/pytorch", 7, f"hello\n{marker}", own_login="ptd-bot[bot]")
    assert comment["id"] == 99
    assert [c.request.method for c in responses.calls] == ["POST", "GET"]  # no second POST


@responses.activate
def test_create_comment_after_502_posts_again_when_the_comment_is_absent(client):
    marker = "<!-- ptd-triage:routed -->"
    responses.post(COMMENTS, status=502, json={"message": "Server Error"})
    responses.get(COMMENTS, json=[])
    responses.post(COMMENTS, status=201, json={"id": 5, "body": marker})
    assert client.create_comment("pytorch/pytorch", 7, marker, own_login="ptd-bot[bot]")["id"] == 5
    assert [c.request.method for c in responses.calls] == ["POST", "GET", "POST"]


@responses.activate
def test_create_comment_after_502_never_takes_a_persons_or_another_bots_comment_as_ours(client):
    """Issue 37: the marker alone proved nothing: a person's comment carrying it (or another bot's, or the same
    account's with another body) was taken as ours, and later deleted as a twin. Only our login AND our body."""
    marker = "<!-- ptd-triage:routed -->"
    body = f"hello\n{marker}"
    responses.post(COMMENTS, status=502, json={"message": "Server Error"})
    responses.get(COMMENTS, json=[{"id": 1, "body": body, "user": {"login": "a-person", "type": "User"}},
                                  {"id": 2, "body": body, "user": {"login": "pytorch-bot[bot]", "type": "Bot"}},
                                  {"id": 3, "body": f"another text\n{marker}", "user": BOT_USER}])
    responses.post(COMMENTS, status=201, json={"id": 5, "body": body, "user": BOT_USER})
    assert client.create_comment("pytorch/pytorch", 7, body, own_login="ptd-bot[bot]")["id"] == 5
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
    destructive = ("remove", "delete", "replace", "set_labels", "close", "edit", "update", "assign", "lock",
                   "release")
    public = [name for name in dir(GitHubClient) if not name.startswith("_")]
    # update_label changes a repository label's colour and description only (see test_update_label_*); the comment
    # claim's two removals take only the bot's own: a reaction by id, a comment whose author is the bot (issue 30)
    assert sorted(name for name in public if any(word in name for word in destructive)) == [
        "delete_own_comment", "release_claim", "update_label"]


@responses.activate
def test_delete_own_comment_refuses_anyone_elses_comment_with_nothing_sent(client):
    comment = {"id": 5, "user": {"login": "someone"}, "body": "<!-- ptd-triage:not_distributed -->"}
    for login in ("github-actions[bot]", ""):
        with pytest.raises(ValueError, match="only our own"):
            client.delete_own_comment("pytorch/pytorch", comment, login)
    assert client.request_count == 0
    responses.add(responses.DELETE, f"{API}/repos/pytorch/pytorch/issues/comments/5", status=204)
    assert client.delete_own_comment("pytorch/pytorch", comment, "someone") is True
    responses.replace(responses.DELETE, f"{API}/repos/pytorch/pytorch/issues/comments/5",
                      status=404, json={"message": "Not Found"})
    assert client.delete_own_comment("pytorch/pytorch", comment, "someone") is False  # already gone


# ---- against the stand-in over loopback HTTP ---------------------------------------------------------------------

import time  # noqa: E402
from email.utils import format_datetime  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

from fakegithub import FakeGitHub  # noqa: E402
from fakegithub import RateLimits, VirtualClock  # noqa: E402

from triage.http.errors import (AuthError, BadRequest, BudgetExhausted, NotFound, RateLimited,  # noqa: E402
                                Transient, is_fatal_for_run)

REPO = "pytorch/pytorch"


@pytest.fixture
def stand_in(request):
    """A stand-in on a virtual clock; `@with_options(...)` passes its RateLimits and search options."""
    options = dict(getattr(request, "param", {}))
    clock = VirtualClock()
    with FakeGitHub(clock=clock, **options) as server:
        server.vclock = clock
        yield server
    assert not server.violations, "\n".join(server.violations)


def with_options(**options):
    return pytest.mark.parametrize("stand_in", [options], indirect=True, ids=[""])


def on_stand_in(server, **kwargs) -> GitHubClient:
    """A client sharing the stand-in's virtual clock: its sleeps advance the server's time."""
    kwargs.setdefault("rng", random.Random(0))
    return GitHubClient(server.token, server.url, clock=server.vclock, sleep=server.vclock.sleep, **kwargs)


def seed(server, count: int, labels=("oncall: distributed",)) -> None:
    for number in range(1, count + 1):
        server.add_issue(REPO, number, title=f"issue {number}", labels=list(labels))


def test_rate_budget_and_request_kinds_are_read_from_every_answer(stand_in):
    stand_in.rate_limits.core_per_hour = 1000
    stand_in._core.limit = 1000
    seed(stand_in, 3)
    client = on_stand_in(stand_in)
    assert client.rate is None
    client.get_issue(REPO, 1)
    client.add_labels(REPO, 1, ["triaged"])
    list(search_issues(client, f"repo:{REPO} is:issue", limit=10))
    assert client.requests_by_kind == {"read": 1, "write": 1, "search": 1} and client.request_count == 3
    assert (client.rate.limit, client.rate.remaining, client.rate.used) == (1000, 998, 2)
    assert client.rate.reset == int(stand_in.vclock()) + 3600
    assert client.rates["search"].limit == 30 and client.rates["search"].remaining == 29
    assert client.stats()["rate_remaining"] == 998


@with_options(rate_limits=RateLimits(core_per_hour=5))
def test_reserve_reached_raises_budget_exhausted_with_nothing_sent(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in, min_remaining=2)
    for _ in range(3):
        client.get_issue(REPO, 1)
    assert client.rate.remaining == 2
    sent = len(stand_in.requests)
    with pytest.raises(BudgetExhausted, match=r"reserve reached: 2 of 5 core requests left") as info:
        client.add_labels(REPO, 1, ["triaged"])
    assert len(stand_in.requests) == sent and stand_in.issue_labels(REPO, 1) == ["oncall: distributed"]
    assert is_fatal_for_run(info.value) and isinstance(info.value, GitHubError)
    assert not stand_in.limits_tripped and stand_in.vclock.slept == []


def test_the_reserve_is_kept_in_the_core_budget_not_the_search_budget(stand_in):
    """A sweep's (or shadow's) reserve of 50 is for the event runs' hourly core budget; the search budget is 30 a
    minute, so a reserve there would make every search page wait for the minute to end. The search waits only
    once it is spent."""
    seed(stand_in, 3)
    client = on_stand_in(stand_in)
    with client.reserve(50):
        for _ in range(3):
            client.search_page(f"repo:{REPO} is:issue")
    assert client.rates["search"].remaining == 27 and stand_in.vclock.slept == []


@with_options(rate_limits=RateLimits(core_per_hour=6))
def test_a_scoped_reserve_holds_inside_its_block_only(stand_in):
    """`reserve(n)` (a sweep's reserve for the event runs after it) refuses inside the block and is gone after it;
    the larger of it and `min_remaining` holds; nesting keeps the larger."""
    seed(stand_in, 1)
    client = on_stand_in(stand_in, min_remaining=1)
    client.get_issue(REPO, 1)
    client.get_issue(REPO, 1)
    assert client.rate.remaining == 4
    with client.reserve(4):
        with client.reserve(2), pytest.raises(BudgetExhausted, match=r"reserve reached: 4 of 6 .*\(reserve 4\)"):
            client.get_issue(REPO, 1)
    assert client.scoped_reserve == 0 and client.min_remaining == 1
    client.get_issue(REPO, 1)  # the block is over: the client's own reserve (1) is what holds
    assert client.rate.remaining == 3 and not stand_in.limits_tripped


@with_options(rate_limits=RateLimits(core_per_hour=2))
def test_an_exhausted_budget_that_resets_soon_is_waited_for(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in)
    client.get_issue(REPO, 1)
    client.get_issue(REPO, 1)
    assert client.rate.remaining == 0
    stand_in.vclock.advance(3600 - 30)  # the window resets in 30 s: within max_wait
    client.get_issue(REPO, 1)
    assert stand_in.vclock.slept == [31.0] and client.rate.remaining == 1
    assert not stand_in.limits_tripped  # the client never sent a request the server had to refuse


@with_options(rate_limits=RateLimits(core_per_hour=1))
def test_the_servers_primary_limit_refusal_is_rate_limited(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in, max_retries=0)
    client.get_issue(REPO, 1)  # spends the only request
    client.rates.clear()  # as if another job had spent it: this client does not know
    with pytest.raises(RateLimited, match="more than max_wait") as info:
        client.get_issue(REPO, 1)
    assert info.value.status == 403 and stand_in.limit_events[0].kind == "primary"


@with_options(rate_limits=RateLimits(writes_per_minute=80, writes_per_hour=500))
def test_secondary_limit_403_waits_retry_after_then_succeeds(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in, writes_per_minute=1000, writes_per_hour=1000)  # pacing off: trip it
    for n in range(80):
        client.create_label(REPO, f"label-{n}", "ededed", "")
    client.create_label(REPO, "label-80", "ededed", "")
    assert [e.kind for e in stand_in.limit_events] == ["secondary-minute"]
    assert stand_in.vclock.slept == [60.0]  # the stand-in's retry-after
    assert "label-80" in stand_in.repo_labels(REPO)
    assert [r.status for r in stand_in.requests[-2:]] == [403, 201]


@with_options(rate_limits=RateLimits.github_token())
def test_default_pacing_never_trips_the_secondary_limits(stand_in):
    seed(stand_in, 150)
    client = on_stand_in(stand_in, max_wait=3600)
    for number in range(1, 151):
        client.get_issue(REPO, number)
        client.add_labels(REPO, number, ["triaged"])
        client.create_comment(REPO, number, "routed")
    assert not stand_in.limits_tripped
    assert stand_in.peak_writes(60) <= 60 and stand_in.peak_writes(3600) <= 300
    assert client.requests_by_kind == {"read": 150, "write": 300, "search": 0}
    # 300 writes at 60 a minute: four minutes of pacing, all of it on the virtual clock
    assert sum(stand_in.vclock.slept) == pytest.approx(240.0, abs=1.0)
    assert client.pacer.waited == pytest.approx(sum(stand_in.vclock.slept))


@with_options(rate_limits=RateLimits.github_token())
def test_hourly_write_cap_stops_cleanly_instead_of_sleeping_for_an_hour(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in, writes_per_minute=450, writes_per_hour=450)
    for n in range(450):
        stand_in.vclock.advance(2.0)  # under 80 a minute at the server too
        client.create_label(REPO, f"l{n}", "ededed", "")
    sent = len(stand_in.requests)
    with pytest.raises(BudgetExhausted, match=r"pacing writes .* would wait \d+s, more than 120s"):
        client.create_label(REPO, "one-too-many", "ededed", "")
    assert len(stand_in.requests) == sent and not stand_in.limits_tripped


def test_retry_after_as_an_http_date_from_the_stand_in(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in)
    when = format_datetime(datetime.fromtimestamp(stand_in.vclock() + 45, timezone.utc), usegmt=True)
    stand_in.inject("GET", rf"/repos/{REPO}/issues/1", 429, headers={"Retry-After": when})
    assert client.get_issue(REPO, 1)["number"] == 1
    assert stand_in.vclock.slept == [45.0]


def test_a_server_that_never_answers_ends_at_the_read_timeout(fake_github):
    fake_github.add_issue(REPO, 1)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/1", 200, delay=3.0, body={}, times=5)
    client = GitHubClient(fake_github.token, fake_github.url, timeout=(1, 0.3), max_retries=0)
    started = time.monotonic()
    with pytest.raises(Transient, match=r"\(no response\): ReadTimeout") as info:
        client.get_issue(REPO, 1)
    assert 0.25 < time.monotonic() - started < 2.9  # under the server's 3 s: the read timeout ended it
    assert not is_fatal_for_run(info.value)  # the next issue may well work


def test_a_deadline_ends_the_whole_call_however_many_retries_are_left(fake_github):
    fake_github.add_issue(REPO, 1)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/1", 200, delay=3.0, body={}, times=10)
    client = GitHubClient(fake_github.token, fake_github.url, timeout=(5, 20), max_retries=5,
                          backoff_base=0.05, rng=random.Random(0))
    started = time.monotonic()
    with client.deadline(0.6):
        with pytest.raises(BudgetExhausted, match="deadline") as info:
            client.get_issue(REPO, 1)
    elapsed = time.monotonic() - started
    assert 0.5 < elapsed < 2.9, elapsed  # under one 3 s answer: the read timeouts were cut to what was left of 0.6 s
    assert client.deadline_at is None  # the deadline ends with the block
    assert isinstance(info.value.__cause__, Transient)


def test_nested_deadlines_keep_the_earlier_one(stand_in):
    client = on_stand_in(stand_in)
    with client.deadline(10):
        outer = client.deadline_at
        with client.deadline(100):
            assert client.deadline_at == outer
        with client.deadline(1):
            assert client.deadline_at == stand_in.vclock() + 1
    assert client.deadline_at is None


def test_a_write_that_pacing_would_delay_past_the_deadline_is_not_sent(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in, writes_per_minute=2)
    client.add_labels(REPO, 1, ["a"])
    client.add_labels(REPO, 1, ["b"])
    sent = len(stand_in.requests)
    with client.deadline(30), pytest.raises(BudgetExhausted, match="past the deadline; nothing sent"):
        client.add_labels(REPO, 1, ["c"])
    assert len(stand_in.requests) == sent and stand_in.vclock.slept == []


def test_an_issues_writes_are_refused_together_when_pacing_could_not_send_them_all(stand_in):
    """room_for: the writes an issue needs are checked before the first one, so none is sent when the last would
    have to wait past the deadline (a comment without its labels is worse than neither)."""
    seed(stand_in, 1)
    client = on_stand_in(stand_in, writes_per_minute=3)
    client.add_labels(REPO, 1, ["a"])
    sent = len(stand_in.requests)
    with client.deadline(30):
        client.room_for(2, 2)  # two more fit in this minute
        refused = r"^GitHub API POST \(the issue.s writes\) not sent: 3 writes in 4 requests would wait 60s"
        with pytest.raises(BudgetExhausted, match=refused):
            client.room_for(4, 3)
    client.room_for(4, 3)  # without a deadline, a minute's wait is within max_wait: the writes will just wait
    assert len(stand_in.requests) == sent and stand_in.vclock.slept == []


def test_the_pacers_wait_for_several_writes():
    from triage.http.pacing import WritePacer

    now = [1000.0]
    pacer = WritePacer(per_minute=3, per_hour=5, clock=lambda: now[0], sleep=lambda s: None)
    assert pacer.wait_for(3, now[0]) == 0.0
    for at in (1000.0, 1010.0, 1020.0):
        now[0] = at
        pacer.acquire()
    now[0] = 1030.0
    assert pacer.wait_for(1, now[0]) == pytest.approx(30.0)  # the write at 1000 leaves the minute
    assert pacer.wait_for(2, now[0]) == pytest.approx(40.0)  # and the one at 1010
    assert pacer.wait_for(1, now[0]) == pacer.wait_needed(now[0])
    assert pacer.wait_for(3, now[0]) == pytest.approx(3600 - 30.0)  # the hour's cap: 3 sent + 3 > 5


def test_typed_errors_per_status_from_the_stand_in(stand_in):
    seed(stand_in, 1)
    client = on_stand_in(stand_in, max_retries=1)
    with pytest.raises(NotFound):
        client.get_issue(REPO, 999)
    client.create_label(REPO, "dup", "ededed", "")
    with pytest.raises(BadRequest, match=r"\(422\): Validation Failed \(already_exists\)"):
        client.create_label(REPO, "dup", "ededed", "")
    stand_in.inject("GET", rf"/repos/{REPO}/issues/1", 403, body={"message": "Resource not accessible by "
                                                                   "integration", "documentation_url": "x"})
    with pytest.raises(AuthError, match="Resource not accessible"):
        client.get_issue(REPO, 1)
    stand_in.inject("GET", rf"/repos/{REPO}/issues/1", 503, times=2)
    with pytest.raises(Transient, match="gave up after 2 attempts"):
        client.get_issue(REPO, 1)
    with pytest.raises(AuthError, match=r"\(401\): Bad credentials"):
        GitHubClient("ghs_wrong_token_value", stand_in.url, sleep=stand_in.vclock.sleep).get_issue(REPO, 1)
    for cls in (NotFound, BadRequest, AuthError, Transient, RateLimited, BudgetExhausted):
        assert issubclass(cls, GitHubError)


def test_token_never_appears_in_errors_logs_or_reprs_on_the_stand_in(stand_in, caplog):
    import logging

    secret = "ghs_ThisIsTheSecretInstallationToken01"
    stand_in.add_token(secret, "github-actions[bot]")
    seed(stand_in, 1)
    client = GitHubClient(secret, stand_in.url, clock=stand_in.vclock, sleep=stand_in.vclock.sleep, max_retries=1)
    caplog.set_level(logging.DEBUG)
    stand_in.inject("GET", rf"/repos/{REPO}/issues/1", 500, body={"message": f"echo Authorization: Bearer {secret}"},
                    times=2)
    errors = []
    with pytest.raises(Transient) as info:
        client.get_issue(REPO, 1)
    errors.append(info.value)
    client.get_issue(REPO, 1)  # learns the budget
    client.min_remaining = 10**6
    with pytest.raises(BudgetExhausted) as info:  # then the reserve refuses to send
        client.get_issue(REPO, 1)
    errors.append(info.value)
    texts = [str(e) for e in errors] + [repr(e) for e in errors] + [repr(client), caplog.text]
    assert all(secret not in text for text in texts)


def test_get_contents_decodes_files_and_says_none_for_missing(stand_in):
    config = "queue_label: oncall: distributed\nnote: café ✓\n" * 40  # several base64 lines, non-ASCII
    stand_in.add_file(REPO, ".github/ptd-triage.yml", config)
    stand_in.add_file(REPO, ".github/ptd-triage.yml", "on: a branch\n", ref="release/2.6")
    stand_in.add_file(REPO, "bin/blob", b"\xff\xfe\x00binary")
    client = on_stand_in(stand_in)
    assert client.get_contents(REPO, ".github/ptd-triage.yml") == config
    assert client.get_contents(REPO, ".github/ptd-triage.yml", ref="release/2.6") == "on: a branch\n"
    assert client.get_contents(REPO, ".github/missing.yml") is None
    with pytest.raises(BadRequest, match=r"\.github is a directory, not a file"):
        client.get_contents(REPO, ".github")
    with pytest.raises(BadRequest, match="is not UTF-8 text"):
        client.get_contents(REPO, "bin/blob")
    for bad in ("", "/etc/passwd", "a/../b", "a//b", "a\\b"):
        with pytest.raises(ValueError, match="invalid repository file path"):
            client.get_contents(REPO, bad)
    assert [r.query.get("ref") for r in stand_in.requests if "/contents/" in r.path][:2] == [None, "release/2.6"]


def test_update_label_sets_colour_and_description_never_the_name(stand_in):
    stand_in.add_label(REPO, "module: c10d", color="ededed", description=None)
    stand_in.add_issue(REPO, 1, labels=["module: c10d"])
    client = on_stand_in(stand_in)
    updated = client.update_label(REPO, "module: c10d", "#D73A4A", "c10d: process groups and collectives")
    assert (updated["name"], updated["color"], updated["description"]) == (
        "module: c10d", "D73A4A", "c10d: process groups and collectives")
    patch = [r for r in stand_in.requests if r.method == "PATCH"]
    assert patch[0].path == f"/repos/{REPO}/labels/module%3A%20c10d"  # the name is one path segment
    assert set(patch[0].body) == {"color", "description"}  # no new_name, ever
    assert stand_in.issue(REPO, 1)["labels"][0]["color"] == "D73A4A"
    with pytest.raises(NotFound):
        client.update_label(REPO, "no such label", "ededed", "")
    with pytest.raises(ValueError, match="invalid label colour"):
        client.update_label(REPO, "module: c10d", "red", "")


def test_search_passes_sort_and_order_oldest_first_by_default(stand_in):
    seed(stand_in, 5)
    client = on_stand_in(stand_in)
    assert [i["number"] for i in search_issues(client, f"repo:{REPO} is:issue", limit=None)] == [1, 2, 3, 4, 5]
    newest = search_issues(client, f"repo:{REPO} is:issue", order="desc", limit=2)
    assert [i["number"] for i in newest] == [5, 4]
    assert stand_in.requests[0].query == {"q": f"repo:{REPO} is:issue", "order": "asc", "sort": "created",
                                          "per_page": "100"}
    with pytest.raises(ValueError, match="unknown search sort"):
        client.search_page("x", sort="stars")


QUERY = f'repo:{REPO} is:issue is:open label:"oncall: distributed" -label:"triaged"'


def naive_sweep(client) -> list[int]:
    """Label every issue of the query while paging through it, the way that loses issues."""
    seen = []
    for item in search_issues(client, QUERY, limit=None):
        seen.append(item["number"])
        client.add_labels(REPO, item["number"], ["triaged"])
    return seen


@with_options(search_mode="immediate")
def test_immediate_search_shifts_pages_under_a_naive_sweep(stand_in):
    seed(stand_in, 250)
    client = on_stand_in(stand_in, writes_per_minute=1000, writes_per_hour=1000)
    seen = naive_sweep(client)
    assert len(seen) == 150  # page 2 started after 100 had left the results: 100 issues were skipped
    left = [n for n in range(1, 251) if "triaged" not in stand_in.issue_labels(REPO, n)]
    assert len(left) == 100


@with_options(search_mode="lagging", search_lag_seconds=30.0)
def test_lagging_search_still_shows_written_issues_until_the_index_catches_up(stand_in):
    seed(stand_in, 3)
    client = on_stand_in(stand_in)
    client.add_labels(REPO, 2, ["triaged"])
    stale = {i["number"]: [label["name"] for label in i["labels"]] for i in search_issues(client, QUERY, limit=None)}
    assert sorted(stale) == [1, 2, 3] and stale[2] == ["oncall: distributed"]  # the stale copy
    stand_in.vclock.advance(31)
    assert [i["number"] for i in search_issues(client, QUERY, limit=None)] == [1, 3]


@with_options(search_mode="lagging", search_lag_requests=3)
def test_search_lag_can_be_counted_in_requests(stand_in):
    seed(stand_in, 2)
    client = on_stand_in(stand_in)
    client.add_labels(REPO, 1, ["triaged"])
    assert [i["number"] for i in search_issues(client, QUERY, limit=None)] == [1, 2]
    client.get_issue(REPO, 2)
    assert [i["number"] for i in search_issues(client, QUERY, limit=None)] == [2]


def test_stand_in_rejects_unknown_search_modes():
    with pytest.raises(ValueError, match="search_mode"):
        FakeGitHub(search_mode="eventually")
