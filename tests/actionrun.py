"""Run entrypoint.py the way the Actions runner does, against the GitHub stand-in, and read back what it reported.

- Payloads are built from the in-repo copies of octokit's webhook examples (tests/contract/webhooks/examples/),
  with our issue, label and comment substituted, and validated against the webhook schema copy (Draft 7) before
  use, so a scenario can never feed the Action a payload GitHub would not send.
- The environment is what the runner gives a composite action's step: GITHUB_* variables, RUNNER_TEMP, and the
  INPUT_* variables that action.yml passes explicitly, with the defaults read from action.yml itself.
"""
from __future__ import annotations

import copy
import functools
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "tests" / "contract"
EXAMPLES = CONTRACT / "webhooks" / "examples"
SCHEMAS = CONTRACT / "webhooks" / "schemas"
ENTRYPOINT = ROOT / "entrypoint.py"
REPO = "octo-org/octo-repo"
QUEUE = "oncall: distributed"
MARKER = "ptd-bot-triaged"


@functools.cache
def _example(name: str) -> dict:
    return json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))


@functools.cache
def _validator(key: str) -> Draft7Validator:
    return Draft7Validator(json.loads((SCHEMAS / f"{key}.schema.json").read_text(encoding="utf-8")))


def validate_payload(key: str, payload: dict) -> dict:
    errors = sorted(_validator(key).iter_errors(payload), key=lambda e: list(e.absolute_path))
    assert not errors, f"built {key} payload breaks the webhook schema: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:150]}" for e in errors[:5])
    return payload


def _repository(example: dict, repo: str) -> dict:
    owner, name = repo.split("/")
    obj = copy.deepcopy(example["repository"])
    obj.update(name=name, full_name=repo)
    obj["owner"]["login"] = owner
    return obj


def _webhook_user(example_user: dict, rest_user: dict) -> dict:
    user = copy.deepcopy(example_user)
    user.update(login=rest_user["login"], id=rest_user["id"], type=rest_user["type"])
    return user


def _webhook_issue(example_issue: dict, rest_issue: dict) -> dict:
    """The example's issue with the stand-in issue's identity and content (the fields the Action reads)."""
    issue = copy.deepcopy(example_issue)
    issue.update(
        number=rest_issue["number"], id=rest_issue["id"], title=rest_issue["title"], body=rest_issue["body"],
        state=rest_issue["state"], comments=rest_issue["comments"],
        user=_webhook_user(example_issue["user"], rest_issue["user"]),
        labels=[_webhook_label(example_issue["labels"][0] if example_issue.get("labels") else None, label)
                for label in rest_issue["labels"]],
    )
    if "pull_request" in rest_issue:
        issue["pull_request"] = {k: rest_issue["pull_request"].get(k) for k in ("url", "html_url", "diff_url",
                                                                                "patch_url")}
    return issue


def _webhook_label(example_label: dict | None, rest_label: dict) -> dict:
    label = copy.deepcopy(example_label) if example_label else {}
    label.update({k: rest_label[k] for k in ("id", "node_id", "url", "name", "color", "default", "description")})
    return label


def issues_payload(fake, number: int, action: str, *, label: str | None = None, repo: str = REPO) -> dict:
    """issues.labeled / issues.opened / issues.reopened for the stand-in's issue as it is now."""
    source = "issues.labeled" if action == "labeled" else "issues.opened"
    example = _example(source)
    payload = copy.deepcopy(example)
    payload["issue"] = _webhook_issue(example["issue"], fake.issue(repo, number))
    payload["repository"] = _repository(example, repo)
    if action == "labeled":
        label_obj = next(l for l in fake.issue(repo, number)["labels"] if l["name"] == label)
        payload["label"] = _webhook_label(example["label"], label_obj)
    validate_payload(source, payload)  # reopened has the shape of opened; no separate schema exists
    payload["action"] = action
    return payload


def comment_payload(fake, number: int, comment: dict, *, repo: str = REPO) -> dict:
    """issue_comment.created for a comment that exists on the stand-in (so the reaction has a target)."""
    example = _example("issue_comment.created")
    payload = copy.deepcopy(example)
    rest_issue = fake.issue(repo, number)
    payload["issue"] = _webhook_issue(example["issue"], rest_issue)
    if "pull_request" in rest_issue:
        payload["issue"]["pull_request"]["merged_at"] = None
    payload["comment"].update(id=comment["id"], body=comment["body"],
                              user=_webhook_user(example["comment"]["user"], comment["user"]),
                              author_association="NONE")
    payload["repository"] = _repository(example, repo)
    return validate_payload("issue_comment.created", payload)


def dispatch_payload(inputs: dict[str, str] | None = None, *, repo: str = REPO) -> dict:
    example = _example("workflow_dispatch")
    payload = copy.deepcopy(example)
    payload["inputs"] = dict(inputs or {})
    payload["repository"] = _repository(example, repo)
    return validate_payload("workflow_dispatch", payload)


def schedule_payload(*, repo: str = REPO) -> dict:
    # There is no schedule example or schema (it is an Actions trigger, not a webhook): this is what the runner
    # writes for it — the cron line plus the repository.
    return {"schedule": "17 */6 * * *", "repository": _repository(_example("workflow_dispatch"), repo),
            "workflow": ".github/workflows/ptd-triage-sweep.yml"}


# ---- the runner's environment and the run --------------------------------------------------------------------


@functools.cache
def action_input_defaults() -> dict[str, str]:
    """INPUT_* values exactly as action.yml's `env:` block would pass them with every input at its default."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "triage")
    defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    env = {}
    for key, value in step["env"].items():
        found = re.fullmatch(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", str(value))
        if found:
            env[key] = defaults[found.group(1)]
    return env


@dataclass
class ActionRun:
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    requests: list  # the stand-in's LoggedRequest objects made during this run

    @property
    def writes(self) -> list:
        return [r for r in self.requests if r.method not in ("GET", "HEAD")]

    def calls(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]


def parse_output_file(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT lines: `name=value` or `name<<DELIM` ... `DELIM` (what the runner parses)."""
    outputs: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        elif line:
            name, value = line.split("=", 1)
            outputs[name] = value
            i += 1
        else:
            i += 1
    return outputs


def run_action(fake, tmp_path: Path, event_name: str, payload: dict | None, *, inputs: dict[str, str] | None = None,
               env: dict[str, str] | None = None, repo: str = REPO, timeout: float = 60,
               workspace: dict[str, str] | None = None) -> ActionRun:
    """Run entrypoint.py in a subprocess with the runner's environment. `inputs` override action.yml defaults
    (keys are input names, e.g. "dry-run"); `env` adds or overrides raw variables (None values remove);
    `workspace`: files (relative path -> text) put in the run's working directory (GITHUB_WORKSPACE) first."""
    run_dir = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
    (run_dir / "temp").mkdir(parents=True)
    for relative, text in (workspace or {}).items():
        (run_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / relative).write_text(text, encoding="utf-8")
    event_path = run_dir / "event.json"
    if payload is not None:
        event_path.write_text(json.dumps(payload), encoding="utf-8")
    output_file, summary_file = run_dir / "output.txt", run_dir / "summary.md"
    output_file.touch()
    summary_file.touch()
    values = dict(action_input_defaults())
    values["INPUT_GITHUB_TOKEN"] = fake.token  # what `${{ github.token }}` evaluates to on the runner
    for name, value in (inputs or {}).items():
        values["INPUT_" + name.replace("-", "_").upper()] = value
    full_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(run_dir)),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": repo,
        "GITHUB_REPOSITORY_OWNER": repo.split("/")[0],
        "GITHUB_API_URL": fake.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_OUTPUT": str(output_file),
        "GITHUB_STEP_SUMMARY": str(summary_file),
        "GITHUB_WORKSPACE": str(run_dir),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_RUN_ID": "4242",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_ACTOR": "octocat",
        "RUNNER_TEMP": str(run_dir / "temp"),
        "RUNNER_OS": "Linux",
        "PTD_TRIAGE_MAX_BACKOFF": "0.05",  # retries still happen, without real multi-second sleeps
        **values,
    }
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    start = len(fake.requests)
    proc = subprocess.run([sys.executable, str(ENTRYPOINT)], env=full_env, cwd=run_dir, capture_output=True,
                          text=True, timeout=timeout)
    outputs = parse_output_file(output_file.read_text("utf-8"))
    # Every output a run sets must be declared in action.yml: a composite action's caller sees only those.
    undeclared = set(outputs) - set(declared_outputs())
    assert not undeclared, f"outputs set but not declared in action.yml: {sorted(undeclared)}"
    return ActionRun(proc.returncode, proc.stdout, proc.stderr, outputs,
                     summary_file.read_text(encoding="utf-8"), list(fake.requests[start:]))


def declared_outputs() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["outputs"]


# ---- scenario issues (title, body) and what the planner is expected to do with them --------------------------

NOT_DISTRIBUTED = ("CUDA OOM on a single GPU with torch.nn.Linear",
                   "I get out of memory on one GPU, no distributed code involved.\n\n```python\nimport torch\n"
                   "x = torch.randn(100000, 100000, device='cuda')\n```\n")
NEEDS_REPRO = ("DDP gradient average question with find_unused_parameters",
               "I use DistributedDataParallel with find_unused_parameters=True and my loss differs slightly "
               "between runs. Not sure how to reproduce it.")
FSDP_WITH_REPRO = ("FSDP2 fully_shard wrong param dtype with MixedPrecisionPolicy",
                   "Repro:\n\n```python\nimport torch\nfrom torch.distributed.fsdp import fully_shard, "
                   "MixedPrecisionPolicy\nmodel = torch.nn.Linear(4, 4)\nfully_shard(model, mp_policy="
                   "MixedPrecisionPolicy(param_dtype=torch.bfloat16))\nprint(model.weight.dtype)\n```\n"
                   "It prints float32 but I expected bfloat16.")


def expected_plan(fake, number: int, *, force: bool = False, repo: str = REPO):
    """What the planner decides for the stand-in's issue as it is now (comments included), in-process."""
    from triage.config.bundle import load_bundle
    from triage.planners import plan_issue
    from triage.core.snapshot import snapshot_from_json

    snapshot = snapshot_from_json(fake.issue(repo, number), fake.comments(repo, number))
    return plan_issue(snapshot, load_bundle(), force=force)


def seed_issue(fake, number: int, scenario: tuple[str, str], *, labels=(QUEUE,), repo: str = REPO, **kwargs) -> dict:
    title, body = scenario
    return fake.add_issue(repo, number, title=title, body=body, labels=list(labels), **kwargs)
