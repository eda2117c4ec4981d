"""Each thing once, where the service and the Action meet the model (issue 36):
- a flag a person dismissed is not planned again at a model's cost: the run that reads the label history and finds
  the dismissal proposes again from the decisions it already has (one model call in the run, where there were two);
- the model client is built only once an event is known to be ours and its sender allowed: a refused stranger's
  `/ptd-retriage`, an event for another label and plan mode's ignored event build none (through the real
  entrypoint, with a model planner configured that cannot be built: building it would fail the run), while an
  allowed command does build it (the control)."""
from __future__ import annotations

import json

import pytest
from actionrun import MARKER, NOT_DISTRIBUTED, QUEUE, REPO, comment_payload, issues_payload, run_action, seed_issue
from llm_helpers import good_answer
from memory_github import MemoryGitHub

from triage.config.bundle import load_bundle
from triage.core.vocab import Outcome
from triage.llm.client import Budget, LLMConfig
from triage.llm.common import Reply
from triage.planners.hybrid import HybridPlanner
from triage.planners.llm import LLMPlanner
from triage.service.triager import Triager

BUNDLE = load_bundle()
REVIEW = BUNDLE.labels.review
CRASH = ("NCCL all_reduce dies on 8 GPUs",
         "Training with DDP dies after a few steps.\n```python\nmodel = DDP(net)\nloss.backward()\n```\n"
         "\n```\nSegmentation fault (core dumped)\n```")
FLAG = good_answer(route={"decision": "infra", "reason": "a crash in NCCL", "quote": "all_reduce"},
                   modules={"decision": "high", "labels": ["module: c10d"], "reason": "NCCL", "quote": "all_reduce"},
                   high_priority={"decision": "flag", "criteria": ["crash"], "no_flag_reason": "none",
                                  "reason": "a segfault", "quote": "Segmentation fault"})


class _Model:
    def __init__(self, answer: dict):
        self.answer, self.asked = answer, 0
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(model="m", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        self.asked += 1
        return Reply(self.answer, 10, 5, json.dumps(self.answer))


@pytest.mark.parametrize("make", [LLMPlanner, HybridPlanner], ids=["llm", "hybrid"])
def test_a_dismissed_flag_costs_no_second_model_call(make):
    github = MemoryGitHub()
    github.add_issue(REPO, 3, title=CRASH[0], body=CRASH[1], labels=(QUEUE,))
    model = _Model(FLAG)
    service = Triager(github, BUNDLE, repo=REPO, planner=make(model), own_logins=(github.bot_login,),
                      recent_seconds=0)
    flagged = service.triage(3)
    assert flagged.plan.outcome == Outcome.HIGH_PRIORITY and model.asked == 1
    assert REVIEW in github.labels(REPO, 3) and MARKER not in github.labels(REPO, 3)

    github.unlabel_by_person(REPO, 3, REVIEW)  # a person looked and dismissed the flag
    model.asked = 0
    after = service.triage(3)
    # The model still flags it; the history says a person dismissed that: proposed again from the same answer.
    assert after.error is None and after.plan.outcome != Outcome.HIGH_PRIORITY
    assert "not flagged again" in after.plan.step(5).reason
    assert model.asked == 1, "the re-plan after reading the label history asked the model again"
    assert [c.method for c in github.calls].count("list_events") == 2  # flagged twice: the history read each time
    assert MARKER in github.labels(REPO, 3)


# ---- the model client is built only for an event that is ours, from a sender who may ask ---------------------

# A model planner whose client cannot be built (no key): building it fails the run, so a run that exits 0 built none.
UNBUILDABLE = {"planner": "llm", "llm-provider": "openai", "llm-model": "gpt-x", "llm-api-key": ""}
NO_KEY = {"OPENAI_API_KEY": None}


def _command(fake, number: int, *, login: str, role: str) -> dict:
    fake.set_role(REPO, login, role)
    return fake.add_comment(REPO, number, "/ptd-retriage", author=login)


def test_a_refused_retriage_builds_no_model_client(fake_github, tmp_path):
    seed_issue(fake_github, 5, NOT_DISTRIBUTED)
    comment = _command(fake_github, 5, login="a-stranger", role="read")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 5, comment),
                     inputs=UNBUILDABLE, env=NO_KEY)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "whose role is 'read'" in run.stdout and "api key" not in (run.stdout + run.stderr).lower()
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["confused"]
    assert [(w.method, w.path.rsplit("/", 1)[-1]) for w in run.writes] == [("POST", "reactions")]


def test_the_control_an_allowed_retriage_builds_it(fake_github, tmp_path):
    seed_issue(fake_github, 6, NOT_DISTRIBUTED)
    comment = _command(fake_github, 6, login="a-triager", role="triage")
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 6, comment),
                     inputs=UNBUILDABLE, env=NO_KEY)
    assert run.returncode == 1 and "input planner llm" in run.stdout, run.stdout + run.stderr
    assert run.writes == []  # it failed building the planner: before the issue was read or anything written


@pytest.mark.parametrize("mode", ["triage", "plan"])
def test_an_event_that_is_not_ours_builds_no_model_client(fake_github, tmp_path, mode):
    seed_issue(fake_github, 7, NOT_DISTRIBUTED, labels=(QUEUE, "bug"))
    payload = issues_payload(fake_github, 7, "labeled", label="bug")
    run = run_action(fake_github, tmp_path, "issues", payload, inputs={**UNBUILDABLE, "mode": mode}, env=NO_KEY)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "is not the queue label" in run.stdout and run.requests == []
