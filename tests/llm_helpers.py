"""Helpers for the LLM planner tests: a client for a loopback stand-in, queue issues, and the policy check that
every hostile or random test asserts ("nothing outside the policy is ever written").

Imports: the standard library, triage, and the fakellm package.
"""
from __future__ import annotations

from triage.core.snapshot import snapshot_from_json
from triage.core.effects import plan_effects
from triage.llm.client import Budget, LLMClient, LLMConfig


def client_for(server, *, timeout: float = 5.0, max_calls: int | None = 50, max_retries: int = 2,
               slept: list | None = None) -> LLMClient:
    env = {k: v for k, v in server.credentials.items() if v} if server.provider == "bedrock" else {}
    config = LLMConfig(provider=server.provider, model="test-model", base_url=server.url,
                       api_key=getattr(server, "api_key", "") or "", timeout=timeout, connect_timeout=2.0,
                       max_calls=max_calls, max_retries=max_retries, max_wait=10.0,
                       region=env.get("AWS_REGION"))
    sink = slept if slept is not None else []
    return LLMClient(config, environ=env, sleep=sink.append, budget=Budget(max_calls=max_calls))


def issue(number: int = 7, title: str = "FSDP2 fully_shard hangs in all_gather on 2 nodes",
          body: str = "```python\nmodel = fully_shard(model)\nloss.backward()\n```\nIt hangs.", labels=("oncall: distributed",),
          comments=()):
    return snapshot_from_json({"issue": {"number": number, "title": title, "body": body, "state": "open",
                                         "user": {"login": "reporter", "type": "User"},
                                         "labels": [{"name": l} for l in labels], "comments": len(comments)},
                               "comments": list(comments)})


def policy_violations(plan, snapshot, bundle) -> list[str]:
    """Everything a written plan must never do, whoever proposed it."""
    labels = bundle.labels
    problems = []
    effects = plan_effects(plan.issue, plan, bundle=bundle, snapshot=snapshot)
    for name in plan.add_labels:
        if name not in labels.names:
            problems.append(f"label {name!r} is not allowlisted")
        if name in labels.forbidden:
            problems.append(f"forbidden label {name!r}")
        if name in snapshot.labels:
            problems.append(f"label {name!r} is already on the issue")
    oncalls = [l for l in (*snapshot.labels, *plan.add_labels) if labels.role(l) == "sub-oncall"]
    if len(set(oncalls)) > 1:
        problems.append(f"two sub-oncalls: {oncalls}")
    if plan.outcome == "high_priority" and labels.marker in plan.add_labels:
        problems.append("marker in the high-priority flow")
    if plan.comment is not None:
        if plan.comment.template not in bundle.step_templates.values():
            problems.append(f"comment from template {plan.comment.template!r}")
        elif plan.comment.body != bundle.templates.render(plan.comment.template, author=snapshot.author):
            problems.append("a comment body that is not the rendered template")
    if plan.issue != snapshot.number:
        problems.append(f"a plan for issue {plan.issue}, not {snapshot.number}")
    if effects.issue != snapshot.number:
        problems.append(f"writes to another issue: {effects}")
    return problems


def good_answer(bundle=None, **overrides):
    """A valid model answer for an FSDP2 bug with a reproduction (the bundle is not needed; kept for callers)."""
    answer = {
        "not_distributed": {"decision": "distributed", "reason": "uses FSDP2", "quote": "fully_shard"},
        "route": {"decision": "parallelisms", "reason": "FSDP is parallelisms", "quote": "FSDP2"},
        "modules": {"decision": "high", "labels": ["module: fsdp"], "reason": "fully_shard", "quote": "fully_shard"},
        "type": {"decision": "none", "performance": False, "reason": "a bug", "quote": ""},
        "high_priority": {"decision": "no_flag", "criteria": [], "no_flag_reason": "no_criterion_met",
                          "reason": "no step-5 criterion", "quote": "It hangs"},
        "reproduction": {"decision": "has_reproduction", "reason": "script given", "quote": "loss.backward()"},
    }
    answer.update(overrides)
    return answer
