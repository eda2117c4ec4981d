"""Tests of the GitHub stand-in itself (tests/fakegithub), and of the real client against it over loopback."""
from __future__ import annotations

import json

import pytest
import requests
from fakegithub import FakeGitHub, contract

from paged_search import search_issues

from triage.github.client import GitHubClient, GitHubError

REPO = "pytorch/pytorch"
QUEUE = "oncall: distributed"


def api(server: FakeGitHub, method: str, path: str, *, token: str | None = "default", **kwargs):
    headers = {} if token is None else {"Authorization": f"Bearer {server.token if token == 'default' else token}"}
    return requests.request(method, server.url + path, headers=headers, timeout=5, **kwargs)


def test_missing_or_invalid_token_is_401(fake_github):
    fake_github.add_issue(REPO, 1)
    assert api(fake_github, "GET", f"/repos/{REPO}/issues/1", token=None).status_code == 401
    response = api(fake_github, "GET", f"/repos/{REPO}/issues/1", token="ghs_wrong")
    assert response.status_code == 401 and response.json()["message"] == "Bad credentials"
    assert api(fake_github, "GET", f"/repos/{REPO}/issues/1").status_code == 200


@pytest.mark.parametrize("method,path", [
    ("GET", f"/repos/{REPO}/issues/99"),          # unknown issue
    ("GET", "/repos/nobody/nothing/issues/1"),     # unknown repo
    ("DELETE", f"/repos/{REPO}/issues/1/labels/bug"),  # an operation the bot must never use
    ("PATCH", f"/repos/{REPO}/issues/1"),
    ("GET", "/user/repos"),
])
def test_unknown_resources_and_unsupported_operations_are_404(fake_github, method, path):
    fake_github.add_issue(REPO, 1, labels=["bug"])
    assert api(fake_github, method, path).status_code == 404
    assert fake_github.issue_labels(REPO, 1) == ["bug"]


@pytest.mark.parametrize("path,body", [
    (f"/repos/{REPO}/issues/1/comments", {}),
    (f"/repos/{REPO}/issues/1/comments", {"body": 5}),
    (f"/repos/{REPO}/issues/1/labels", {"labels": []}),
    (f"/repos/{REPO}/issues/1/labels", {"labels": [7]}),
    (f"/repos/{REPO}/issues/comments/1/reactions", {"content": "thumbs"}),
    (f"/repos/{REPO}/labels", {"color": "ffffff"}),
])
def test_bodies_failing_the_request_schema_are_422_and_change_nothing(fake_github, path, body):
    fake_github.add_issue(REPO, 1)
    response = api(fake_github, "POST", path, json=body)
    assert response.status_code == 422, response.text
    assert fake_github.comments(REPO, 1) == [] and fake_github.issue_labels(REPO, 1) == []


def test_adding_labels_creates_missing_repo_labels_records_events_and_accepts_a_bare_array(fake_github):
    issue = fake_github.add_issue(REPO, 3, labels=[QUEUE])
    before = issue["updated_at"]
    response = api(fake_github, "POST", f"/repos/{REPO}/issues/3/labels", json=["module: c10d"])
    assert response.status_code == 200
    assert [label["name"] for label in response.json()] == [QUEUE, "module: c10d"]
    api(fake_github, "POST", f"/repos/{REPO}/issues/3/labels", json={"labels": ["module: c10d", "triaged"]})
    assert fake_github.issue_labels(REPO, 3) == [QUEUE, "module: c10d", "triaged"]  # no duplicate
    assert set(fake_github.repo_labels(REPO)) == {QUEUE, "module: c10d", "triaged"}
    events = fake_github.events(REPO, 3)
    assert [(e["event"], e["label"]["name"], e["actor"]["login"]) for e in events] == [
        ("labeled", "module: c10d", fake_github.bot_login), ("labeled", "triaged", fake_github.bot_login)]
    assert fake_github.issue(REPO, 3)["updated_at"] > before


def test_comments_increment_count_and_appear_in_timeline(fake_github):
    fake_github.add_issue(REPO, 4)
    fake_github.add_label_event(REPO, 4, QUEUE, event="unlabeled", actor="maintainer")
    response = api(fake_github, "POST", f"/repos/{REPO}/issues/4/comments", json={"body": "hello"})
    assert response.status_code == 201 and response.headers["Location"].endswith(str(response.json()["id"]))
    assert response.json()["user"]["login"] == fake_github.bot_login
    assert fake_github.issue(REPO, 4)["comments"] == 1
    timeline = api(fake_github, "GET", f"/repos/{REPO}/issues/4/timeline").json()
    assert [item["event"] for item in timeline] == ["unlabeled", "commented"]
    assert timeline[0]["actor"]["login"] == "maintainer"


def test_create_label_and_duplicate_is_422(fake_github):
    fake_github.add_repo(REPO)
    body = {"name": "ptd-bot-triaged", "color": "c5def5", "description": "triaged by the bot"}
    assert api(fake_github, "POST", f"/repos/{REPO}/labels", json=body).status_code == 201
    again = api(fake_github, "POST", f"/repos/{REPO}/labels", json=dict(body, name="PTD-bot-triaged"))
    assert again.status_code == 422 and again.json()["errors"][0]["code"] == "already_exists"


def test_reactions_and_permissions(fake_github):
    fake_github.add_issue(REPO, 5)
    comment = fake_github.add_comment(REPO, 5, "/ptd-retriage", author="alice")
    path = f"/repos/{REPO}/issues/comments/{comment['id']}/reactions"
    assert api(fake_github, "POST", path, json={"content": "eyes"}).status_code == 201
    assert api(fake_github, "POST", path, json={"content": "eyes"}).status_code == 200  # already reacted
    assert len(fake_github.reactions(REPO, comment["id"])) == 1
    fake_github.set_role(REPO, "alice", "triage")
    fake_github.set_role(REPO, "bob", "maintain")
    perm = lambda login: api(fake_github, "GET", f"/repos/{REPO}/collaborators/{login}/permission")  # noqa: E731
    assert (perm("alice").json()["permission"], perm("alice").json()["role_name"]) == ("read", "triage")
    assert (perm("bob").json()["permission"], perm("bob").json()["role_name"]) == ("write", "maintain")
    assert perm("stranger").status_code == 404
    with pytest.raises(ValueError):
        fake_github.set_role(REPO, "carol", "owner")


def test_deleting_an_issue_reaction_and_a_comment_as_github_documents_them(fake_github):
    """Issue 30's two removals, validated against the contract (204 and no body; an undocumented 404 or 403 in
    GitHub's basic-error shape): only the reaction's own account deletes it; a comment's author (or someone with
    write access) deletes it, and the issue's comment count goes down."""
    fake_github.add_issue(REPO, 5)
    path = f"/repos/{REPO}/issues/5/reactions"
    created = api(fake_github, "POST", path, json={"content": "eyes"})
    assert created.status_code == 201
    other = fake_github.add_issue_reaction(REPO, 5, "eyes", author="someone", author_type="User")
    assert api(fake_github, "DELETE", f"{path}/{other['id']}").status_code == 403  # not ours
    gone = api(fake_github, "DELETE", f"{path}/{created.json()['id']}")
    assert (gone.status_code, gone.content) == (204, b"")
    assert api(fake_github, "DELETE", f"{path}/{created.json()['id']}").status_code == 404  # already gone
    assert fake_github.issue_reactions(REPO, 5) == [other]
    assert api(fake_github, "POST", path, json={"content": "eyes"}).status_code == 201  # free to claim again

    ours = api(fake_github, "POST", f"/repos/{REPO}/issues/5/comments", json={"body": "x"}).json()
    theirs = fake_github.add_comment(REPO, 5, "y", author="alice")
    assert api(fake_github, "DELETE", f"/repos/{REPO}/issues/comments/{theirs['id']}").status_code == 403
    assert api(fake_github, "DELETE", f"/repos/{REPO}/issues/comments/{ours['id']}").status_code == 204
    assert api(fake_github, "DELETE", f"/repos/{REPO}/issues/comments/{ours['id']}").status_code == 404
    assert [c["id"] for c in fake_github.comments(REPO, 5)] == [theirs["id"]]
    assert fake_github.issue(REPO, 5)["comments"] == 1
    assert not fake_github.violations
    for key in ("DELETE /repos/{owner}/{repo}/issues/{issue_number}/reactions/{reaction_id}",
                "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}"):
        assert list(contract.operations()[key]["responses"]) == ["204"]


def test_every_answer_can_wait(fake_github, monkeypatch):
    """`request_delay`: each request waits before it takes effect (a network's latency in the race trials)."""
    from fakegithub import server

    slept: list[float] = []
    monkeypatch.setattr(server.time, "sleep", slept.append)
    fake_github.add_issue(REPO, 5)
    fake_github.request_delay = 0.05
    assert api(fake_github, "GET", f"/repos/{REPO}/issues/5").status_code == 200
    assert api(fake_github, "POST", f"/repos/{REPO}/issues/5/reactions", json={"content": "eyes"}).status_code == 201
    assert slept == [0.05, 0.05]


def test_link_pagination(fake_github):
    fake_github.add_issue(REPO, 6)
    for i in range(5):
        fake_github.add_comment(REPO, 6, f"c{i}")
    first = api(fake_github, "GET", f"/repos/{REPO}/issues/6/comments", params={"per_page": 2})
    assert [c["body"] for c in first.json()] == ["c0", "c1"]
    assert 'rel="next"' in first.headers["Link"] and "page=2" in first.headers["Link"]
    last = api(fake_github, "GET", f"/repos/{REPO}/issues/6/comments", params={"per_page": 2, "page": 3})
    assert [c["body"] for c in last.json()] == ["c4"] and 'rel="next"' not in last.headers["Link"]


def test_search_qualifiers(fake_github):
    fake_github.add_issue(REPO, 10, labels=[QUEUE])
    fake_github.add_issue(REPO, 11, labels=[QUEUE, "ptd-bot-triaged"])
    fake_github.add_issue(REPO, 12, labels=[QUEUE], state="closed")
    fake_github.add_issue(REPO, 13, labels=[QUEUE], pull_request=True)
    fake_github.add_issue(REPO, 14, labels=["module: nn"], title="NCCL timeout")
    fake_github.add_issue("other/repo", 15, labels=[QUEUE])

    def numbers(q):
        response = api(fake_github, "GET", "/search/issues", params={"q": q})
        assert response.status_code == 200, response.text
        return sorted(item["number"] for item in response.json()["items"])

    base = f'repo:{REPO} is:issue is:open label:"{QUEUE}"'
    assert numbers(base) == [10, 11]
    assert numbers(base + ' -label:"ptd-bot-triaged"') == [10]
    assert numbers(f"repo:{REPO} is:pr") == [13]
    assert numbers(f"repo:{REPO} is:closed") == [12]
    assert numbers(f"repo:{REPO} nccl") == [14]
    assert api(fake_github, "GET", "/search/issues", params={"q": "author:x"}).status_code == 422
    assert api(fake_github, "GET", "/search/issues").status_code == 422


def test_list_issues_filters_state_and_labels(fake_github):
    fake_github.add_issue(REPO, 1, labels=[QUEUE, "triaged"])
    fake_github.add_issue(REPO, 2, labels=[QUEUE])
    fake_github.add_issue(REPO, 3, labels=[QUEUE], state="closed")
    response = api(fake_github, "GET", f"/repos/{REPO}/issues", params={"labels": f"{QUEUE},triaged"})
    assert [i["number"] for i in response.json()] == [1]
    response = api(fake_github, "GET", f"/repos/{REPO}/issues", params={"labels": QUEUE, "state": "all"})
    assert [i["number"] for i in response.json()] == [3, 2, 1]


def test_request_log_records_method_path_query_body_status(fake_github):
    fake_github.add_issue(REPO, 1)
    api(fake_github, "GET", f"/repos/{REPO}/issues/1/comments", params={"per_page": "100"})
    api(fake_github, "POST", f"/repos/{REPO}/issues/1/comments", json={"body": "x"})
    get, post = fake_github.requests
    assert (get.method, get.path, get.query, get.status) == ("GET", f"/repos/{REPO}/issues/1/comments",
                                                             {"per_page": "100"}, 200)
    assert (post.body, post.status, post.user) == ({"body": "x"}, 201, fake_github.bot_login)
    assert fake_github.writes() == [post]


def test_injected_faults_are_served_then_cleared(fake_github):
    fake_github.add_issue(REPO, 1)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/1", 502, times=2)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/1/comments", 429, headers={"Retry-After": "1"})
    assert [api(fake_github, "GET", f"/repos/{REPO}/issues/1").status_code for _ in range(3)] == [502, 502, 200]
    limited = api(fake_github, "GET", f"/repos/{REPO}/issues/1/comments")
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "1"


def test_after_effect_fault_performs_the_write_then_fails(fake_github):
    fake_github.add_issue(REPO, 1)
    fake_github.inject("POST", rf"/repos/{REPO}/issues/1/comments", 502, after_effect=True)
    assert api(fake_github, "POST", f"/repos/{REPO}/issues/1/comments", json={"body": "x"}).status_code == 502
    assert [c["body"] for c in fake_github.comments(REPO, 1)] == ["x"]


def test_dropped_connection(fake_github):
    fake_github.add_issue(REPO, 1)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/1", drop=True)
    with pytest.raises(requests.ConnectionError):
        api(fake_github, "GET", f"/repos/{REPO}/issues/1")


def test_contract_validation_catches_a_bad_response(fake_github):
    fake_github.add_issue(REPO, 1)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/1", 200, body={"number": "one"})
    api(fake_github, "GET", f"/repos/{REPO}/issues/1")
    found = fake_github.take_violations()
    assert len(found) == 1 and "GET /repos/pytorch/pytorch/issues/1 -> 200" in found[0]
    assert contract.response_errors("GET /repos/{owner}/{repo}/issues/{issue_number}", 201, {}) == [
        "status 201 is not a documented response of GET /repos/{owner}/{repo}/issues/{issue_number}"]


def test_seeded_objects_validate_against_the_contract_and_webhook_examples_are_copied(fake_github):
    issue = fake_github.add_issue(REPO, 1, labels=[QUEUE])
    assert contract.response_errors("GET /repos/{owner}/{repo}/issues/{issue_number}", 200, issue) == []
    example = json.loads((contract.CONTRACT_DIR / "webhooks/examples/issues.labeled.json").read_text())
    assert example["action"] == "labeled"


# ---- the real client against the stand-in -------------------------------------------------------------------

def test_client_round_trip(fake_github, github_client):
    fake_github.add_issue(REPO, 20, labels=[QUEUE], title="allreduce hangs")
    for i in range(150):
        fake_github.add_comment(REPO, 20, f"c{i}")
    assert github_client.get_issue(REPO, 20)["title"] == "allreduce hangs"
    assert len(github_client.list_comments(REPO, 20)) == 150  # two pages of 100
    labels = github_client.add_labels(REPO, 20, ["module: c10d"])
    assert [label["name"] for label in labels] == [QUEUE, "module: c10d"]
    found = list(search_issues(github_client, f'repo:{REPO} is:issue is:open label:"{QUEUE}"', limit=10))
    assert [i["number"] for i in found] == [20]
    assert [i["number"] for i in github_client.list_issues(REPO, labels=[QUEUE])] == [20]
    assert github_client.get_permission(REPO, fake_github.bot_login)["permission"] == "read"
    assert [e["event"] for e in github_client.list_events(REPO, 20)] == ["labeled"]
    assert github_client.create_label(REPO, "ptd-bot-triaged", "#c5def5", "bot")["color"] == "c5def5"
    assert "ptd-bot-triaged" in [label["name"] for label in github_client.list_repo_labels(REPO)]
    comment = github_client.create_comment(REPO, 20, "thanks")
    assert github_client.add_reaction(REPO, comment["id"])["content"] == "eyes"
    assert github_client.request_count == len(fake_github.requests)


def test_client_dedupes_a_comment_stored_before_a_502(fake_github, github_client):
    fake_github.add_issue(REPO, 21)
    fake_github.inject("POST", rf"/repos/{REPO}/issues/21/comments", 502, after_effect=True)
    marker = "<!-- ptd-triage:routed -->"
    comment = github_client.create_comment(REPO, 21, f"routed\n{marker}", own_login=fake_github.bot_login)
    assert [c["id"] for c in fake_github.comments(REPO, 21)] == [comment["id"]]  # exactly one comment
    assert [(r.method, r.status) for r in fake_github.requests] == [("POST", 502), ("GET", 200)]


def test_client_retries_rate_limits_from_the_stand_in(fake_github, github_client):
    fake_github.add_issue(REPO, 22)
    fake_github.inject("POST", rf"/repos/{REPO}/issues/22/labels", 403, headers={"retry-after": "1"},
                       body={"message": "You have exceeded a secondary rate limit.", "documentation_url": "x"})
    fake_github.inject("GET", rf"/repos/{REPO}/issues/22", 429, headers={"Retry-After": "2"})
    github_client.add_labels(REPO, 22, ["triaged"])
    github_client.get_issue(REPO, 22)
    assert github_client.slept == [1.0, 2.0]
    assert fake_github.issue_labels(REPO, 22) == ["triaged"]


def test_client_times_out_on_a_hanging_request_and_retries(fake_github):
    fake_github.add_issue(REPO, 23)
    fake_github.inject("GET", rf"/repos/{REPO}/issues/23", 200, delay=0.5, body=fake_github.issue(REPO, 23))
    client = GitHubClient(fake_github.token, fake_github.url, timeout=(1, 0.1), sleep=lambda s: None)
    assert client.get_issue(REPO, 23)["number"] == 23
    assert client.request_count == 2


def test_client_reports_bad_token_without_retrying(fake_github):
    fake_github.add_issue(REPO, 24)
    client = GitHubClient("ghs_not_valid", fake_github.url, sleep=lambda s: pytest.fail("must not sleep"))
    with pytest.raises(GitHubError, match=r"\(401\): Bad credentials"):
        client.get_issue(REPO, 24)


def test_headers_are_checked_against_the_description():
    """The stand-in's rate-limit headers and Link headers are checked like its bodies (issue 32): a header that
    breaks them would be recorded as a violation."""
    from fakegithub import contract

    timeline = "GET /repos/{owner}/{repo}/issues/{issue_number}/timeline"
    path = "/repos/o/r/issues/1/timeline"
    good = {"x-ratelimit-limit": "1000", "x-ratelimit-remaining": "998", "x-ratelimit-used": "2",
            "x-ratelimit-reset": "1767229200", "x-ratelimit-resource": "core",
            "Link": f'<http://127.0.0.1:1{path}?per_page=100&page=2>; rel="next"'}
    assert contract.header_errors(timeline, 200, good, path) == []
    assert contract.header_errors(timeline, 200, {**good, "x-ratelimit-remaining": "5"}, path)
    assert contract.header_errors(timeline, 200, {"x-ratelimit-limit": "1000"}, path)
    assert contract.header_errors(timeline, 200, {**good, "x-ratelimit-resource": "mystery"}, path)
    assert contract.header_errors(timeline, 200, {**good, "Link": "<x>; rel=next"}, path)
    assert contract.header_errors("GET /repos/{owner}/{repo}/issues/{issue_number}", 200,
                                  {"Link": good["Link"]}, "/repos/o/r/issues/1")


def test_a_long_timeline_pages_with_link_headers_and_every_answer_is_checked(fake_github):
    fake_github.add_issue(REPO, 9, labels=["oncall: distributed"])
    for n in range(120):
        fake_github.label_issue(REPO, 9, f"l{n}", actor="maintainer" if n % 2 else "dependabot[bot]",
                                actor_type="User" if n % 2 else "Bot")
    fake_github.close_issue(REPO, 9)
    first = api(fake_github, "GET", f"/repos/{REPO}/issues/9/timeline", params={"per_page": 100})
    assert len(first.json()) == 100 and 'rel="next"' in first.headers["Link"]
    second = requests.get(first.links["next"]["url"], headers={"Authorization": f"Bearer {fake_github.token}"})
    assert [item["event"] for item in second.json()][-1] == "closed" and len(second.json()) == 21
    assert fake_github.issue(REPO, 9)["state_reason"] == "completed" and fake_github.issue(REPO, 9)["closed_at"]
    assert {second.headers["x-ratelimit-resource"], first.headers["x-ratelimit-limit"]} == {"core", "5000"}
    assert fake_github.violations == []
