"""One-line CLI errors (issue 21 item 3), run as real subprocesses: a bad flag is one line naming it and exit 2;
`validate`'s exit statuses are the documented ones; a refused connection fails fast (no ~33 s of retries); a model
that fails in `plan` says so on stderr and in the plan; `--help` names no path that does not exist."""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ISSUE = str(ROOT / "examples" / "issues" / "fsdp2-dtensor-backward.json")


def cli(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "triage", *args], env={**base, **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed when the block ends: nothing listens there


@pytest.mark.parametrize("args, flag", [
    (["sweep", "--repo", "o/r", "--max-issues", "0"], "--max-issues"),
    (["sweep", "--repo", "o/r", "--timeout", "-5"], "--timeout"),
    (["sweep", "--repo", "o/r", "--not-before", "yesterday"], "--not-before"),
    (["eval", "x.jsonl", "--min-routing", "2"], "--min-routing"),
    (["plan", "--format", "xml", ISSUE], "--format"),
    (["plan", ISSUE, "--planner", "oracle"], "--planner"),
    (["replay", "--repo", "o/r", "--max-issues", "many"], "--max-issues"),
    (["sweep", "--repo", "o/r", "--timeout", "inf"], "--timeout"),
    (["sweep", "--repo", "o/r", "--skip-recent", "-5"], "--skip-recent"),
    (["sweep", "--repo", "o/r", "--skip-recent", "nan"], "--skip-recent"),
    (["sweep", "--repo", "o/r", "--not-before-mode", "never"], "--not-before-mode"),
    (["plan", ISSUE, "--planner", "llm", "--llm-price", "-1", "2"], "--llm-price"),
    (["plan", ISSUE, "--llm-price", "1", "inf"], "--llm-price"),
    (["plan", ISSUE, "--llm-timeout", "inf"], "--llm-timeout"),
    (["plan", ISSUE, "--llm-max-calls", "0"], "--llm-max-calls"),
    (["eval", "x.jsonl", "--min-module-f1", "nan"], "--min-module-f1"),
    (["eval", "x.jsonl", "--thresholds", "a,b"], "--thresholds"),
    (["labels", "sync"], "--repo"),
    (["plan"], "FILE"),
    (["sweep"], "--repo"),
    (["frobnicate"], "COMMAND"),
])
def test_a_bad_flag_is_one_line_naming_it_and_exit_2(args, flag):
    proc = cli(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("ptd-triage: error: ") and flag in lines[0] and "--help" in lines[0]


@pytest.mark.parametrize("args, flag", [
    (["sweep", "--repo", "o/r", "--max-issues", "100000"], "--max-issues"),  # checked after parsing
    (["sweep", "--repo", "o/r/x"], "--repo"),
    (["sweep", "--repo", "o/r", "--api-url", "ftp://example.com"], "--api-url"),
    (["plan", ISSUE, "--planner", "llm"], "--llm-model"),
    (["plan", ISSUE, "--config", "/nonexistent/queue"], "/nonexistent/queue"),
    (["plan", ISSUE, "--templates", "/nonexistent/templates"], "/nonexistent/templates"),
    (["eval", "/nonexistent.jsonl"], "/nonexistent.jsonl"),
])
def test_a_bad_value_found_after_parsing_is_one_line_too(args, flag):
    proc = cli(*args, env={"GITHUB_TOKEN": "t0ken-for-the-test"})
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ptd-triage: error: ") and flag in lines[0], proc.stderr


def test_in_actions_the_line_is_also_an_annotation():
    proc = cli("sweep", "--repo", "o/r", "--max-issues", "0", env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 2
    assert [l for l in proc.stderr.splitlines() if l.startswith("::error::")] and len(proc.stderr.splitlines()) == 2


def test_validate_exit_statuses_are_the_documented_ones(tmp_path):
    assert cli("validate").returncode == 0
    broken = tmp_path / "queue"
    shutil.copytree(ROOT / "queues" / "distributed", broken)
    with open(broken / "rubric.yaml", "a", encoding="utf-8") as handle:
        handle.write("oops: [\n")
    proc = cli("validate", "--config", str(broken))
    assert proc.returncode == 1, proc.stderr  # a problem in the configuration, printed as FILE:LINE: message
    assert re.match(rf"{re.escape(str(broken / 'rubric.yaml'))}:\d+: ", proc.stdout)
    missing = cli("validate", "--config", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "--config" in missing.stderr  # nothing to check: a usage error


def test_a_refused_connection_fails_within_5_seconds():
    port = closed_port()
    started = time.monotonic()
    proc = cli("sweep", "--repo", "o/r", "--dry-run", "--api-url", f"http://127.0.0.1:{port}",
               env={"GITHUB_TOKEN": "t0ken-for-the-test"})
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert "connection refused" in proc.stderr and elapsed < 5, (elapsed, proc.stderr)


def test_a_host_name_that_does_not_exist_fails_within_5_seconds():
    # .invalid never resolves (RFC 6761); a resolver that cannot be reached at all answers "try again", which is
    # retried as a blip should be, so the test needs one that answers.
    try:
        socket.getaddrinfo("api.nonexistent.invalid", 443)
        pytest.skip("this machine resolves .invalid")
    except socket.gaierror as exc:
        if exc.errno != socket.EAI_NONAME:
            pytest.skip(f"no resolver answers here ({exc})")
    started = time.monotonic()
    proc = cli("sweep", "--repo", "o/r", "--dry-run", "--api-url", "http://api.nonexistent.invalid",
               env={"GITHUB_TOKEN": "t0ken-for-the-test"})
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert "no such host name: api.nonexistent.invalid: is the API URL right?" in proc.stderr and elapsed < 5, \
        (elapsed, proc.stderr)


def test_the_action_fails_fast_on_a_refused_api_url(fake_github, tmp_path):
    from actionrun import NOT_DISTRIBUTED, QUEUE, issues_payload, run_action, seed_issue

    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    payload = issues_payload(fake_github, 1, "labeled", label=QUEUE)
    started = time.monotonic()
    run = run_action(fake_github, tmp_path, "issues", payload,
                     env={"GITHUB_API_URL": f"http://127.0.0.1:{closed_port()}", "PTD_TRIAGE_MAX_BACKOFF": None})
    assert run.returncode == 1 and time.monotonic() - started < 5
    errors = [l for l in run.stdout.splitlines() if l.startswith("::error::")]
    assert len(errors) == 1 and "connection refused" in errors[0]


def test_plan_with_a_dead_model_endpoint_says_the_fallback():
    proc = cli("plan", "--planner", "llm", "--llm-model", "m", "--llm-base-url",
               f"http://127.0.0.1:{closed_port()}/v1", ISSUE, env={"OPENAI_API_KEY": "sk-test-not-a-key"})
    assert proc.returncode == 1
    plan = json.loads(proc.stdout)
    assert plan["planner"] == "rubric" and "connection" in plan["usage"]["fallback"]
    assert any("the model's plan was not used" in r for r in plan["reasons"])
    assert "#4242: the model's plan was not used, the rubric's plan stands" in proc.stderr


COMMANDS = ["plan", "eval", "replay", "sweep", "validate", "labels", "labels sync"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_names_no_path_that_does_not_exist(command):
    text = cli(*command.split(), "--help").stdout
    assert text.startswith("usage:")
    paths = re.findall(r"(?<![\w/.:])((?:queues|examples|triage|docs|tests|bench)/[\w./-]*)", text)
    for path in paths:
        assert (ROOT / path.rstrip(".")).exists(), f"`ptd-triage {command} --help` names {path}, which does not exist"


@pytest.mark.parametrize("args, says", [
    (["labels", "sync", "--repo", "a/b"], "read the repository's labels"),
    (["labels", "sync", "--repo", "a/b", "--apply"], "read (and write) the repository's labels"),
    (["sweep", "--repo", "a/b"], "read (and write) the repository's issues"),
    (["replay", "--repo", "a/b"], "read the repository's issues"),
])
def test_a_missing_token_says_what_the_command_needs_it_for(args, says):
    """labels sync said it needed a token for the repository's issues: it reads (and with --apply writes) labels."""
    proc = cli(*args, env={"GITHUB_TOKEN": "", "GH_TOKEN": "", "INPUT_GITHUB-TOKEN": ""})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and says in lines[0], proc.stderr


def test_a_subcommand_imports_only_its_own_module():
    """Start-up (issue 27): `ptd-triage plan` builds only its own parser, so it does not import what `eval` and
    `replay` measure with; `--help` and an unknown command still see every subcommand."""
    probe = ("import sys; from triage.cli.main import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in sys.modules if m.startswith(('triage.evaluation', 'triage.cli.commands'))))")
    proc = subprocess.run([sys.executable, "-c", probe, "plan", ISSUE], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "['triage.cli.commands', 'triage.cli.commands.plan']"
    listed = cli("--help").stdout
    assert all(name in listed for name in ("plan", "eval", "replay", "sweep", "validate", "labels"))
    unknown = cli("plna", ISSUE)
    assert unknown.returncode == 2 and "invalid choice: 'plna'" in unknown.stderr and "eval" in unknown.stderr
