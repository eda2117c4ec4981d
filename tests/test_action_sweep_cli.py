"""`ptd-triage sweep`: the Action's sweep from a terminal, run as a subprocess against the GitHub stand-in."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from actionrun import FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, expected_plan, seed_issue


def sweep(fake, *args: str, token: str | None = "default") -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
           "PTD_TRIAGE_MAX_BACKOFF": "0.05"}
    if token is not None:
        env["GITHUB_TOKEN"] = fake.token if token == "default" else token
    # --skip-recent 0: the issues are seeded a moment ago; a real sweep leaves those to their event run.
    return subprocess.run([sys.executable, "-m", "triage", "sweep", "--api-url", fake.url, "--skip-recent", "0", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_dry_run_plans_the_queue_and_writes_nothing(fake_github):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    seed_issue(fake_github, 2, FSDP_WITH_REPRO)
    seed_issue(fake_github, 3, FSDP_WITH_REPRO, labels=(QUEUE, MARKER))
    plans = {n: expected_plan(fake_github, n) for n in (1, 2)}

    proc = sweep(fake_github, "--repo", REPO, "--dry-run", "--json")

    assert proc.returncode == 0, proc.stderr
    assert fake_github.writes() == []
    printed = json.loads(proc.stdout)  # --json: stdout is one JSON document and nothing else
    assert {i["number"]: i["plan"]["add_labels"] for i in printed["issues"]} == {n: list(p.add_labels) for n, p in plans.items()}
    assert printed["found"] == 2 and printed["left"] == 0  # the marked issue is not in the search
    assert "#1: not_distributed; would add" in proc.stderr  # progress goes to stderr
    assert "found 2, planned 2, failed 0" in proc.stderr
    assert "::" not in proc.stdout + proc.stderr  # no workflow commands outside Actions


def test_sweep_writes_and_a_second_sweep_finds_nothing(fake_github):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    seed_issue(fake_github, 2, FSDP_WITH_REPRO)
    assert sweep(fake_github, "--repo", REPO).returncode == 0
    assert MARKER in fake_github.issue_labels(REPO, 1) and MARKER in fake_github.issue_labels(REPO, 2)
    writes = len(fake_github.writes())

    again = sweep(fake_github, "--repo", REPO)
    assert again.returncode == 0 and "found 0, triaged 0" in again.stdout
    assert len(fake_github.writes()) == writes


def test_max_issues_budget(fake_github):
    for n in (1, 2, 3):
        seed_issue(fake_github, n, FSDP_WITH_REPRO)
    proc = sweep(fake_github, "--repo", REPO, "--max-issues", "2")
    assert proc.returncode == 0 and "found 3, triaged 2" in proc.stdout and "left 1" in proc.stdout
    assert sum(MARKER in fake_github.issue_labels(REPO, n) for n in (1, 2, 3)) == 2


def test_a_failing_issue_exits_1_after_the_others(fake_github):
    seed_issue(fake_github, 1, FSDP_WITH_REPRO)
    seed_issue(fake_github, 2, FSDP_WITH_REPRO)
    fake_github.inject("POST", f"/repos/{REPO}/issues/2/labels", 500, times=20)
    proc = sweep(fake_github, "--repo", REPO)
    assert proc.returncode == 1
    assert "#2: failed (planned classified): GitHub API POST" in proc.stderr and "failed 1" in proc.stdout
    assert MARKER in fake_github.issue_labels(REPO, 1)


def test_bad_input_exits_2_with_one_line_and_no_call(fake_github):
    no_token = sweep(fake_github, "--repo", REPO, token=None)
    assert no_token.returncode == 2 and no_token.stderr.count("\n") == 1 and "GITHUB_TOKEN" in no_token.stderr
    bad_repo = sweep(fake_github, "--repo", "not-a-repo")
    assert bad_repo.returncode == 2 and "owner/name" in bad_repo.stderr
    assert fake_github.requests == []


def test_counts_that_do_not_add_up_are_a_warning_line(fake_github):
    seed_issue(fake_github, 1, FSDP_WITH_REPRO)
    seed_issue(fake_github, 2, NEEDS_REPRO)
    items = [dict(fake_github.issue(REPO, n), score=1.0) for n in (1, 2)]
    fake_github.inject("GET", "/search/issues", 200, body={"total_count": 5, "incomplete_results": False,
                                                           "search_type": "lexical", "items": items})
    proc = sweep(fake_github, "--repo", REPO, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    warning = [line for line in proc.stderr.splitlines() if "warning:" in line]
    assert warning == [warning[0]] and "counts do not add up: found 5, but triaged 2" in warning[0]
    assert "warning" not in sweep(fake_github, "--repo", REPO, "--dry-run").stderr  # adds up: no line
