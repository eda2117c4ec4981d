"""Issue 30: a repository's queue is read through the contents API and nothing else, boundedly, and every error
about it names the repository's own file. Through the real entrypoint.py against the GitHub stand-in.

- Remote means remote: a queue folder without prompt.md.j2, asked with the model planner, fails closed naming the
  missing file; a file planted in the runner's working directory where a path built from the repository's name
  would point (`OWNER/REPO:.github/ptd-triage/prompt.md.j2`, which the run once read) is not read. With its
  prompt, the model is asked with the prompt read through the API.
- Bounded: only the templates the rubric names are fetched (400 more in the folder cost nothing); a name is
  checked by the file form's rule before it becomes a path; a queue is read in at most MAX_QUEUE_READS requests.
- Attributed: an allowlist error the repository's file caused names that file and line, not the bundled
  labels.json it was layered over.
"""
from __future__ import annotations

import json

import pytest
from test_fork_queue import FOLDER, MARKER, QUEUE, example_files, put_folder, seed, triage

from actionrun import REPO, issues_payload, run_action, seed_issue, NOT_DISTRIBUTED

PLANTED = "planted on the runner's disk: {{ part }} PLANTED-PROMPT"
MODEL = {"planner": "llm", "llm-provider": "openai", "llm-model": "m", "llm-api-key": "k", "llm-timeout": "5"}


def _one_error(run, *texts: str) -> str:
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert run.returncode == 1 and len(errors) == 1, run.stdout + run.stderr
    for text in texts:
        assert text in errors[0], errors[0]
    assert not run.writes and "internal error" not in run.stdout
    return errors[0]


def _contents(run) -> list[str]:
    return [r.path.split("/contents/", 1)[1] for r in run.requests if "/contents/" in r.path]


# ---- remote means remote -------------------------------------------------------------------------------------------


def test_a_queue_folder_without_its_prompt_fails_closed_and_a_planted_local_file_is_not_read(fake_github, tmp_path):
    for name, text in example_files().items():
        if name != "prompt.md.j2":
            fake_github.add_file(REPO, FOLDER + name, text)
    seed(fake_github, 101)
    planted = {f"{REPO}:{FOLDER}prompt.md.j2": PLANTED, f"{REPO}:{FOLDER}templates/../prompt.md.j2": PLANTED}
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 101, "labeled", label=QUEUE),
                     inputs={"config": FOLDER, "queue-label": "", **MODEL, "llm-base-url": "http://127.0.0.1:9"},
                     workspace=planted)
    _one_error(run, f"{REPO}:.github/ptd-triage/prompt.md.j2 is not on the default branch", QUEUE)
    assert "prompt.md.j2" not in _contents(run)  # not listed in the folder: not asked for either


def test_a_one_file_queue_without_a_prompt_fails_closed_naming_its_file(fake_github, tmp_path):
    from test_fork_queue import single_file
    import yaml

    doc = yaml.safe_load(single_file())
    del doc["prompt"]
    fake_github.add_file(REPO, ".github/ptd-triage.yml", yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    seed(fake_github, 101)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 101, "labeled", label=QUEUE),
                     inputs={"config": ".github/ptd-triage.yml", "queue-label": "", **MODEL,
                             "llm-base-url": "http://127.0.0.1:9"},
                     workspace={f"{REPO}:.github/prompt.md.j2": PLANTED})
    _one_error(run, f"add `prompt:` to {REPO}:.github/ptd-triage.yml")


def test_a_queue_folders_prompt_is_read_through_the_api_and_is_what_the_model_gets(fake_github, fake_openai,
                                                                                   tmp_path):
    put_folder(fake_github)
    prompt = example_files()["prompt.md.j2"]
    system_part = '{%- if part == "system" -%}'
    assert system_part in prompt
    fake_github.add_file(REPO, FOLDER + "prompt.md.j2", prompt.replace(system_part, system_part + "REMOTE-PROMPT ", 1))
    seed(fake_github, 101)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 101, "labeled", label=QUEUE),
                     inputs={"config": FOLDER, "queue-label": "", **MODEL, "llm-base-url": fake_openai.url,
                             "llm-api-key": fake_openai.api_key},
                     workspace={f"{REPO}:{FOLDER}prompt.md.j2": PLANTED})
    assert "prompt.md.j2" in [c.rsplit("/", 1)[-1] for c in _contents(run)]
    assert fake_openai.answered, run.stdout + run.stderr
    system = fake_openai.answered[0].prompt.system
    assert system.startswith("REMOTE-PROMPT") and "PLANTED" not in system


# ---- bounded -------------------------------------------------------------------------------------------------------


def test_only_the_templates_the_rubric_names_are_fetched_however_many_the_folder_has(fake_github, tmp_path):
    """The red team's 400 extra templates cost 407 requests and 26 s; now they are never asked for."""
    put_folder(fake_github)
    for i in range(400):
        fake_github.add_file(REPO, f"{FOLDER}templates/extra_{i:03d}.md.j2", f"Extra {i}")
    seed(fake_github, 103)
    run = triage(fake_github, tmp_path, 103, FOLDER)
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(_contents(run)) == sorted([
        ".github/ptd-triage", ".github/ptd-triage/rubric.yaml", ".github/ptd-triage/labels.json",
        ".github/ptd-triage/prompt.md.j2", ".github/ptd-triage/templates/not_storage.md.j2",
        ".github/ptd-triage/templates/needs_storage_reproduction.md.j2",
        ".github/ptd-triage/templates/needs_storage_performance_reproduction.md.j2"])
    assert "<!-- ptd-triage:needs_storage_reproduction -->" in fake_github.comments(REPO, 103)[0]["body"]


@pytest.mark.parametrize("name", ["../../secrets", "a b", "x/y", "ünï", "." * 3])
def test_a_template_name_is_checked_like_the_file_forms_before_it_becomes_a_path(fake_github, tmp_path, name):
    put_folder(fake_github)
    rubric = example_files()["rubric.yaml"].replace("  needs_reproduction: needs_storage_reproduction",
                                                    f"  needs_reproduction: {json.dumps(name)}")
    fake_github.add_file(REPO, FOLDER + "rubric.yaml", rubric)
    line = rubric.splitlines().index(f"  needs_reproduction: {json.dumps(name)}") + 1
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, FOLDER)
    _one_error(run, f"{REPO}:.github/ptd-triage/rubric.yaml:{line}: comments.needs_reproduction names template",
               "which is not a template name")
    assert not [c for c in _contents(run) if "/templates/" in c]


def test_a_name_given_by_an_extending_file_is_checked_at_its_line(fake_github, tmp_path):
    put_folder(fake_github, at=".github/q/")
    fake_github.add_file(REPO, ".github/ptd-triage.yml",
                         f"extends: {REPO}:.github/q/\nrubric:\n  comments:\n    needs_reproduction: 'a b'\n")
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, ".github/ptd-triage.yml")
    _one_error(run, f"{REPO}:.github/ptd-triage.yml:4: comments.needs_reproduction names template 'a b'")


def test_a_template_the_rubric_names_and_the_folder_lacks_is_named_with_the_rubric_line(fake_github, tmp_path):
    for name, text in example_files().items():
        if name != "templates/needs_storage_reproduction.md.j2":
            fake_github.add_file(REPO, FOLDER + name, text)
    line = example_files()["rubric.yaml"].splitlines().index(
        "  needs_reproduction: needs_storage_reproduction") + 1
    seed(fake_github, 101)
    _one_error(triage(fake_github, tmp_path, 101, FOLDER),
               f"{REPO}:.github/ptd-triage/templates/needs_storage_reproduction.md.j2: not found on the default "
               f"branch ({REPO}:.github/ptd-triage/rubric.yaml:{line}: comments.needs_reproduction names")


def test_the_longest_chain_fits_the_cap_and_one_more_read_is_refused(fake_github, tmp_path):
    """Two files and a folder with its prompt and three templates: 9 requests, within MAX_QUEUE_READS (10); a
    reader asked for more refuses the 11th, naming it, with nothing sent."""
    from triage.config.bundle import ConfigError
    from triage.config.remote import MAX_QUEUE_READS, _Counted

    put_folder(fake_github, at=".github/q/")
    fake_github.add_file(REPO, ".github/base.yml", f"extends: {REPO}:.github/q/\n")
    fake_github.add_file(REPO, ".github/ptd-triage.yml", f"extends: {REPO}:.github/base.yml\n")
    seed(fake_github, 101)
    run = triage(fake_github, tmp_path, 101, ".github/ptd-triage.yml")
    assert run.returncode == 0 and MARKER in fake_github.issue_labels(REPO, 101), run.stdout + run.stderr
    assert len(_contents(run)) == 9 < MAX_QUEUE_READS

    class Files:
        def file(self, repo, path):
            return "x"

    counted = _Counted(Files())
    for i in range(MAX_QUEUE_READS):
        counted.file(REPO, f"f{i}")
    with pytest.raises(ConfigError, match=rf"^{REPO}:f10: not read: a repository's queue is read in at most 10"):
        counted.file(REPO, "f10")


# ---- attributed ----------------------------------------------------------------------------------------------------

ADD = "labels:\n  add:\n    - {name: %s, role: %s, description: x, color: \"ededed\"}\n"


@pytest.mark.parametrize("text, line, message", [
    (ADD % ('"my review"', "review"), 3, "exactly one label must have role 'review' (found 2)"),
    (ADD % ('"done"', "marker"), 3, "exactly one label must have role 'marker' (found 2)"),
    (ADD % ('"triage review"', "module"), 3, "exactly one label must have role 'review' (found 0)"),
    (ADD % ('"feature 2"', "type, kind: feature"), 3, "at most one label of role 'type' may have kind 'feature'"),
    ('queue_label: "module: fsdp"\n', 1, "the queue label 'module: fsdp' must not be in the allowlist"),
    ("labels:\n  labels:\n    - {name: a, role: marker, description: x, color: \"ededed\"}\n", 2,
     "exactly one label must have role 'review' (found 0)"),
], ids=["second-review", "second-marker", "review-replaced", "second-feature", "queue-label", "whole-list"])
def test_an_allowlist_error_names_the_repositorys_file_not_the_bundled_one(fake_github, tmp_path, text, line,
                                                                         message):
    fake_github.add_file(REPO, ".github/ptd-triage.yml", text)
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 1, "labeled",
                                                                     label="oncall: distributed"),
                     inputs={"config": ".github/ptd-triage.yml"})
    error = _one_error(run, f"{REPO}:.github/ptd-triage.yml:{line}: {message}")
    assert "labels.json" not in error


def test_a_template_an_extending_file_gives_or_renames_is_fetched_accordingly():
    """The names come from the rubric as the extending files leave it: a template a file gives itself is not
    fetched from the folder, and one its `comments:` names instead is."""
    from triage.config.remote import read_queue

    files = {f".github/q/{name}": text for name, text in example_files().items()}
    files[".github/q/templates/other_repro.md.j2"] = "Please add a reproduction."
    files[".github/ptd-triage.yml"] = (
        f"extends: {REPO}:.github/q/\n"
        "rubric:\n  comments:\n    needs_reproduction: other_repro\n"
        "templates:\n  not_storage: |\n    Not ours.\n")
    asked: list[str] = []

    class Reader:
        def file(self, repo, path):
            asked.append(path)
            return files.get(path)

        def listing(self, repo, path):
            asked.append(path + "/")
            prefix = path + "/"
            names = {p[len(prefix):].split("/")[0]: ("dir" if "/" in p[len(prefix):] else "file")
                     for p in files if p.startswith(prefix)}
            return sorted(names.items()) or None

    sources, _ = read_queue(Reader(), REPO, ".github/ptd-triage.yml")
    assert [p for p in asked if "/templates/" in p] == [
        ".github/q/templates/other_repro.md.j2", ".github/q/templates/needs_storage_performance_reproduction.md.j2"]
    assert sources.templates["not_storage"] == "Not ours.\n"
    assert sources.templates["other_repro"] == "Please add a reproduction."
