"""End to end: bad input gives one clear `::error::` line, exit status 1, and no API call; the inputs' other forms
work (token fallback, Docker-style INPUT_ names); and a run on an ignored event starts fast."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

import pytest
from actionrun import ENTRYPOINT, NOT_DISTRIBUTED, QUEUE, REPO, issues_payload, run_action, seed_issue


def _failed_cleanly(run, *needles: str) -> None:
    assert run.returncode == 1, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error::")]
    assert len(errors) == 1, run.stdout
    for needle in needles:
        assert needle in errors[0], errors[0]
    assert "Traceback" not in run.stdout + run.stderr
    assert run.requests == []


@pytest.fixture
def labeled(fake_github):
    seed_issue(fake_github, 70, NOT_DISTRIBUTED)
    return issues_payload(fake_github, 70, "labeled", label=QUEUE)


def test_unreadable_payload(fake_github, tmp_path):
    run = run_action(fake_github, tmp_path, "issues", None, env={"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})
    _failed_cleanly(run, "cannot read event payload")
    assert run.outputs["outcome"] == "error"


def test_payload_that_is_not_json(fake_github, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", None, env={"GITHUB_EVENT_PATH": str(bad)}),
                    "is not valid JSON")


def test_payload_without_an_issue_number(fake_github, tmp_path, labeled):
    del labeled["issue"]["number"]
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", labeled), "malformed event payload")


def test_payload_that_is_a_list(fake_github, tmp_path):
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", [1, 2]), "must be a JSON object")


def test_event_the_action_is_not_built_for(fake_github, tmp_path):
    _failed_cleanly(run_action(fake_github, tmp_path, "push", {"ref": "refs/heads/main"}),
                    "event 'push' is not handled", "issue_comment, issues, schedule, workflow_dispatch")


def test_missing_event_name(fake_github, tmp_path, labeled):
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", labeled, env={"GITHUB_EVENT_NAME": None}),
                    "GITHUB_EVENT_NAME")


def test_missing_token(fake_github, tmp_path, labeled):
    run = run_action(fake_github, tmp_path, "issues", labeled, inputs={"github-token": ""},
                     env={"GITHUB_TOKEN": None})
    _failed_cleanly(run, "no GitHub token")
    assert fake_github.token not in run.stdout + run.stderr


def test_token_falls_back_to_the_environment(fake_github, tmp_path, labeled):
    run = run_action(fake_github, tmp_path, "issues", labeled, inputs={"github-token": ""},
                     env={"GITHUB_TOKEN": fake_github.token})
    assert run.returncode == 0, run.stdout
    assert run.writes and all(r.user == fake_github.bot_login for r in run.writes)


def test_docker_style_input_names_are_accepted(fake_github, tmp_path, labeled):
    # Docker actions get INPUT_<NAME> with the hyphen kept; the composite action passes underscores.
    run = run_action(fake_github, tmp_path, "issues", labeled,
                     env={"INPUT_GITHUB_TOKEN": None, "INPUT_GITHUB-TOKEN": fake_github.token,
                          "INPUT_DRY_RUN": None, "INPUT_DRY-RUN": "true"})
    assert run.returncode == 0, run.stdout
    # dry run: the issue is read (a payload can be stale), nothing is written
    assert [r.method for r in run.requests] == ["GET"] and run.outputs["outcome"] == "not_distributed"


def test_invalid_rubric(fake_github, tmp_path, labeled):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("topics: [unclosed\n", encoding="utf-8")
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", labeled, inputs={"rubric": str(rubric)}),
                    str(rubric))


def test_missing_templates_directory(fake_github, tmp_path, labeled):
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", labeled,
                               inputs={"templates": str(tmp_path / "nope")}), "templates")


@pytest.mark.parametrize("repo", ["", "just-a-name", "a/b/c", "owner/ name"])
def test_malformed_repository(fake_github, tmp_path, labeled, repo):
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", labeled, env={"GITHUB_REPOSITORY": repo}),
                    "GITHUB_REPOSITORY")


@pytest.mark.parametrize("name,value", [("dry-run", "yes"), ("max-issues", "0"), ("max-issues", "ten"),
                                        ("max-issues", "5000"), ("issue-number", "-3"),
                                        # float() reads "inf": as the CLI's flags, no time budget is infinite (an
                                        # llm-timeout of inf overflowed the call's deadline on the first issue)
                                        ("issue-timeout", "inf"), ("sweep-timeout", "inf"), ("llm-timeout", "inf"),
                                        ("issue-timeout", "nan")])
def test_bad_input_values(fake_github, tmp_path, labeled, name, value):
    _failed_cleanly(run_action(fake_github, tmp_path, "issues", labeled, inputs={name: value}), f"input {name}")


def test_outputs_are_multiline_safe(fake_github, tmp_path, labeled):
    run = run_action(fake_github, tmp_path, "issues", labeled, inputs={"dry-run": "true"})
    plan = json.loads(run.outputs["plan"])  # the whole JSON survived the heredoc format
    assert "\n" in plan["comment"]["body"]
    raw = (tmp_path / "run0" / "output.txt").read_text(encoding="utf-8")
    assert "plan<<ghadelimiter_" in raw


# ---- cold start ------------------------------------------------------------------------------------------------

HEAVY = ("requests", "urllib3", "jinja2", "yaml", "jsonschema", "triage.planners", "triage.planners.rubric", "triage.github.client",
         "triage.github.transport")


def test_ignored_event_imports_nothing_heavy(fake_github, tmp_path):
    seed_issue(fake_github, 71, NOT_DISTRIBUTED, labels=(QUEUE, "bug"))
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 71, "labeled", label="bug"))
    event = next(tmp_path.glob("run*/event.json"))
    probe = (
        "import runpy, sys\n"
        "try:\n"
        f"    runpy.run_path({str(ENTRYPOINT)!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(event),
           "GITHUB_REPOSITORY": REPO, "INPUT_GITHUB_TOKEN": "t", "INPUT_QUEUE_LABEL": QUEUE}
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and "nothing to do" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def test_an_ignored_event_ends_cleanly_every_time(fake_github, tmp_path, record_property):
    # How long it takes is a benchmark (bench/speed.py: under half a second on a quiet machine), not a test: a
    # wall-clock limit here failed on a busy machine for reasons that had nothing to do with the code.
    seed_issue(fake_github, 72, NOT_DISTRIBUTED, labels=(QUEUE, "bug"))
    payload = issues_payload(fake_github, 72, "labeled", label="bug")
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        run = run_action(fake_github, tmp_path, "issues", payload)
        timings.append(time.perf_counter() - started)
        assert run.returncode == 0 and run.outputs["outcome"] == "ignored"
    median = statistics.median(timings)
    record_property("cold_start_seconds", round(median, 3))
    print(f"entrypoint cold start on an ignored event: median {median * 1000:.0f} ms of {len(timings)} runs")
