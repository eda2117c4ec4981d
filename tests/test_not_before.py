"""Going live on a backlog (issue 21): the `not-before` cut-off, through the real entrypoint.py against the GitHub
stand-in. Issues created before it get no write (default `skip`) or labels but never a comment (`labels-only`);
the count of such issues is reported in the log and the step summary. Event runs are not limited by it."""
from __future__ import annotations

import json

import pytest
from actionrun import (MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, expected_plan, issues_payload, run_action,
                       schedule_payload, seed_issue)

from summaryhtml import read

from triage.action.report import md_escape
from triage.service.cutoff import created_before, parse_mode, parse_not_before


def _touched(run) -> set[int]:
    return {int(r.path.split("/")[5]) for r in run.writes}


def _backlog(fake):
    """Issues 1-2 are old, 3-4 new; the cut-off is issue 3's creation time (the stand-in's clock ticks per write)."""
    for number in (1, 2):
        seed_issue(fake, number, NOT_DISTRIBUTED if number == 1 else NEEDS_REPRO)
    seed_issue(fake, 3, NOT_DISTRIBUTED)
    seed_issue(fake, 4, NEEDS_REPRO)
    cutoff = fake.issue(REPO, 3)["created_at"]
    assert fake.issue(REPO, 2)["created_at"] < cutoff
    return cutoff


def test_skip_mode_writes_nothing_to_older_issues_and_reports_their_count(fake_github, tmp_path):
    cutoff = _backlog(fake_github)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"not-before": cutoff})

    assert run.returncode == 0, run.stdout + run.stderr
    assert _touched(run) == {3, 4}
    for number in (1, 2):
        assert fake_github.comments(REPO, number) == [] and MARKER not in fake_github.issue_labels(REPO, number)
    for number in (3, 4):
        assert len(fake_github.comments(REPO, number)) == 1
    assert f"not-before {cutoff}: 2 queue issue(s) created before it were not triaged" in run.stdout
    # In the summary's first lines, beside what needs a person (issue 31), not at its bottom.
    blocks, _ = read(run.summary)
    assert blocks[0].tag == "h2" and blocks[3].tag == "li", blocks[:4]
    assert blocks[3].text == f"2 queue issues created before {md_escape(cutoff)} were not triaged (not-before)"
    # Older issues are not read one by one: one search counts them, the sweep's own pages start at the cut-off.
    searches = [r.query["q"] for r in run.requests if r.path == "/search/issues"]
    assert any(q.endswith(f"created:<{cutoff}") for q in searches)
    assert any(q.endswith(f"created:>={cutoff}") for q in searches)
    assert not any(r.path.endswith(("/issues/1", "/issues/2")) for r in run.requests)


def test_labels_only_mode_labels_older_issues_without_a_comment(fake_github, tmp_path):
    cutoff = _backlog(fake_github)
    plans = {n: expected_plan(fake_github, n) for n in (1, 2)}
    assert all(p.comment is not None for p in plans.values()), "the scenarios must plan a comment"

    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"not-before": cutoff, "not-before-mode": "labels-only"})

    assert run.returncode == 0, run.stdout + run.stderr
    for number in (1, 2):
        assert fake_github.comments(REPO, number) == []
        assert set(plans[number].add_labels) <= set(fake_github.issue_labels(REPO, number))
    for number in (3, 4):
        assert len(fake_github.comments(REPO, number)) == 1
    assert "(labels-only): 2 issue(s) created before it got labels and no comment" in run.stdout
    plan_1 = next(p for p in json.loads(run.outputs["plan"]) if p["issue"] == 1)
    assert any("not-before" in reason for reason in plan_1["reasons"])


def test_an_event_run_on_an_old_issue_is_not_limited(fake_github, tmp_path):
    cutoff = _backlog(fake_github)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 1, "labeled", label=QUEUE),
                     inputs={"not-before": cutoff})
    assert run.returncode == 0, run.stdout
    assert len(fake_github.comments(REPO, 1)) == 1


@pytest.mark.parametrize("inputs, named", [({"not-before": "last year"}, "not-before"),
                                           ({"not-before": "2024-01-31T00:00:00"}, "not-before"),
                                           ({"not-before": "2024-01-01", "not-before-mode": "quiet"},
                                            "not-before-mode")])
def test_a_bad_cutoff_is_one_error_line_and_no_call(fake_github, tmp_path, inputs, named):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs=inputs)
    assert run.returncode == 1 and run.requests == []
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error::")]
    assert len(errors) == 1 and f"input {named} " in errors[0]


def test_parsing():
    assert parse_not_before("2024-01-31") == "2024-01-31T00:00:00Z"
    assert parse_not_before("2024-01-31T12:00:00+02:00") == "2024-01-31T10:00:00Z"
    assert parse_mode("") == "skip" and parse_mode("labels-only") == "labels-only"
    assert created_before({"created_at": "2024-01-30T23:59:59Z"}, "2024-01-31T00:00:00Z")
    assert not created_before({"created_at": "2024-01-31T00:00:00Z"}, "2024-01-31T00:00:00Z")
    assert created_before({}, "2024-01-31T00:00:00Z")  # unknown age: the cautious side


def test_cli_sweep_takes_the_cutoff(fake_github):
    from test_action_sweep_cli import sweep

    cutoff = _backlog(fake_github)
    proc = sweep(fake_github, "--repo", REPO, "--dry-run", "--json", "--not-before", cutoff)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["before_not_before"] == 2 and sorted(i["number"] for i in doc["issues"]) == [3, 4]
    bad = sweep(fake_github, "--repo", REPO, "--not-before", "soon")
    assert bad.returncode == 2 and "--not-before" in bad.stderr


# ---- issue 30: one strict reading of a date, everywhere ------------------------------------------------------------

MALFORMED = [
    "0999-01-01",  # a year before 1970 (it was sent to the search as created:<999-01-01T00:00:00Z)
    "0001-01-01T00:00:00+01:00",  # was "internal error: OverflowError"
    "9999-12-31T23:59:59-01:00",  # past 9999 in UTC: was "internal error: OverflowError"
    "1969-12-31",
    "1970-01-01T00:00:00+01:00",  # 1969-12-31T23:00:00Z
    "2024-01-31T12:00:00",  # a date-time without its zone
    "2024-01-31 12:00:00Z",  # a space for the T
    "2024-02-30",  # impossible days
    "2023-02-29",
    "2024-13-01",
    "2024-01-31T24:00:00Z",
    "2024-01-31T12:60:00Z",
    "２０２４-０１-３１",  # full-width digits
    "٢٠٢٤-٠١-٣١",  # Arabic-Indic digits
    "2024-W05-3",  # a week date
    "2024-031",  # an ordinal date
    "20240131",  # the basic format
    "2024-01-31T12:00:00+25:00",  # no such offset
    "10000-01-01",
    "last year",  # words
]


@pytest.mark.parametrize("mode", ["skip", "labels-only"])
@pytest.mark.parametrize("text", MALFORMED)
def test_a_malformed_or_out_of_range_date_is_one_line_exit_1_and_no_call(fake_github, tmp_path, text, mode):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"not-before": text, "not-before-mode": mode})
    assert run.returncode == 1 and run.requests == [], run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and errors[0].startswith("::error::input not-before must be a date"), run.stdout
    assert repr(text) in errors[0].replace("%25", "%") or text in errors[0]
    assert "internal error" not in run.stdout + run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("text", ["0999-01-01", "9999-12-31T23:59:59-01:00", "２０２４-01-31", "2024-01-31T12:00:00",
                                  "2024-02-30"])
def test_the_cli_reads_a_date_with_the_same_helper(fake_github, text):
    from test_action_sweep_cli import sweep

    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    proc = sweep(fake_github, "--repo", REPO, "--not-before", text)
    assert proc.returncode == 2 and fake_github.requests == []
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and "argument --not-before: must be a date" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def _old_and_new(fake):
    seed_issue(fake, 1, NOT_DISTRIBUTED)
    seed_issue(fake, 2, NEEDS_REPRO)


@pytest.mark.parametrize("text, cutoff", [("1970-01-01", "1970-01-01T00:00:00Z"),
                                          ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"),
                                          ("1970-01-01t01:00:00+01:00", "1970-01-01T00:00:00Z")])
@pytest.mark.parametrize("mode", ["skip", "labels-only"])
def test_the_earliest_date_takes_every_issue_in_both_modes(fake_github, tmp_path, text, cutoff, mode):
    _old_and_new(fake_github)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"not-before": text, "not-before-mode": mode})
    assert run.returncode == 0, run.stdout + run.stderr
    assert all(len(fake_github.comments(REPO, n)) == 1 for n in (1, 2))  # none is before it: all commented
    assert f"not-before {cutoff}" in run.stdout
    if mode == "skip":
        queries = [r.query["q"] for r in run.requests if r.path == "/search/issues"]
        assert any(q.endswith(f"created:<{cutoff}") for q in queries)


@pytest.mark.parametrize("text, cutoff", [("9999-12-31", "9999-12-31T00:00:00Z"),
                                          ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
                                          ("9999-12-31T23:59:59+00:00", "9999-12-31T23:59:59Z")])
@pytest.mark.parametrize("mode", ["skip", "labels-only"])
def test_the_latest_date_leaves_every_issue_before_it_in_both_modes(fake_github, tmp_path, text, cutoff, mode):
    _old_and_new(fake_github)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"not-before": text, "not-before-mode": mode})
    assert run.returncode == 0, run.stdout + run.stderr
    assert all(fake_github.comments(REPO, n) == [] for n in (1, 2))  # both were created before it
    if mode == "skip":  # not triaged at all, counted by one search whose date has four digits
        assert _touched(run) == set()
        assert f"not-before {cutoff}: 2 queue issue(s) created before it were not triaged" in run.stdout
        queries = [r.query["q"] for r in run.requests if r.path == "/search/issues"]
        assert any(q.endswith(f"created:<{cutoff}") for q in queries)
        assert any(q.endswith(f"created:>={cutoff}") for q in queries)
    else:  # labelled, never commented on
        assert _touched(run) == {1, 2} and all(MARKER in fake_github.issue_labels(REPO, n) for n in (1, 2))
        assert f"not-before {cutoff} (labels-only): 2 issue(s) created before it got labels" in run.stdout


def test_parsing_is_strict_and_formats_four_digit_years():
    assert parse_not_before(" 2024-01-31\n") == "2024-01-31T00:00:00Z"
    assert parse_not_before("2024-01-31T12:00:00.5Z") == "2024-01-31T12:00:01Z"  # GitHub's seconds: rounded up
    assert parse_not_before("2024-01-31T12:00-00:30") == "2024-01-31T12:30:00Z"
    assert parse_not_before("1970-01-01T00:00:00Z") == "1970-01-01T00:00:00Z"
    for text in MALFORMED + ["", "2024-1-31", "31/01/2024", "2024-01-31T12:00:00+0200"]:
        with pytest.raises(ValueError, match="^must be a date"):
            parse_not_before(text)
    assert created_before({"created_at": "1999-12-31T23:59:59Z"}, parse_not_before("2000-01-01"))
    assert not created_before({"created_at": "9999-12-31T23:59:59Z"}, parse_not_before("9999-12-31T23:59:59Z"))
