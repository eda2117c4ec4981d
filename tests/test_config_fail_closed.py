"""Issue 19 item 1: a configured repository file that cannot be used fails the run closed.

Each case goes through the real `entrypoint.py` (a subprocess with the runner's environment) and the GitHub
stand-in's contents API (whose answers are validated against GitHub's REST description): the file named by the
`config` input is missing, empty, only comments, malformed, invalid, unreadable, or arrives as base64 that does not
decode. Each must end in exactly one `::error::` line that names the file (and its line where there is one), exit
status 1, and no write at all — never a silent fallback to the bundled distributed queue (the failure issue 19
found: a storage issue got `oncall: distributed parallelisms` and a torchrun comment).
"""
from __future__ import annotations

import pytest

from actionrun import FSDP_WITH_REPRO, QUEUE, REPO, issues_payload, run_action, seed_issue

CONFIG = ".github/ptd-triage.yml"
FILE = f"{REPO}:{CONFIG}"


def _run(fake_github, tmp_path):
    seed_issue(fake_github, 1, FSDP_WITH_REPRO, labels=[QUEUE])
    return run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 1, "labeled", label=QUEUE),
                      inputs={"config": CONFIG})


def _assert_failed_closed(run, *expected: str):
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert run.returncode == 1, run.stdout + run.stderr
    assert len(errors) == 1, errors
    for text in expected:
        assert text in errors[0], errors[0]
    assert not run.writes, [f"{r.method} {r.path}" for r in run.writes]
    assert "oncall: distributed parallelisms" not in run.stdout and run.outputs.get("outcome") == "error"


CASES = {
    "empty": ("", [f"{FILE}: is empty"]),
    "only-whitespace": ("\n   \n", [f"{FILE}: is empty"]),
    "only-comments": ("# queue: storage\n# (to do)\n", [f"{FILE}: is empty"]),
    "malformed": ("queue: pt2\nrubric:\n  routing: [unclosed\n", [f"{FILE}:"]),
    "tab-indented": ("queue: pt2\nrubric:\n\troutes: {}\n", [f"{FILE}:3"]),
    "not-a-mapping": ("- queue\n- pt2\n", [f"{FILE}:1:", "is not of type 'object'"]),
    "unknown-key": ("queue: pt2\nqueue_lable: oops\n", [f"{FILE}:", "queue_lable"]),
    "unknown-queue": ("queue: storage\n", ["no bundled queue 'storage'"]),
    "invalid-rule": ("queue: pt2\nrubric:\n  routing:\n    precedence: [core]\n",
                     [f"{FILE}:4: route 'export' is missing from routing.precedence"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_configuration_file_fails_closed(fake_github, tmp_path, name):
    text, expected = CASES[name]
    fake_github.add_file(REPO, CONFIG, text)
    _assert_failed_closed(_run(fake_github, tmp_path), *expected)


def test_a_missing_configuration_file_is_an_error_not_the_bundled_queue(fake_github, tmp_path):
    run = _run(fake_github, tmp_path)  # no file at all: the contents API answers 404
    _assert_failed_closed(run, f"{FILE}: not found on the default branch")
    assert f"GET /repos/{REPO}/contents/{CONFIG}" in run.calls()


def test_a_file_only_on_another_branch_is_missing(fake_github, tmp_path):
    fake_github.add_file(REPO, CONFIG, "queue: pt2\n", ref="feature/storage")  # only the default branch is read
    _assert_failed_closed(_run(fake_github, tmp_path), f"{FILE}: not found on the default branch")


def test_undecodable_base64_is_an_error_naming_the_file(fake_github, tmp_path):
    fake_github.add_file(REPO, CONFIG, "queue: pt2\n", damaged_content="cXVldWU6IHB0Mgo=!!*not base64*\n")
    _assert_failed_closed(_run(fake_github, tmp_path), f"{FILE}: cannot be read", "not valid base64")


def test_a_file_that_is_not_utf8_is_an_error_naming_the_file(fake_github, tmp_path):
    fake_github.add_file(REPO, CONFIG, b"queue: \xff\xfe\n")
    _assert_failed_closed(_run(fake_github, tmp_path), f"{FILE}: cannot be read", "not UTF-8")


def test_an_unreadable_file_is_an_error_naming_the_file(fake_github, tmp_path):
    fake_github.add_file(REPO, CONFIG, "queue: pt2\n")
    fake_github.inject("GET", rf"/repos/{REPO}/contents/\.github/ptd-triage\.yml", 403, times=5)
    _assert_failed_closed(_run(fake_github, tmp_path), f"{FILE}: cannot be read", "403")


def test_a_directory_where_the_file_should_be_is_an_error(fake_github, tmp_path):
    fake_github.add_file(REPO, CONFIG + "/rubric.yaml", "version: 1\n")
    # Issue 40: said as what it is (a folder, its path without the trailing "/"), not as GitHub's "failed (200)".
    _assert_failed_closed(_run(fake_github, tmp_path), f'{FILE} is a folder, not a file: end the path with "/"')


def test_without_the_config_input_the_run_says_which_queue_it_uses(fake_github, tmp_path):
    """The default (no `config` input) is the bundled distributed queue, and every run that triages says so in a
    notice and in the step summary: a fork that forgot its configuration sees PyTorch's queue named."""
    seed_issue(fake_github, 1, FSDP_WITH_REPRO, labels=[QUEUE])
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 1, "labeled", label=QUEUE))
    assert run.returncode == 0, run.stdout + run.stderr
    notices = [line for line in run.stdout.splitlines() if line.startswith("::notice::")]
    assert any("the bundled 'distributed' queue (the default: no config input" in n for n in notices), notices
    assert "the bundled 'distributed' queue" in run.summary
    assert not any("/contents/" in call for call in run.calls())  # no configuration read without the input


def test_with_a_configuration_the_run_names_it(fake_github, tmp_path):
    fake_github.add_file(REPO, CONFIG, "queue: distributed\n")
    run = _run(fake_github, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"::notice::ptd-triage: queue: the bundled 'distributed' queue changed by {FILE}" in run.stdout
