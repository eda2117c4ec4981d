"""Shadow against bad data (issue 37): each attack class through the CLI against the GitHub stand-in, with its
control. Poisoned cache files, search results and timelines of shapes GitHub does not send, a model that fails,
an issue opted out while queued, 150 issues created in the same second, one timeline answering 410, a search that
fails midway, and a page that links to itself: each costs at most the issue it belongs to, with one line naming it,
and the run goes on or stops cleanly with a report. Nothing is ever written.

A test that injects an answer GitHub would not send expects the stand-in to record it as a contract violation on
that path, and only there (`_only_injected`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import requests
from fakegithub import FakeGitHub
from shadow_world import FSDP, INF, PAR, Q, build_window, shadow_cli

REPO = "acme/widgets"
KEY = "sk-ant-test-shadow-key-000000"


def _window(world) -> tuple[str, ...]:
    return ("--since", world.since, "--until", world.until)


def _report(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _warnings(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("ptd-triage shadow: warning:")]


def _timelines(gh, start: int = 0) -> list[int]:
    return [int(r.path.split("/")[-2]) for r in gh.requests[start:] if r.path.endswith("/timeline")]


def _only_injected(gh, *paths: str) -> None:
    """The stand-in flagged the answers the test injected, on their paths, and nothing else."""
    found = gh.take_violations()
    assert found and all(any(f" {path} " in v for path in paths) for v in found), found


def _figures(report: dict) -> dict:
    keep = ("steps", "verdicts", "labels", "high_priority_table", "disagreements", "would_write", "issues",
            "triaged_by_people")
    return {key: report[key] for key in keep}


def _path(number: int) -> str:
    return f"/repos/{REPO}/issues/{number}/timeline"


def test_poisoned_cache_files_are_named_one_line_each_and_read_again(tmp_path):
    with FakeGitHub() as gh:
        world = build_window(gh, 12, repo=REPO)
        cache = tmp_path / "cache"
        clean = shadow_cli(gh, *_window(world), "--cache", str(cache), "--json", str(tmp_path / "clean.json"))
        assert clean.returncode == 0, clean.stderr
        numbers = sorted(world.truths)[:8]
        files = {n: cache / "acme" / "widgets" / f"{n}.json" for n in numbers}
        good = {n: json.loads(files[n].read_text(encoding="utf-8")) for n in numbers}
        a, b, c, d, e, f, g, h = numbers
        poison = {
            a: json.dumps({**good[a], "issue": "a string"}),
            b: json.dumps({**good[b], "issue": {}}),
            c: json.dumps({**good[c], "timeline": [None, *good[c]["timeline"]]}),
            d: "[" * 50_000 + "]" * 50_000,
            e: "not JSON {",
            f: json.dumps({**good[f], "issue": good[g]["issue"]}),  # another issue's copy
            g: json.dumps({**good[g], "timeline": {"items": good[g]["timeline"]}}),
        }
        for number, text in poison.items():
            files[number].write_text(text, encoding="utf-8")
        files[h].unlink()
        files[h].symlink_to("/dev/zero")  # endless: read only to the size limit, and not a regular file anyway
        start = len(gh.requests)
        again = shadow_cli(gh, *_window(world), "--cache", str(cache), "--json", str(tmp_path / "again.json"))
        assert again.returncode == 0, again.stderr
        warned = _warnings(again)
        assert len(warned) == 8 and all(any(str(files[n]) in line for line in warned) for n in numbers), warned
        assert sorted(_timelines(gh, start)) == numbers  # each read again, the others taken from the cache
        assert _figures(_report(tmp_path / "again.json")) == _figures(_report(tmp_path / "clean.json"))
        # the control: the files were written anew, so a third run reads no issue and warns nothing
        start = len(gh.requests)
        third = shadow_cli(gh, *_window(world), "--cache", str(cache))
        assert third.returncode == 0 and _warnings(third) == [] and _timelines(gh, start) == []
        assert gh.writes() == [] and not gh.violations


def _first_search_page(gh, world) -> dict:
    from triage.evaluation.shadow_fetch import window_query

    answer = requests.get(f"{gh.url}/search/issues", headers={"Authorization": f"Bearer {gh.token}"},
                          params={"q": window_query(REPO, Q, world.since, world.until), "sort": "created",
                                  "order": "asc", "per_page": 100}, timeout=30)
    return answer.json()


def test_search_results_and_timelines_of_shapes_github_does_not_send_cost_their_issue_only(tmp_path):
    with FakeGitHub() as gh:
        world = build_window(gh, 12, repo=REPO)
        clean = shadow_cli(gh, *_window(world), "--json", str(tmp_path / "clean.json"))
        assert clean.returncode == 0, clean.stderr
        gh.requests.clear()
        page = _first_search_page(gh, world)
        items = page["items"]
        page["items"] = items + ["a string", {}, {**items[0], "number": "7"}, {**items[1], "pull_request": {}},
                                 {**items[2], "labels": "oncall: distributed"}, None]
        gh.inject("GET", r"/search/issues", 200, body=page)
        a, b, c, d, e = sorted(world.truths)[:5]
        label_event = next(x for x in gh.timeline(REPO, a) if x.get("event") == "labeled")
        gh.inject("GET", _path(a), 200, body=[None, *gh.timeline(REPO, a)])
        gh.inject("GET", _path(b), 200, body={"message": "a timeline that is an object"})
        gh.inject("GET", _path(c), 200, body=b"<html><body>502 from a proxy</body></html>")
        gh.inject("GET", _path(d), 200, body=b"[" * 50_000 + b"]" * 50_000)
        gh.inject("GET", _path(e), 200, body=[{**label_event, "label": {"color": "fff"}}])
        run = shadow_cli(gh, *_window(world), "--json", str(tmp_path / "bad.json"))
        assert run.returncode == 0, run.stderr
        report, control = _report(tmp_path / "bad.json"), _report(tmp_path / "clean.json")
        assert {item["id"] for item in report["skipped"]} == {f"{REPO}#{n}" for n in (a, b, c, d, e)}
        assert len(report["notes"]) == 6 and all(n.startswith("search result ") for n in report["notes"])
        assert len(_warnings(run)) == 11  # one line for each
        assert report["issues"] == control["issues"] - 5
        assert not {f"{REPO}#{n}" for n in (a, b, c, d, e)} & {i["id"] for i in report["would_write"]["issues"]}
        assert "Traceback" not in run.stderr and gh.writes() == []
        _only_injected(gh, "/search/issues", *(_path(n) for n in (a, b, c, d, e)))


def test_a_failing_model_is_counted_shown_first_and_fails_the_run(tmp_path):
    from fakellm import FakeAnthropic, Fault

    with FakeGitHub() as gh, FakeAnthropic(api_key=KEY) as model:
        world = build_window(gh, 10, repo=REPO)
        llm = ("--planner", "llm", "--llm-provider", "anthropic", "--llm-model", "claude-test", "--llm-base-url",
               model.url, "--llm-timeout", "5")
        model.script(*[Fault.error(400, "this model is not available")] * 40)
        failing = shadow_cli(gh, *_window(world), *llm, "--json", str(tmp_path / "f.json"), "--markdown",
                             str(tmp_path / "f.md"), env_extra={"ANTHROPIC_API_KEY": KEY})
        assert failing.returncode == 1, failing.stderr
        report = _report(tmp_path / "f.json")
        planners = report["planners"]
        assert planners["failed"] == planners["fallbacks"] == len(model.answered) > 0
        assert all(set(step["decided_by"]) == {"rubric"} for step in report["steps"].values())
        assert f"the model failed on {planners['failed']} of {report['issues']} issues" in failing.stdout.splitlines()[2]
        assert "**planner llm: the model failed on" in (tmp_path / "f.md").read_text(encoding="utf-8")[:1000]
        (error,) = [line for line in failing.stderr.splitlines() if "error:" in line]
        assert "the model failed on" in error and "this model is not available" in error

        # the control: a model that answers decides what it was asked, and the run passes
        model.clear_script()
        working = shadow_cli(gh, *_window(world), *llm, "--json", str(tmp_path / "w.json"),
                             env_extra={"ANTHROPIC_API_KEY": KEY})
        assert working.returncode == 0, working.stderr
        decided = _report(tmp_path / "w.json")["steps"]["type"]["decided_by"]
        assert decided.get("llm", 0) > 0 and _report(tmp_path / "w.json")["planners"]["fallbacks"] == 0

        # the call budget is a limit the user set: the issues past it are the rubric's, said, and the run passes
        spent = shadow_cli(gh, *_window(world), *llm, "--llm-max-calls", "2", "--json", str(tmp_path / "b.json"),
                           env_extra={"ANTHROPIC_API_KEY": KEY})
        assert spent.returncode == 0, spent.stderr
        budget = _report(tmp_path / "b.json")["planners"]
        assert budget["fallbacks"] > 0 and budget["failed"] == 0
        assert any("call budget was spent" in line for line in _warnings(spent))
        assert gh.writes() == [] and not gh.violations and not model.violations


def test_an_issue_opted_out_while_queued_is_left_out_not_a_miss(fake_github, tmp_path):
    gh = fake_github
    made = []
    for key in ("at queue time", "while queued", "control"):
        labels = ["ptd-bot-skip"] if key == "at queue time" else []
        number = gh.add_issue(REPO, title=FSDP[0], body=FSDP[1], labels=labels)["number"]
        gh.label_issue(REPO, number, Q, actor="alice")
        if key == "while queued":
            gh.label_issue(REPO, number, "PTD-Bot-Skip", actor="bob")  # GitHub compares names without case
        gh.label_issue(REPO, number, INF, actor="carol")  # people route it where the bot would not
        made.append(number)
    since = gh.issue(REPO, made[0])["created_at"]
    until = gh.issue(REPO, made[-1])["updated_at"]
    run = shadow_cli(gh, "--since", since, "--until", until, "--json", str(tmp_path / "r.json"))
    assert run.returncode == 0, run.stderr
    report = _report(tmp_path / "r.json")
    assert report["opted_out"] == 2 and report["opted_out_issues"] == [f"{REPO}#{n}" for n in made[:2]]
    routing = report["steps"]["routing"]
    assert (routing["total"], routing["missed"]) == (1, 1)  # the control is a miss; the opted-out are in no step
    assert [d["id"] for d in report["disagreements"]] == [f"{REPO}#{made[2]}"]
    assert [i["id"] for i in report["would_write"]["issues"]] == [f"{REPO}#{made[2]}"]
    assert "2 opted out by people (left out)" in run.stdout
    assert gh.writes() == []


def test_150_issues_created_in_the_same_second_are_all_read(fake_github, tmp_path):
    gh = fake_github
    numbers = []
    for _ in range(150):
        number = gh.add_issue(REPO, title=FSDP[0], body=FSDP[1])["number"]
        gh.label_issue(REPO, number, Q, actor="alice")
        gh.label_issue(REPO, number, PAR, actor="bob")
        numbers.append(number)
    second = gh.issue(REPO, numbers[0])["created_at"]
    for number in numbers:
        gh.issue(REPO, number)["created_at"] = second  # one second, as a bulk import or a migration makes them
    until = max(gh.issue(REPO, n)["updated_at"] for n in numbers)
    run = shadow_cli(gh, "--since", second, "--until", until, "--json", str(tmp_path / "r.json"))
    assert run.returncode == 0, run.stderr
    report = _report(tmp_path / "r.json")
    assert (report["found"], report["examined"], report["issues"], report["left"]) == (150, 150, 150, 0)
    assert report["stopped"] is None and sorted(_timelines(gh)) == numbers  # each read once
    searches = [r.query for r in gh.requests if r.path == "/search/issues"]
    assert [q.get("page") for q in searches] == [None, None, "2"]  # the second page of that second, by number
    assert gh.writes() == []


def test_one_timeline_answering_410_skips_its_issue_with_a_note(tmp_path):
    with FakeGitHub() as gh:
        world = build_window(gh, 12, repo=REPO)
        clean = shadow_cli(gh, *_window(world), "--json", str(tmp_path / "clean.json"))
        gone = sorted(world.truths)[3]
        gh.inject("GET", _path(gone), 410, body={"message": "Issue gone", "documentation_url": "https://docs"})
        run = shadow_cli(gh, *_window(world), "--json", str(tmp_path / "r.json"), "--markdown",
                         str(tmp_path / "r.md"))
        assert clean.returncode == run.returncode == 0, run.stderr
        report, control = _report(tmp_path / "r.json"), _report(tmp_path / "clean.json")
        (skipped,) = report["skipped"]
        assert skipped["id"] == f"{REPO}#{gone}" and "410" in skipped["why"]
        (warning,) = _warnings(run)
        assert f"{REPO}#{gone} skipped" in warning
        assert report["issues"] == control["issues"] - 1 and report["stopped"] is None
        assert f"acme/widgets\\#{gone} | skipped: its timeline" in (tmp_path / "r.md").read_text(encoding="utf-8")
        assert gh.writes() == [] and not gh.violations


def test_a_search_that_fails_midway_stops_cleanly_with_a_report(tmp_path):
    with FakeGitHub() as gh:
        world = build_window(gh, 130, repo=REPO)
        original, searches = gh.handle, []

        def handle(method, raw_path, headers, raw_body):
            if raw_path.startswith("/search/issues"):
                searches.append(raw_path)
                if len(searches) == 2:
                    return 422, {}, {"message": "Validation Failed", "documentation_url": "https://docs"}, False
            return original(method, raw_path, headers, raw_body)

        gh.handle = handle
        run = shadow_cli(gh, *_window(world), "--json", str(tmp_path / "r.json"))
        assert run.returncode == 1, run.stderr
        report = _report(tmp_path / "r.json")
        assert report["examined"] == 100 and report["left"] > 0 and "422" in report["failed"]
        (error,) = [line for line in run.stderr.splitlines() if "error:" in line]
        assert "stopped early" in error and "422" in error
        assert "Traceback" not in run.stderr and gh.writes() == []


def test_a_page_that_links_to_itself_is_refused_after_one_round(tmp_path):
    with FakeGitHub() as gh:
        world = build_window(gh, 12, repo=REPO)
        loop = sorted(world.truths)[5]
        link = f'<{gh.url}{_path(loop)}?per_page=100&page=1>; rel="next"'
        gh.inject("GET", _path(loop), 200, body=gh.timeline(REPO, loop), headers={"Link": link}, times=10_000)
        run = shadow_cli(gh, *_window(world), "--json", str(tmp_path / "r.json"))
        assert run.returncode == 0, run.stderr
        assert _timelines(gh).count(loop) == 2  # the page, and its link to itself once: then refused
        (skipped,) = _report(tmp_path / "r.json")["skipped"]
        assert skipped["id"] == f"{REPO}#{loop}" and re.search("already read", skipped["why"])
        assert len(gh.requests) < 40 and gh.writes() == [] and not gh.violations


@pytest.mark.parametrize("transient", [True, False], ids=["GitHub failing", "each issue refused"])
def test_timelines_failing_in_a_row_stop_the_run_only_when_github_fails(fake_github, github_client, transient):
    """Five timelines in a row that fail after the client's retries stop the run cleanly (GitHub is failing);
    five in a row that GitHub refuses (404) are five skipped issues, and the run goes on."""
    from triage.config.bundle import load_bundle
    from triage.evaluation.shadow import FAILURES_IN_A_ROW, Window, shadow
    from triage.evaluation.shadow_fetch import IssueCache

    world = build_window(fake_github, 12, repo=REPO)
    failing = sorted(world.truths)[2:2 + FAILURES_IN_A_ROW]
    for number in failing:
        fake_github.inject("GET", _path(number), 502 if transient else 404, times=10)
    github_client.max_retries = 1
    document, run = shadow(github_client, load_bundle(), Window(REPO, world.since, world.until),
                           cache=IssueCache(None, REPO))
    assert [item["id"] for item in run.skipped] == [f"{REPO}#{n}" for n in failing]
    if transient:
        assert run.failed and "in a row" in run.failed and document["left"] > 0
    else:
        assert run.failed is None and run.stopped is None and document["issues"] == len(world.truths) - 5
    assert fake_github.writes() == []
    fake_github.take_violations()  # the injected 502s are not a documented answer of the timeline


def test_more_issues_in_one_second_than_github_serves_end_the_search_with_a_reason():
    """Past GitHub's 1,000 results of one query, no key or page separates issues created in the same second: the
    search ends with a reason (the run then stops cleanly and counts what it left), never loops. A unit test: the
    stand-in would need 1,001 issues."""
    from triage.evaluation.shadow_fetch import SEARCH_PAGES, Search, SearchEnded

    stamp = "2026-01-01T00:00:00Z"

    class OneSecond:
        pages: list[int] = []

        def search_page(self, query, *, sort, order, page=1):
            self.pages.append(page)
            first = (page - 1) * 100 + 1
            items = [{"number": n, "title": "t", "body": "", "created_at": stamp, "updated_at": stamp,
                      "labels": []} for n in range(first, first + 100)]
            return items, 5000

    client = OneSecond()
    seen = []
    with pytest.raises(SearchEnded, match="more than 1000 issues were created at 2026-01-01T00:00:00Z"):
        seen.extend(item["number"] for item in Search(client, "q"))
    assert seen == list(range(1, 100 * SEARCH_PAGES + 1))  # every one GitHub serves, each once
    assert client.pages == [1, 1, *range(2, SEARCH_PAGES + 1)]
