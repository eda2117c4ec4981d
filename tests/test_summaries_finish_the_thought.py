"""Issue 40: summaries that finish the thought, looked at rendered (tests/summaryhtml.py) from the real entrypoint
against the GitHub stand-in.

- Every dry-run summary ends with how to go live, for the switch that applies to the run: `PTD_TRIAGE_LIVE` in the
  example workflows (each run is handed its workflow's `with:` as GitHub evaluates it, and its `env:`), the "Dry
  run" box for a run by hand, the `dry-run` input for a workflow of one's own; the CLI names its flag. A run that
  writes has no such line.
- A re-triage says it only adds labels, and names the labels a person must change by hand.
- A comment's text is shown beside its template's name, collapsed.
- A model's usage is a small table whose calls are the log's (a 5xx retried twice is 3 calls in both).
- `labels sync` says what differs (colour or description, with the values); a folder `config` without its "/" is
  one clear line.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakellm import FakeOpenAI, Fault
from summaryhtml import read
from test_workflow_dry_run import contexts, form_defaults
from test_workflow_filters import comment as comment_event
from test_workflow_filters import dispatch
from test_workflows import load_workflow
from ghexpr import interpolate

from actionrun import (FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, comment_payload,
                       issues_payload, run_action, schedule_payload, seed_issue)

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / "examples" / "workflows"
LIVE = "PTD_TRIAGE_LIVE"


def workflow(name: str) -> dict:
    return load_workflow((WORKFLOWS / name).read_text(encoding="utf-8"))


def handed(name: str, event_name: str, payload: dict, *, given: dict | None = None,
           job: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """(the Action step's inputs as GitHub evaluates them, the workflow's env) for `payload`."""
    wf = workflow(name)
    ctx = contexts(wf, event_name, payload, given=given)
    jobs = wf["jobs"]
    (step,) = [s for s in jobs[job or next(iter(jobs))]["steps"] if "ptd-triage@" in str(s.get("uses", ""))]
    inputs = {k: interpolate(str(v), ctx) for k, v in step["with"].items()}
    env = {**ctx["env"], "GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/{name}@refs/heads/main"}
    return inputs, env


def last_line(run) -> str:
    """The summary's last line, after checking that it is the "To go live" section's, the last one."""
    lines = [line for line in run.summary.strip().splitlines() if line.strip()]
    assert lines[-2] == "### To go live", lines[-3:]
    return lines[-1]


def form(name: str, **values) -> dict:
    """A "Run workflow" form as GitHub hands it in the payload: every input, its default unless given."""
    return {**form_defaults(workflow(name)), **values}


# ---- how to go live --------------------------------------------------------------------------------------------


def test_the_label_workflows_dry_run_ends_with_its_switch(fake_github, tmp_path):
    seed_issue(fake_github, 1, NEEDS_REPRO)
    payload = issues_payload(fake_github, 1, "labeled", label=QUEUE)
    inputs, env = handed("ptd-triage-labeled.yml", "issues", payload)
    run = run_action(fake_github, tmp_path, "issues", payload, inputs=inputs, env=env)
    assert run.returncode == 0 and run.writes == []
    assert last_line(run).startswith(f"This workflow is a dry run until its `{LIVE}` is")
    assert f'`{LIVE}: "true"` in the `env:` of `.github/workflows/ptd-triage-labeled.yml`' in last_line(run)
    blocks, _ = read(run.summary)
    assert [b.tag for b in blocks[-2:]] == ["h3", "p"] and blocks[-2].text == "To go live"  # the last thing read
    assert f"ptd-triage: a dry run: to go live, this workflow is a dry run until its `{LIVE}`" in run.stdout


def test_the_command_workflows_dry_run_ends_with_its_switch(fake_github, tmp_path):
    seed_issue(fake_github, 2, FSDP_WITH_REPRO)
    fake_github.set_role(REPO, "maint", "triage")
    said = fake_github.add_comment(REPO, 2, "/ptd-retriage", author="maint")
    payload = comment_payload(fake_github, 2, said)
    inputs, env = handed("ptd-triage-retriage-command.yml", "issue_comment", payload)
    run = run_action(fake_github, tmp_path, "issue_comment", payload, inputs=inputs, env=env)
    assert run.returncode == 0 and run.writes == []
    assert LIVE in last_line(run) and "ptd-triage-retriage-command.yml" in last_line(run)


def test_a_scheduled_sweeps_dry_run_ends_with_its_switch_and_a_run_by_hand_with_its_box(fake_github, tmp_path):
    seed_issue(fake_github, 3, NOT_DISTRIBUTED)
    inputs, env = handed("ptd-triage-sweep.yml", "schedule", schedule_payload())
    scheduled = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs=inputs, env=env)
    assert scheduled.returncode == 0 and scheduled.writes == []
    assert f'`{LIVE}: "true"`' in last_line(scheduled)

    payload = dispatch(form("ptd-triage-sweep.yml"))
    inputs, env = handed("ptd-triage-sweep.yml", "workflow_dispatch", payload, given=payload["inputs"])
    by_hand = run_action(fake_github, tmp_path, "workflow_dispatch", payload, inputs=inputs, env=env)
    assert by_hand.returncode == 0 and by_hand.writes == []
    line = last_line(by_hand)
    assert line.startswith('This run was a dry run because its "Dry run" box was checked')
    assert "with the box cleared to write" in line
    assert f"Its scheduled runs write once `{LIVE}`" in line


def test_a_labels_sync_by_hand_ends_with_its_box(fake_github, tmp_path):
    fake_github.add_label(REPO, "bug")  # a repository with labels of its own
    payload = dispatch(form("ptd-triage-sweep.yml", command="labels-sync"))
    inputs, env = handed("ptd-triage-sweep.yml", "workflow_dispatch", payload, given=payload["inputs"])
    run = run_action(fake_github, tmp_path, "workflow_dispatch", payload, inputs=inputs, env=env)
    assert run.returncode == 0 and run.writes == []
    assert "with the box cleared to create them" in last_line(run)


def test_the_plan_jobs_summary_names_the_apply_jobs_switch(fake_github, tmp_path):
    seed_issue(fake_github, 4, FSDP_WITH_REPRO)
    payload = issues_payload(fake_github, 4, "labeled", label=QUEUE)
    inputs, env = handed("ptd-triage-llm-plan-apply.yml", "issues", payload, job="plan")
    inputs.update(planner="rubric", **{"plans-file": str(tmp_path / "plans.json")})  # no model needed to plan
    run = run_action(fake_github, tmp_path, "issues", payload, inputs=inputs, env=env)
    assert run.returncode == 0, run.stdout
    assert "the apply job writes the saved plans" in last_line(run) and LIVE in last_line(run)
    applied, env = handed("ptd-triage-llm-plan-apply.yml", "issues", payload, job="apply")
    applied["plans-file"] = str(tmp_path / "plans.json")
    run = run_action(fake_github, tmp_path, "issues", payload, inputs=applied, env=env)
    assert run.returncode == 0 and run.writes == [], run.stdout
    assert f'`{LIVE}: "true"` in the `env:` of `.github/workflows/ptd-triage-llm-plan-apply.yml`' in last_line(run)


def test_a_workflow_of_ones_own_is_told_its_input_and_a_live_run_is_told_nothing(fake_github, tmp_path):
    seed_issue(fake_github, 5, FSDP_WITH_REPRO)
    payload = issues_payload(fake_github, 5, "labeled", label=QUEUE)
    own = run_action(fake_github, tmp_path, "issues", payload, inputs={"dry-run": "true"})
    assert last_line(own).startswith("The step's `dry-run` input is true: set it to `false`")
    live = run_action(fake_github, tmp_path, "issues", payload, env={LIVE: "true"})
    assert live.writes and "go live" not in (live.summary + live.stdout).lower()


def test_the_cli_sweeps_dry_run_names_its_flag(fake_github):
    seed_issue(fake_github, 6, FSDP_WITH_REPRO)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
           "GITHUB_TOKEN": fake_github.token}
    proc = subprocess.run([sys.executable, "-m", "triage", "sweep", "--repo", REPO, "--api-url", fake_github.url,
                           "--skip-recent", "0", "--dry-run"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("a dry run, nothing written: run it again without --dry-run to write")


# ---- re-triage only adds ---------------------------------------------------------------------------------------


def test_a_retriage_says_it_only_adds_and_names_what_a_person_changes_by_hand(fake_github, tmp_path):
    """A maintainer's "this is FSDP, not DDP" on an issue people labelled DDP: the plan adds nothing (step 0: people
    triaged it), and the summary says why nothing changes and what to do."""
    seed_issue(fake_github, 7, ("DDP hangs at the first step", "My job hangs at the first backward."),
               labels=[QUEUE, "oncall: distributed parallelisms", "module: ddp", MARKER])
    fake_github.set_role(REPO, "maint", "triage")
    said = fake_github.add_comment(REPO, 7, "This is FSDP, not DDP.\n\n/ptd-retriage", author="maint")
    payload = comment_payload(fake_github, 7, said)
    inputs, env = handed("ptd-triage-retriage-command.yml", "issue_comment", payload)
    run = run_action(fake_github, tmp_path, "issue_comment", payload, inputs=inputs, env=env)
    assert run.returncode == 0, run.stdout
    blocks, _ = read(run.summary)
    (line,) = [b.text for b in blocks if b.tag == "li" and "re-triage only adds" in b.text]
    assert "A re-triage only adds labels: it never removes one" in line
    assert "would keep module: ddp" in line and "a person removes it by hand" in line
    (table,) = [b for b in blocks if b.tag == "table"]
    assert table.rows[0][3] == "-"  # "Would add: -", now explained above it

    live = run_action(fake_github, tmp_path, "issue_comment", payload, inputs={**inputs, "dry-run": "false"}, env=env)
    assert "so the issue keeps `module: ddp`" in live.summary
    assert "module: ddp" in fake_github.issue_labels(REPO, 7)  # and it did keep it


# ---- the comment's text ----------------------------------------------------------------------------------------


def test_the_comments_text_is_shown_beside_its_template_name(fake_github, tmp_path):
    seed_issue(fake_github, 8, NEEDS_REPRO)
    seed_issue(fake_github, 9, NOT_DISTRIBUTED)
    seed_issue(fake_github, 10, NEEDS_REPRO)
    one = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 8, "labeled", label=QUEUE),
                     inputs={"dry-run": "true"})
    blocks, tags = read(one.summary)
    (details,) = [b for b in blocks if b.tag == "details" and b.text.startswith("The comment")]
    assert details.text == "The comment it would post: needs_distributed_reproduction"
    after = blocks[blocks.index(details) + 1:]
    assert after[0].tag == "p" and after[0].text.startswith("Hi @reporter, this is the triage bot of the distributed")
    assert "blockquote" in tags and "ptd-triage:" not in one.summary  # quoted, its hidden marker left out

    sweep = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"dry-run": "true"})
    blocks, _ = read(sweep.summary)
    texts = [b.text for b in blocks if b.tag == "details" and b.text.startswith("The comment")]
    # Each template once, with the issue its text is shown for: two comments from one template are one text.
    assert texts == ["The comment it would post: needs_distributed_reproduction (on #8)",
                     "The comment it would post: not_distributed (on #9)"]
    assert blocks.index(next(b for b in blocks if b.text == texts[0])) < next(
        i for i, b in enumerate(blocks) if b.tag == "h3" and b.text.startswith("Would triage"))


def test_a_template_cannot_open_or_close_the_summarys_html(tmp_path):
    from triage.action.summary_blocks import comment_text

    lines = comment_text("x", "Hi</details><script>alert(1)</script>\n\n<!-- ptd-triage:x -->\n", posted=True)
    text = "\n".join(lines)
    assert text.count("</details>") == 1 and "<script>" not in text and "ptd-triage:" not in text


# ---- model usage -----------------------------------------------------------------------------------------------


def test_model_usage_is_a_table_whose_calls_are_the_logs(fake_github, tmp_path):
    """The disagreement as filed: a call the provider answered 500 and then 503 before it answered is 3 calls for
    the run's line and was 1 for the issue's JSON (the issue counted answers, the run every request)."""
    key = "sk-test-abcdefghijklmnopqrstuvwxyz"
    seed_issue(fake_github, 11, FSDP_WITH_REPRO)
    with FakeOpenAI(api_key=key) as model:
        model.script(Fault.server_error(500), Fault.server_error(503))
        run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 11, "labeled", label=QUEUE),
                         inputs={"planner": "llm", "llm-provider": "openai", "llm-model": "m",
                                 "llm-base-url": model.url, "llm-api-key": key, "dry-run": "true"})
        sent = len([c for c in model.calls if c.method == "POST"])
    assert run.returncode == 0, run.stdout
    logged = re.search(r"model: asked on 1 issue\(s\), (\d+) call\(s\), (\d+) input tokens", run.stdout)
    blocks, _ = read(run.summary)
    (table,) = [b for b in blocks if b.tag == "table" and b.header and b.header[0] == "Model"]
    row = dict(zip(table.header, table.rows[0]))
    assert sent == 3 == int(logged.group(1)) == int(row["Calls"])
    assert int(row["Input tokens"].replace(",", "")) == int(logged.group(2))
    assert row["Model"] == "openai m" and row["Cost"] == "no estimate"
    assert '"calls"' not in run.summary  # no raw JSON


# ---- labels sync and the folder path ---------------------------------------------------------------------------


def test_labels_sync_says_what_differs_with_both_values():
    from triage.config.labels import LabelSet, LabelSpec
    from triage.config.sync import plan_sync, table

    labels = LabelSet("q", (LabelSpec("a", "module", None, "Configured words.", "c5def5"),
                            LabelSpec("b", "module", None, "Same words.", "c5def5")))
    changes = plan_sync(labels, [{"name": "a", "color": "C5DEF5", "description": "Old words."},
                                 {"name": "b", "color": "ededed", "description": "Same words."}])
    printed = table(changes, applied=False)
    row_a, row_b = printed.splitlines()[1:3]
    assert row_a.startswith("differs (description)") and "description here: 'Old words.'" in row_a
    assert "colour" not in row_a.split("]")[0].split("[")[-1]  # the same colour is never said to differ
    assert row_b.startswith("differs (colour)") and "colour #ededed here, #c5def5 configured" in row_b


def test_a_folder_config_without_its_slash_is_one_clear_line(fake_github, tmp_path):
    from test_fork_queue import put_folder

    put_folder(fake_github)
    seed_issue(fake_github, 12, FSDP_WITH_REPRO, labels=["sig: storage"])
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 12, "labeled", label="sig: storage"),
                     inputs={"config": ".github/ptd-triage"})
    assert run.returncode == 1
    (line,) = [l for l in run.stdout.splitlines() if l.startswith("::error::")]
    assert line == (f'::error::{REPO}:.github/ptd-triage is a folder, not a file: end the path with "/" '
                    '(.github/ptd-triage/) to read it as a queue folder')
    assert "failed (200)" not in run.stdout
