"""The `llm` planner: the model proposes every judgement step (1-6); the rubric answers step 0 and is the fallback.

The flow (the rubric first, the model asked only where the procedure reached a judgement, one repair, the
rubric's whole plan on any failure) is `triage.planners.model.planner.ModelPlanner`'s, shared with `hybrid`; a
judgement is its step's decision (`triage.core.merge.MODEL_DECIDES`).

May import: the standard library, `triage.core`, `triage.planners.model.*`.
"""
from __future__ import annotations

from typing import Any

from triage.core.merge import MODEL_DECIDES
from triage.planners.model.planner import ALL_STEPS, ModelPlanner, client_from


class LLMPlanner(ModelPlanner):
    name = "llm"
    merge = MODEL_DECIDES


def make_llm(client: Any = None, **options) -> LLMPlanner:
    """The planner over `client`, or over the client `options` describe (`client_from`)."""
    return LLMPlanner(client if client is not None else client_from(options))


__all__ = ["ALL_STEPS", "LLMPlanner", "make_llm"]
