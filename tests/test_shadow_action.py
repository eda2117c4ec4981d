"""`mode: shadow` through the real entrypoint (issue 32): a read-only token, a schedule or a dispatch, and only the
step summary and the JSON report written."""
from __future__ import annotations

import json

from actionrun import REPO, dispatch_payload, issues_payload, run_action, schedule_payload
from fakegithub import FakeGitHub
from shadow_world import build_window

READ_ONLY = "ghs_read_only_issues_read"


def _files(root) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_mode_shadow_writes_only_the_summary_and_the_report_with_a_read_only_token(tmp_path):
    with FakeGitHub() as gh:
        world = build_window(gh, 40, repo=REPO)
        gh.add_token(READ_ONLY, "github-actions[bot]", read_only=True)
        inputs = {"mode": "shadow", "github-token": READ_ONLY, "shadow-since": world.since,
                  "shadow-until": world.until}
        run = run_action(gh, tmp_path, "schedule", schedule_payload(), inputs=inputs)
        assert run.returncode == 0, run.stderr
        assert run.writes == [] and not gh.violations
        run_dir = tmp_path / "run0"
        report_path = run_dir / "temp" / "ptd-triage-shadow.json"
        # the runner's own files (event, outputs, summary), and the report: nothing else was left behind
        assert _files(run_dir) == {"event.json", "output.txt", "summary.md", "temp/ptd-triage-shadow.json"}
        assert run.outputs == {"shadow-file": str(report_path)}
        report = json.loads(report_path.read_text())
        assert report["issues"] == 40 and report["requests"] == len(run.requests)
        assert report["steps"]["routing"]["total"] == report["triaged_by_people"] > 0
        assert "## ptd-triage shadow: octo-org/octo-repo, nothing written" in run.summary
        assert "### Disagreements" in run.summary and "::error::" not in run.stdout

        # a dispatch with a cache: the second run reads no issue again
        cache = tmp_path / "cache"
        inputs.update({"shadow-cache": str(cache), "shadow-file": str(tmp_path / "s.json")})
        first = run_action(gh, tmp_path, "workflow_dispatch", dispatch_payload(), inputs=inputs)
        second = run_action(gh, tmp_path, "workflow_dispatch", dispatch_payload(), inputs=inputs)
        assert first.returncode == second.returncode == 0, second.stderr
        assert [c for c in second.calls() if "/issues/" in c] == []
        assert json.loads((tmp_path / "s.json").read_text())["from_cache"] == 41

        # the token really is read-only: the triage mode's writes are refused by the stand-in
        gh.add_issue(REPO, 999, title="FSDP hang", body="fully_shard hangs", labels=["oncall: distributed"])
        refused = run_action(gh, tmp_path, "issues", issues_payload(gh, 999, "labeled", label="oncall: distributed"),
                             inputs={"github-token": READ_ONLY})
        assert refused.returncode == 1 and "403" in refused.stdout + refused.stderr

        # the queue-label input names the queue, as in the other modes (a label of the repository: issue 40)
        gh.add_label(REPO, "oncall: elsewhere")
        other = run_action(gh, tmp_path, "schedule", schedule_payload(),
                           inputs={**inputs, "queue-label": "oncall: elsewhere"})
        assert other.returncode == 0, other.stderr
        (search,) = [r for r in other.requests if r.path == "/search/issues"]
        assert 'label:"oncall: elsewhere"' in search.query["q"]
        assert json.loads((tmp_path / "s.json").read_text())["issues"] == 0


def test_mode_shadow_on_an_issue_event_or_a_bad_window_is_one_error_line(fake_github, tmp_path):
    fake_github.add_issue(REPO, 1, title="x", body="y", labels=["oncall: distributed"])
    event = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 1, "labeled",
                                                                       label="oncall: distributed"),
                       inputs={"mode": "shadow"})
    bad = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"mode": "shadow", "shadow-since": "last week"})
    for run, words in ((event, "schedule or a workflow_dispatch"), (bad, "input shadow-since")):
        assert run.returncode == 1
        errors = [line for line in run.stdout.splitlines() if line.startswith("::error::")]
        assert len(errors) == 1 and words in errors[0], run.stdout
        assert run.requests == []


def test_mode_shadow_warns_per_skipped_issue_and_fails_on_a_failing_model(tmp_path):
    """Issue 37 through the entrypoint: a timeline answering 410 is one `::warning::` naming the issue and the run
    passes; a model that fails on every issue it is asked about is counted in the summary's first lines, each
    reason an `::error::`, and the run fails (exit 1) with both reports written."""
    from fakellm import FakeAnthropic, Fault

    key = "sk-ant-test-shadow-action-0000"
    with FakeGitHub() as gh, FakeAnthropic(api_key=key) as model:
        world = build_window(gh, 10, repo=REPO)
        gh.add_token(READ_ONLY, "github-actions[bot]", read_only=True)
        gone = sorted(world.truths)[2]
        gh.inject("GET", rf"/repos/{REPO}/issues/{gone}/timeline", 410,
                  body={"message": "Issue gone", "documentation_url": "https://docs"})
        inputs = {"mode": "shadow", "github-token": READ_ONLY, "shadow-since": world.since,
                  "shadow-until": world.until}
        run = run_action(gh, tmp_path, "schedule", schedule_payload(), inputs=inputs)
        assert run.returncode == 0, run.stderr
        warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning::")]
        assert len(warnings) == 1 and f"{REPO}#{gone} skipped" in warnings[0] and "410" in warnings[0]

        model.script(*[Fault.error(400, "this model is not available")] * 40)
        failing = run_action(gh, tmp_path, "workflow_dispatch", dispatch_payload(), inputs={
            **inputs, "planner": "llm", "llm-provider": "anthropic", "llm-model": "claude-test",
            "llm-base-url": model.url, "llm-api-key": key, "llm-timeout": "5"})
        assert failing.returncode == 1
        errors = [line for line in failing.stdout.splitlines() if line.startswith("::error::")]
        assert len(errors) == 1 and "the model failed on" in errors[0], failing.stdout
        first_lines = "\n".join(failing.summary.splitlines()[:6])
        assert "**planner llm: the model failed on" in first_lines
        report = json.loads((tmp_path / "run1" / "temp" / "ptd-triage-shadow.json").read_text())
        assert report["planners"]["failed"] == len(model.answered) > 0
        assert failing.writes == [] and not model.violations
        assert not gh.violations  # the injected 410 is one the timeline documents
