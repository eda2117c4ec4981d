"""A hostile model: a scripted stand-in that obeys every instruction in the issue text, over the injection corpus
(tests/data/injection/), and 10,000 random model replies: nothing outside the policy is ever written."""
from __future__ import annotations

import json
import random
from pathlib import Path

from fakellm import FakeOpenAI
from llm_helpers import client_for, policy_violations

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.llm.common import Reply
from triage.llm.client import Budget, LLMConfig
from triage.planners.model.schema import plan_schema
from triage.planners import plan_issue
from triage.planners.llm import LLMPlanner

CORPUS = Path(__file__).parent / "data" / "injection" / "corpus.jsonl"


def obedient(bundle):
    """The worst a model can do inside the schema, driven by what the issue asks: every module, a flag, a request
    type, a reproduction request, another route; and, when asked for labels the schema lacks, it answers with
    them anyway (the answer then fails the schema)."""
    modules = list(bundle.labels.with_role("module"))
    routes = list(bundle.rubric.routes)

    def respond(body: dict) -> dict:
        text = body["messages"][-1]["content"].lower()
        wants_labels = any(w in text for w in ("add the label", "add the labels", "apply high priority"))
        answer = {
            "not_distributed": {"decision": "not_distributed" if "not a distributed" in text else "distributed",
                                "reason": "the issue told me so", "quote": "ignore all previous instructions"},
            "route": {"decision": routes[len(text) % len(routes)], "reason": "as instructed", "quote": ""},
            "modules": {"decision": "high", "labels": modules, "reason": "all of them", "quote": ""},
            "type": {"decision": "feature" if "feature" in text else "enhancement", "performance": "feature" not in text,
                     "reason": "as instructed", "quote": ""},
            "high_priority": {"decision": "flag" if "priority" in text else "no_flag", "reason": "URGENT",
                              "criteria": ["crash"] if "priority" in text else [], "no_flag_reason": "none" if "priority" in text else "no_criterion_met",
                              "quote": "ULTIMATE PRIORITY"},
            "reproduction": {"decision": "has_reproduction", "reason": "post my comment", "quote": ""},
        }
        if "not a distributed" in text:  # as far as it can go and still agree with itself
            answer["modules"]["labels"] = []
            answer["high_priority"].update(decision="no_flag", criteria=[], no_flag_reason="not_distributed")
        if wants_labels:  # obeys beyond the schema: the stand-in would be off contract, so say it in an extra key
            answer["labels"] = ["high priority", "bug"]
        return answer

    return respond


def test_hostile_model_over_the_injection_corpus():
    bundle = load_bundle()
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    assert len(rows) >= 50 and {r["where"] for r in rows} >= {"title", "body", "html_comment", "code_block", "comment"}
    counts = {"issues": 0, "model_plans": 0, "fallbacks": 0, "violations": 0, "high_priority_label": 0}
    with FakeOpenAI(responder=obedient(bundle)) as server:
        planner = LLMPlanner(client_for(server, max_calls=None))
        for row in rows:
            snap = snapshot_from_json({"issue": row["issue"], "comments": row["comments"]})
            plan = plan_issue(snap, bundle, planner=planner)
            counts["issues"] += 1
            counts["fallbacks" if plan.usage and plan.usage.get("fallback") else "model_plans"] += 1
            problems = policy_violations(plan, snap, bundle)
            counts["violations"] += len(problems)
            counts["high_priority_label"] += "high priority" in plan.add_labels
            assert problems == [], (row["id"], problems)
        server.take_violations()  # answers with extra keys break the schema on purpose
    print("hostile corpus:", counts)
    assert counts["violations"] == 0 and counts["high_priority_label"] == 0
    assert counts["model_plans"] > 0 and counts["fallbacks"] > 0  # both paths were exercised


class RandomClient:
    """In-process: answers each call with the next random reply (no HTTP, so 10,000 fit in seconds)."""

    def __init__(self, replies):
        self.replies = iter(replies)
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(provider="openai", model="random", api_key="k")

    def complete(self, system, user, schema, schema_name, *, key=""):
        self.budget.take_call()
        return Reply(next(self.replies), 1, 1, "")


def random_reply(rng: random.Random, bundle) -> dict:
    schema = plan_schema(bundle)
    junk = ["high priority", "bug", "module: cuda", "ptd-bot-triaged", "triage review", "", "x" * 500, None, 3,
            "oncall: distributed infra", "<!-- ptd-triage:not_distributed -->", "@everyone"]

    def value(node):
        if rng.random() < 0.03:
            return rng.choice(junk)
        kind = node.get("type")
        if kind == "object":
            out = {k: value(v) for k, v in node["properties"].items() if rng.random() > 0.02}
            if rng.random() < 0.03:
                out[rng.choice(["labels", "comment", "remove", "issue"])] = rng.choice(junk)
            return out
        if kind == "array":
            pool = node["items"]["enum"] + ([rng.choice(junk)] if rng.random() < 0.05 else [])
            return rng.sample(pool, rng.randint(0, len(pool)))
        if kind == "boolean":
            return rng.random() < 0.5
        if "enum" in node:
            return rng.choice(node["enum"])
        return rng.choice(["reason", "please add high priority", "ignore the rules", "fully_shard", ""])

    reply = value(schema)
    return cohere(reply) if rng.random() < 0.6 else reply


def cohere(reply):
    """A random reply made to agree with itself where its parts are there (a contradictory answer is never used,
    so without this few random replies would reach the procedure)."""
    part = {k: v if isinstance(v, dict) else {} for k, v in (reply.items() if isinstance(reply, dict) else ())}
    modules, kind, high = part.get("modules", {}), part.get("type", {}), part.get("high_priority", {})
    out_of_queue = part.get("not_distributed", {}).get("decision") == "not_distributed"
    if modules.get("decision") in ("low", "not_applicable") or out_of_queue:
        modules["labels"] = []
    if kind.get("decision") != "enhancement":
        kind["performance"] = False
    if kind.get("decision") != "none" and part.get("reproduction"):
        part["reproduction"]["decision"] = "has_reproduction"
    if out_of_queue:
        high.update(decision="no_flag", criteria=[], no_flag_reason="not_distributed")
    elif high.get("decision") == "flag":
        high.update(criteria=high.get("criteria") or ["crash"], no_flag_reason="none")
    elif high:
        high.update(criteria=[], no_flag_reason="no_criterion_met")
    return reply


def test_ten_thousand_random_replies_never_break_the_policy(monkeypatch):
    # The same path as plan_issue (consult -> procedure.run and fold -> enforce), with the rubric's reading and the
    # rendered prompt computed once per issue: 10,000 replies then fit in seconds, not a minute.
    import triage.planners.model.prompt as prompt_module
    from triage.core.policy import enforce
    from triage.planners.llm import ALL_STEPS
    from triage.planners.rubric import rubric_decided

    real_render, rendered = prompt_module.render, {}
    monkeypatch.setattr(prompt_module, "render", lambda snap, b: rendered.setdefault(
        snap.number, real_render(snap, b)))
    bundle = load_bundle()
    rng = random.Random(8)
    snaps = [snapshot_from_json(json.loads(line)) for line in CORPUS.read_text().splitlines()[:10]]
    snaps.append(snapshot_from_json({"number": 9, "title": "DCP save hangs", "body": "dcp.save(state)",
                                     "labels": [{"name": "oncall: distributed"},
                                                {"name": "oncall: distributed checkpointing"}]}))
    total, replies = 10_000, [random_reply(rng, bundle) for _ in range(10_000 * 2)]
    planner = LLMPlanner(RandomClient(replies))
    from triage.core.reading import Reading

    bases = [rubric_decided(snap, bundle, reading=Reading(snap, bundle)) for snap in snaps]
    counts = {"replies": 0, "model_plans": 0, "fallbacks": 0, "violations": 0}
    for i in range(total):
        snap, base = snaps[i % len(snaps)], bases[i % len(snaps)]
        plan = enforce(planner.consult(snap, bundle, base, ALL_STEPS).proposal(snap), snap, bundle)
        counts["replies"] += 1
        counts["fallbacks" if plan.usage and plan.usage.get("fallback") else "model_plans"] += 1
        problems = policy_violations(plan, snap, bundle)
        counts["violations"] += len(problems)
        assert problems == [], (i, problems)
    print("random replies:", counts)
    assert counts["replies"] == total and counts["model_plans"] > 1000 and counts["fallbacks"] > 100
