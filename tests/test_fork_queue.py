"""Issue 19 items 2-4: a whole new queue defined in the repository, read only through the contents API.

The shipped copy-and-edit example (examples/queues/storage: four teams, ten components, its own command word,
templates and prompt, no word "distributed") is put in the GitHub stand-in's repository under .github/ — no
checkout: the Action's workspace is empty — and the real `entrypoint.py` triages issues with it end to end: its
labels, its comment templates, its command word, and its words in the outputs, log and summary. The single-file
form (`extends: none`) and `extends:` of another repository's configuration (an organisation's shared queue) are
driven the same way, and so are the ways they can fail (a cycle, a missing base).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from actionrun import REPO, comment_payload, issues_payload, run_action

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "queues" / "storage"
QUEUE = "sig: storage"
MARKER = "storage-bot-triaged"
FOLDER = ".github/ptd-triage/"
SHARED = "octo-org/triage-config"  # an organisation's shared configuration repository


def example_files() -> dict[str, str]:
    """The queue's files, relative to the queue folder (sample issues are not part of a queue)."""
    return {p.relative_to(EXAMPLE).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(EXAMPLE.rglob("*")) if p.is_file() and p.suffix != ".jsonl"}


def sample_issues() -> dict[int, dict]:
    lines = (EXAMPLE / "sample-issues.jsonl").read_text(encoding="utf-8").splitlines()
    return {issue["number"]: issue for issue in map(json.loads, lines)}


def single_file() -> str:
    """The example as one `.github/ptd-triage.yml` (extends: none): rubric, labels, templates and prompt."""
    files = example_files()
    doc = {"extends": "none", "rubric": yaml.safe_load(files["rubric.yaml"]),
           "labels": {k: v for k, v in json.loads(files["labels.json"]).items() if not k.startswith("_")},
           "templates": {name[len("templates/"):-len(".md.j2")]: text for name, text in files.items()
                         if name.startswith("templates/")},
           "prompt": files["prompt.md.j2"]}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=200)


def seed(fake, *numbers: int, repo: str = REPO) -> None:
    issues = sample_issues()
    for number in numbers:
        issue = issues[number]
        fake.add_issue(repo, number, title=issue["title"], body=issue["body"], labels=[QUEUE])
    for spec in json.loads((EXAMPLE / "labels.json").read_text(encoding="utf-8"))["labels"]:
        fake.add_label(repo, spec["name"])


def put_folder(fake, repo: str = REPO, at: str = FOLDER) -> None:
    for name, text in example_files().items():
        fake.add_file(repo, at + name, text)


def triage(fake, tmp_path, number: int, config: str, **inputs):
    return run_action(fake, tmp_path, "issues", issues_payload(fake, number, "labeled", label=QUEUE),
                      inputs={"config": config, "queue-label": "", **inputs})


def said(run) -> str:
    """Everything a person reads about the run: the log, the summary and the outputs but the plan's JSON (the
    plan keeps the procedure's stable values, e.g. outcome `not_distributed`, for tools)."""
    outputs = {k: v for k, v in run.outputs.items() if k not in ("plan", "plans")}
    return run.stdout + run.summary + json.dumps(outputs)


def test_the_example_has_no_other_queue_in_its_words():
    for name, text in example_files().items():
        assert "distributed" not in text.lower(), name
    assert "distributed" not in (EXAMPLE / "sample-issues.jsonl").read_text(encoding="utf-8").lower()


def test_the_example_queue_from_the_repository_folder_end_to_end(fake_github, tmp_path):
    put_folder(fake_github)
    seed(fake_github, 101, 103, 104)

    run = triage(fake_github, tmp_path, 101, FOLDER)
    assert run.returncode == 0, run.stdout + run.stderr
    assert set(fake_github.issue_labels(REPO, 101)) == {QUEUE, "team: block", "component: volumes", MARKER}
    assert run.outputs["outcome"] == "classified" and run.outputs["sub-oncall"] == "team: block"
    reads = [c for c in run.calls() if "/contents/" in c]
    # The folder, rubric, labels, the three templates its rubric names and the prompt: 7 requests, no more.
    assert len(reads) == 7 and len(set(reads)) == 7, reads
    assert all(c.startswith(f"GET /repos/{REPO}/contents/.github/ptd-triage") for c in reads)
    assert f"queue: the whole queue in the folder {REPO}:.github/ptd-triage/" in run.stdout

    repro = triage(fake_github, tmp_path, 103, FOLDER)
    assert repro.returncode == 0, repro.stdout + repro.stderr
    (comment,) = fake_github.comments(REPO, 103)
    assert comment["body"].startswith("Hi @") and "`aws s3`, `kubectl` or `mount`" in comment["body"]
    assert "<!-- ptd-triage:needs_storage_reproduction -->" in comment["body"]
    assert {"team: filesystem", "component: quotas", "needs reproduction", MARKER} <= set(
        fake_github.issue_labels(REPO, 103))

    away = triage(fake_github, tmp_path, 104, FOLDER)
    assert away.returncode == 0, away.stdout + away.stderr
    assert away.outputs["outcome"] == "not_storage"
    assert "step 1: not storage" in away.summary and "storage evidence only 0" in away.summary
    assert "distributed" not in said(away).lower()
    (comment,) = fake_github.comments(REPO, 104)
    assert "this is the triage bot of the storage queue" in comment["body"]
    added = set(fake_github.issue_labels(REPO, 104)) - {QUEUE}
    assert added == {"triage review", MARKER}
    # The comment says what the run added for the reporter to see, and never the bot's own marker label.
    assert "`triage review`" in comment["body"] and MARKER not in comment["body"]


def test_the_example_queue_answers_its_own_command_word_only(fake_github, tmp_path):
    put_folder(fake_github)
    seed(fake_github, 102)
    fake_github.set_role(REPO, "maintainer", "triage")
    other = fake_github.add_comment(REPO, 102, "/ptd-retriage", author="maintainer")
    ignored = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 102, other),
                         inputs={"config": FOLDER, "queue-label": ""})
    assert ignored.returncode == 0 and ignored.outputs["outcome"] == "ignored", ignored.stdout
    assert "no line '/storage-retriage'" in ignored.stdout and not ignored.writes

    own = fake_github.add_comment(REPO, 102, "/storage-retriage", author="maintainer")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 102, own),
                     inputs={"config": FOLDER, "queue-label": ""})
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "classified", run.stdout
    assert {"team: object", "component: multipart upload", MARKER} <= set(fake_github.issue_labels(REPO, 102))
    assert "/storage-retriage by maintainer (triage)" in run.stdout


def test_the_example_as_one_file_with_extends_none(fake_github, tmp_path):
    fake_github.add_file(REPO, ".github/ptd-triage.yml", single_file())
    seed(fake_github, 104)
    run = triage(fake_github, tmp_path, 104, ".github/ptd-triage.yml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.calls().count(f"GET /repos/{REPO}/contents/.github/ptd-triage.yml") == 1
    assert len([c for c in run.calls() if "/contents/" in c]) == 1  # one file, one request
    assert run.outputs["outcome"] == "not_storage"
    assert "this is the triage bot of the storage queue" in fake_github.comments(REPO, 104)[0]["body"]


def test_extends_an_organisations_shared_queue_in_another_repository(fake_github, tmp_path):
    fake_github.add_file(SHARED, ".github/ptd-triage.yml", single_file())
    fake_github.add_file(SHARED, ".github/ptd-triage.yml", "extends: none\n", ref="wip")  # never read
    fake_github.add_file(REPO, ".github/ptd-triage.yml", (
        f"extends: {SHARED}\n"
        "command: /our-storage-retriage\n"
        "templates:\n"
        "  not_storage: |\n"
        "    Hi{% if author %} @{{ author }}{% endif %}, this is the storage queue's triage bot: this does not look"
        " like ours. I have added `triage review`; no label was removed.\n"))
    seed(fake_github, 101, 104)
    run = triage(fake_github, tmp_path, 104, ".github/ptd-triage.yml")
    assert run.returncode == 0, run.stdout + run.stderr
    reads = [c for c in run.calls() if "/contents/" in c]
    assert reads == [f"GET /repos/{REPO}/contents/.github/ptd-triage.yml",
                     f"GET /repos/{SHARED}/contents/.github/ptd-triage.yml"]
    assert [r.query.get("ref") for r in run.requests if "/contents/" in r.path] == [None, None]  # default branch
    assert "this does not look like ours" in fake_github.comments(REPO, 104)[0]["body"]
    assert f"queue: the whole queue defined in {SHARED}:.github/ptd-triage.yml, changed by " in run.stdout
    routed = triage(fake_github, tmp_path, 101, ".github/ptd-triage.yml")
    assert "team: block" in fake_github.issue_labels(REPO, 101), routed.stdout


def test_extends_a_queue_folder_in_another_repository(fake_github, tmp_path):
    put_folder(fake_github, SHARED, "queues/storage/")
    fake_github.add_file(REPO, ".github/ptd-triage.yml", f"extends: {SHARED}:queues/storage/\n")
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, ".github/ptd-triage.yml")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "team: block" in fake_github.issue_labels(REPO, 101)


def _failed(run, *texts):
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert run.returncode == 1 and len(errors) == 1, run.stdout
    for text in texts:
        assert text in errors[0], errors[0]
    assert not run.writes


def test_a_cycle_of_extends_fails_closed(fake_github, tmp_path):
    fake_github.add_file(REPO, ".github/ptd-triage.yml", f"extends: {SHARED}\n")
    fake_github.add_file(SHARED, ".github/ptd-triage.yml", f"extends: {REPO}\n")
    seed(fake_github, 101)
    _failed(triage(fake_github, tmp_path, 101, ".github/ptd-triage.yml"), "(a cycle)", f"{SHARED}:.github/ptd-triage.yml:1")


def test_a_missing_base_in_another_repository_fails_closed(fake_github, tmp_path):
    fake_github.add_file(REPO, ".github/ptd-triage.yml", f"extends: {SHARED}:queues/none.yml\n")
    seed(fake_github, 101)
    _failed(triage(fake_github, tmp_path, 101, ".github/ptd-triage.yml"),
            f"{SHARED}:queues/none.yml: not found on the default branch")


@pytest.mark.parametrize("files,expected", [
    ({}, f"{REPO}:.github/ptd-triage/: not found"),
    ({"rubric.yaml": "version: 1\n", "templates/x.md.j2": "x"}, "not a queue folder: no labels.json"),
    ({"rubric.yaml": "", "labels.json": "{}", "templates/x.md.j2": "x"}, "ptd-triage/rubric.yaml: is empty"),
    ({"rubric.yaml": "version: [\n", "labels.json": "{}", "templates/x.md.j2": "x"}, "ptd-triage/rubric.yaml:"),
], ids=["missing", "no-labels", "empty-rubric", "malformed-rubric"])
def test_a_broken_queue_folder_fails_closed(fake_github, tmp_path, files, expected):
    for name, text in files.items():
        fake_github.add_file(REPO, FOLDER + name, text)
    seed(fake_github, 101)
    _failed(triage(fake_github, tmp_path, 101, FOLDER), expected)


def test_an_invalid_rule_in_the_folder_names_its_file_and_line(fake_github, tmp_path):
    put_folder(fake_github)
    rubric = example_files()["rubric.yaml"].replace("precedence: [block, object, filesystem, core]",
                                                     "precedence: [block, object, core]")
    fake_github.add_file(REPO, FOLDER + "rubric.yaml", rubric)
    line = rubric.splitlines().index("  precedence: [block, object, core]") + 1
    seed(fake_github, 101)
    _failed(triage(fake_github, tmp_path, 101, FOLDER),
            f"{REPO}:.github/ptd-triage/rubric.yaml:{line}: route 'filesystem' is missing from routing.precedence")


# ---- the CLI on the example: validate, labels sync --dry-run, plan ------------------------------------------------

def _cli(*args, env=None, env_extra=None):
    if env_extra:
        import os

        env = {**(env or os.environ), **env_extra}
    return subprocess.run([sys.executable, "-m", "triage", *map(str, args)], capture_output=True, text=True,
                          timeout=60, env=env)


def test_the_example_passes_validate():
    proc = _cli("validate", "--config", EXAMPLE)
    assert proc.returncode == 0 and proc.stdout.startswith("ok: "), proc.stdout + proc.stderr


def test_the_example_as_one_file_passes_validate(tmp_path):
    path = tmp_path / "ptd-triage.yml"
    path.write_text(single_file(), encoding="utf-8")
    proc = _cli("validate", "--config", path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_example_labels_sync_dry_run(fake_github):
    import os

    fake_github.add_repo(REPO)
    fake_github.add_label(REPO, "triage review")  # one the repository has already
    env = dict(os.environ, GITHUB_TOKEN=fake_github.token)
    proc = _cli("labels", "sync", "--repo", REPO, "--api-url", fake_github.url, "--config", EXAMPLE, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for spec in json.loads((EXAMPLE / "labels.json").read_text(encoding="utf-8"))["labels"]:
        assert spec["name"] in proc.stdout
    assert not [r for r in fake_github.requests if r.method != "GET"]


def test_the_example_plans_its_sample_issues():
    proc = _cli("plan", "--config", EXAMPLE, "--format", "json", EXAMPLE / "sample-issues.jsonl")
    assert proc.returncode == 0, proc.stderr
    plans = {p["issue"]: p for p in map(json.loads, proc.stdout.splitlines())}
    assert plans[101]["sub_oncall"] == "team: block" and plans[101]["modules"] == ["component: volumes"]
    assert plans[102]["sub_oncall"] == "team: object" and "component: multipart upload" in plans[102]["modules"]
    assert plans[103]["sub_oncall"] == "team: filesystem" and plans[103]["comment"]["template"] == \
        "needs_storage_reproduction"
    assert plans[104]["comment"]["template"] == "not_storage"
    assert plans[105]["outcome"] == "high_priority" and "high priority" not in plans[105]["add_labels"]
    assert "kind: feature" in plans[106]["add_labels"]
    text = _cli("plan", "--config", EXAMPLE, "--format", "text", EXAMPLE / "sample-issues.jsonl")
    assert "outcome:    not_storage" in text.stdout and "distributed" not in text.stdout.lower()


# A queue of the repository's own without a prompt template, asked with the model planner: the run fails before
# any issue (one line, exit 1, nothing written). It used to ask the model with the bundled distributed queue's
# prompt — another queue's routes and criteria — without a word.
MODEL_INPUTS = {"planner": "llm", "llm-provider": "openai", "llm-model": "m", "llm-api-key": "k",
                "llm-base-url": "http://127.0.0.1:9"}  # never reached: the run stops before asking


def test_a_repository_queue_without_a_prompt_fails_the_model_planner_closed(fake_github, tmp_path):
    for name, text in example_files().items():
        if name != "prompt.md.j2":
            fake_github.add_file(REPO, FOLDER + name, text)
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, FOLDER, **MODEL_INPUTS)
    assert run.returncode == 1, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and "no prompt template" in errors[0] and QUEUE in errors[0], run.stdout
    assert not run.writes
    assert fake_github.issue_labels(REPO, 101) == [QUEUE]

    rubric_run = triage(fake_github, tmp_path, 101, FOLDER)  # the rubric needs no prompt: the same queue triages
    assert rubric_run.returncode == 0 and MARKER in fake_github.issue_labels(REPO, 101), rubric_run.stdout


def test_a_repository_queue_with_its_prompt_passes_the_model_planners_check(fake_github, tmp_path):
    put_folder(fake_github)
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, FOLDER, **MODEL_INPUTS, **{"llm-timeout": "1"})
    # The model is unreachable, so the issue falls back to the rubric, but the run got past the prompt check.
    assert "no prompt template" not in run.stdout, run.stdout
    assert MARKER in fake_github.issue_labels(REPO, 101), run.stdout + run.stderr


def test_the_cli_refuses_a_model_planner_for_a_queue_without_a_prompt(tmp_path):
    import shutil

    queue = tmp_path / "queue"
    shutil.copytree(EXAMPLE, queue)
    (queue / "prompt.md.j2").unlink()
    proc = _cli("plan", "--config", queue, "--planner", "llm", "--llm-provider", "openai", "--llm-model", "m",
                "--llm-base-url", "http://127.0.0.1:9", EXAMPLE / "sample-issues.jsonl",
                env_extra={"PTD_LLM_API_KEY": "k", "OPENAI_API_KEY": "k"})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "no prompt template" in lines[0], proc.stderr
    assert proc.stdout == ""
    # It says how to add one, and only with what exists: the Action has no `prompt` input, the CLI no --prompt.
    assert "prompt.md.j2 beside its templates" in lines[0] and "input" not in lines[0], lines[0]


def test_the_hybrid_planners_reasons_use_the_queues_words():
    from triage.config.bundle import load_bundle
    from triage.core.snapshot import snapshot_from_json
    from triage.core.procedure import rubric_steps
    from triage.core.reading import Reading
    from triage.planners.hybrid import HybridSettings, uncertain_steps

    bundle = load_bundle(queue=EXAMPLE)
    issue = sample_issues()[104]  # the example's not-storage issue: its trap matches
    snapshot = snapshot_from_json({**issue, "labels": [QUEUE], "state": "open"})
    reading = Reading(snapshot, bundle)
    settings = HybridSettings(trap_mixed=True, trap_max_distributed=-1.0)
    _, why = uncertain_steps(snapshot, bundle, rubric_steps(reading), settings, analysis=reading.analysis)
    (trap,) = [w for w in why if "trap" in w]
    assert "'not storage' trap matched but storage evidence is" in trap and "distributed" not in trap
