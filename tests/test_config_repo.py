"""Configuration from the repository: `.github/ptd-triage.yml` read through the contents API by the real
entrypoint, against the GitHub stand-in. The queue here has two routes (the bundled pt2 queue less its
cpu-inductor route), built from configuration alone."""
from __future__ import annotations

from actionrun import issues_payload, run_action

from triage.config.repo import load_repo_bundle, parse_repo_config

REPO = "octo-org/octo-repo"
PT2 = "oncall: pt2"
# action.yml's queue-label input is empty by default (the configuration decides); said here all the same.
# The repository's config file is opt-in: the `config` input names it (no read, no API call, without it).
NO_QUEUE_INPUT = {"queue-label": "", "config": ".github/ptd-triage.yml"}

TWO_ROUTES = """\
queue: pt2
command: /compile-retriage
rubric:
  routing:
    precedence: [export, core]
    routes:
      _remove: [cpu-inductor]
  topics:
    cpu_inductor:
      route: null
    dynamo:
      add_signals:
        - {id: fork-dynamo-words, match: '\\\\bbytecode transform\\\\b', weight: 3}
labels:
  add:
    - {name: "module: cpu inductor", role: module, description: "Inductor's CPU backend.", color: "bfdadc"}
templates:
  needs_pt2_reproduction: |
    Please share a script{% if author %}, @{{ author }}{% endif %}.
"""


def test_layering_without_the_action():
    bundle = load_repo_bundle(parse_repo_config(TWO_ROUTES))
    assert tuple(bundle.rubric.precedence) == ("export", "core") and set(bundle.rubric.routes) == {"export", "core"}
    assert bundle.command == "/compile-retriage"
    assert any(s.id == "fork-dynamo-words" for t in bundle.rubric.topics if t.name == "dynamo" for s in t.signals)
    assert bundle.labels.route("module: cpu inductor") is None
    assert bundle.templates.render("needs_pt2_reproduction", author="octocat").startswith("Please share a script, @octocat.")


def test_a_route_left_out_of_the_precedence_is_caught_at_the_repository_file_line():
    from triage.config.repo import sources_for
    from triage.config.validate import check

    text = TWO_ROUTES.replace("      _remove: [cpu-inductor]\n", "").replace("    routes:\n", "")
    (problem,) = check(sources_for(parse_repo_config(text)))
    assert str(problem) == ".github/ptd-triage.yml:5: route 'cpu-inductor' is missing from routing.precedence"


def test_two_route_queue_from_the_repository_config_end_to_end(fake_github, tmp_path):
    config = TWO_ROUTES
    fake_github.add_file(REPO, ".github/ptd-triage.yml", config)
    for name in ("oncall: pt2", "oncall: export", "module: dynamo"):
        fake_github.add_label(REPO, name)
    fake_github.add_issue(REPO, 5, title="torch.export.export fails on my model",
                          body="```python\nimport torch\ntorch.export.export(m, (x,))\n```", labels=[PT2])
    fake_github.add_issue(REPO, 6, title="[dynamo] bytecode transform fails on a generator",
                          body="```python\nimport torch\ntorch.compile(f)(x)\n```", labels=[PT2])

    export_run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 5, "labeled", label=PT2),
                            inputs=NO_QUEUE_INPUT)
    assert export_run.returncode == 0, export_run.stderr
    assert export_run.calls().count(f"GET /repos/{REPO}/contents/.github/ptd-triage.yml") == 1  # one per run
    labels5 = fake_github.issue_labels(REPO, 5)
    assert "oncall: export" in labels5 and "pt2-bot-triaged" in labels5

    core_run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 6, "labeled", label=PT2),
                          inputs=NO_QUEUE_INPUT)
    assert core_run.returncode == 0, core_run.stderr
    labels6 = fake_github.issue_labels(REPO, 6)
    assert not any(l.startswith("oncall: ") and l != PT2 for l in labels6)  # core adds no sub-oncall
    assert "module: dynamo" in labels6 and "pt2-bot-triaged" in labels6
    assert "triage review" not in labels6


def test_a_broken_repository_config_fails_the_run_with_its_file_and_line(fake_github, tmp_path):
    fake_github.add_file(REPO, ".github/ptd-triage.yml", "queue: pt2\nrubric:\n  routing:\n    precedence: [core]\n")
    fake_github.add_label(REPO, PT2)
    fake_github.add_issue(REPO, 7, title="[dynamo] x", body="", labels=[PT2])
    run = run_action(fake_github, tmp_path, "issues", issues_payload(fake_github, 7, "labeled", label=PT2),
                     inputs=NO_QUEUE_INPUT)
    assert run.returncode == 1
    assert f"{REPO}:.github/ptd-triage.yml:4: route 'export' is missing from routing.precedence" in run.stdout
    assert not run.writes
