"""The sweep misses no issue however GitHub's search index behaves: it pages by key (`created:>=` the last issue
seen), so the issues it labels dropping out of the results cannot shift a page under it. Checked against a stand-in
whose search reflects writes at once and one whose index lags behind them, with more than two pages of queue."""
from __future__ import annotations

import pytest
from actionrun import FSDP_WITH_REPRO, MARKER, REPO, seed_issue
from fakegithub import FakeGitHub

from triage.config.bundle import load_bundle
from triage.github.client import GitHubClient
from triage.service.triager import Triager

QUEUE_SIZE = 230  # three pages of 100


@pytest.mark.parametrize("mode,lag", [("immediate", 0), ("lagging", 40)])
def test_a_sweep_reaches_every_queued_issue_and_reads_a_page_per_hundred(mode, lag):
    with FakeGitHub(search_mode=mode, search_lag_requests=lag) as fake:
        for number in range(1, QUEUE_SIZE + 1):
            seed_issue(fake, number, FSDP_WITH_REPRO)
        client = GitHubClient(fake.token, fake.url, sleep=lambda s: None)
        triager = Triager(client, load_bundle(), repo=REPO, recent_seconds=0)
        result = triager.sweep(1000)
        assert not fake.violations
    assert result.failed == [] and result.stopped is None and result.left == 0
    assert result.found == QUEUE_SIZE
    assert sorted(r.number for r in result.triaged) == list(range(1, QUEUE_SIZE + 1))  # each once, oldest first
    writes = [r for r in fake.writes() if r.path.endswith("/labels")]
    assert len(writes) == QUEUE_SIZE  # a stale search hit is re-read and left alone: nothing done twice
    assert all(MARKER in fake.issue_labels(REPO, n) for n in range(1, QUEUE_SIZE + 1))
    searches = [r for r in fake.requests if r.path == "/search/issues"]
    assert len(searches) <= QUEUE_SIZE // 100 + 2  # a page per hundred issues, plus the last, empty look


def test_a_sweep_stopped_by_its_budget_counts_what_it_left_and_the_next_one_takes_it():
    with FakeGitHub() as fake:
        for number in range(1, 8):
            seed_issue(fake, number, FSDP_WITH_REPRO)
        client = GitHubClient(fake.token, fake.url, sleep=lambda s: None)
        triager = Triager(client, load_bundle(), repo=REPO, recent_seconds=0)
        first = triager.sweep(3)
        assert len(first.triaged) == 3 and first.found == 7 and first.left == 4 and "max-issues" in first.stopped
        second = triager.sweep(10)
        assert len(second.triaged) == 4 and second.found == 4 and second.left == 0
        writes_before = len(fake.writes())
        third = triager.sweep(10)
        assert third.found == 0 and third.results == [] and len(fake.writes()) == writes_before


def test_a_sweep_that_reaches_its_api_reserve_stops_cleanly_and_counts_what_it_left():
    from fakegithub.server import RateLimits

    with FakeGitHub(rate_limits=RateLimits(core_per_hour=60)) as fake:
        for number in range(1, 31):
            seed_issue(fake, number, FSDP_WITH_REPRO)
        client = GitHubClient(fake.token, fake.url, sleep=lambda s: None, max_wait=0)
        triager = Triager(client, load_bundle(), repo=REPO, recent_seconds=0)
        client.min_remaining = 10  # the sweep keeps at least this reserve (SWEEP_API_RESERVE is larger)
        first = triager.sweep(1000)
        assert first.failed == []  # its own budget stopping it is not a failure
        assert first.stopped and "budget" in first.stopped and first.left > 0
        assert first.left + len(first.triaged) == first.found == 30
        assert not fake.limits_tripped  # it stopped before GitHub had to refuse anything
        assert client.min_remaining == 10 and client.scoped_reserve == 0  # the sweep's reserve was its own
        assert all(MARKER in fake.issue_labels(REPO, r.number) for r in first.triaged)
