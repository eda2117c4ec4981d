"""The bundled queues' rendered system prompt and answer schema, pinned (issue 28). Recorded model answers
(`eval --record`, and the blind answers `bench/model_answers.py` serves) were written against exactly this prompt
and schema: a change to either, through the template, the rubric's descriptions, the labels' descriptions or the
schema's code, makes them answers to another question. If the change is meant, say so loudly, capture the prompts
again (`python bench/model_answers.py capture`), have them answered again, and update the fingerprints here."""
from __future__ import annotations

import hashlib
import json

import pytest
from llm_helpers import issue

from triage.config.bundle import load_bundle
from triage.planners.model.prompt import render
from triage.planners.model.schema import plan_schema

# queue -> (sha256 of the system prompt, sha256 of the schema as sorted JSON), first 16 hex digits. Changed on
# purpose in issue 38 (one coherent procedure text: step 4's one test, the no-flag reasons in the queue's words and
# order, the criteria read as the procedure words them): the blind answers in bench/model-answers/ answer the
# previous prompt and are collected again. Changed on purpose again in issue 38's second round (where a fresh blind
# reader still stopped: the criteria before the no-flag reasons, the reasons' examples agreeing with their order,
# step 4's one test for options, devices and workarounds, two sub-teams' parts, what a fixed route quotes, core
# components, an older version's checkpoint, a remedy question in a non-distributed issue): the distributed schema
# moved with it, as it carries the no-flag reasons' words. Changed on purpose in its fourth round (step 4's one
# test read the seed's way: anything PyTorch offers for other cases is a form of it, so one more case or option
# is an enhancement, and a new entry point composed by hand is a feature; the timeout edge case for every
# parallelism): the blind answers were collected again. And in its fifth (where round 4's readers stopped: a new
# backend against "other backends", a re-rendezvous mid-run, a watchdog timeout line without the abort, what
# `performance` is for): collected again. And its sixth (round 5's readers: a torchrun flag is an option, a
# wait before the processes first meet, a reporter's own failure asked about), and its seventh (a tool's flag by
# what it does): collected again, bench/model-answers/.
PINNED = {
    "distributed": ("4ecb3f0d1180154b", "872d6ac48fea23f1"),
    "pt2": ("ae2f5a16d0ef1fea", "3fc421ed20a3d216"),
}


def fingerprint(queue: str) -> tuple[str, str]:
    bundle = load_bundle(queue=queue)
    system = render(issue(), bundle).system
    schema = json.dumps(plan_schema(bundle), sort_keys=True)
    return (hashlib.sha256(system.encode("utf-8")).hexdigest()[:16],
            hashlib.sha256(schema.encode("utf-8")).hexdigest()[:16])


@pytest.mark.parametrize("queue", PINNED)
def test_the_prompt_and_schema_recorded_answers_depend_on_are_unchanged(queue):
    assert fingerprint(queue) == PINNED[queue], (
        f"the {queue} queue's rendered system prompt or answer schema changed: recorded model answers no longer "
        "answer it (see this file's docstring)")
