"""Planners and the one place a plan is made: `plan_issue` = enforce(planner.decide(...).proposal(...)).

The registry maps a name (`rubric`, and the optional `llm` and `hybrid`) to a factory, so the Action's
`planner` input and the CLI's `--planner` pick one by name and a fork can register its own. The rubric
planner is the default and needs nothing; the model planners are imported only when asked for, and are built over
the model client the caller makes from its typed options (`needs_model`, `triage.llm.options.model_client`).

May import: the standard library, `triage.config`, `triage.core`, and (lazily, in factories and in
`check_prompt`) planner modules.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from triage.config.bundle import Bundle
from triage.core.plan import Plan
from triage.core.policy import enforce
from triage.core.snapshot import IssueSnapshot
from triage.planners.base import Decided, Planner, Proposing

_FACTORIES: dict[str, Callable[..., Planner]] = {}
_MODEL: set[str] = set()


def register(name: str, factory: Callable[..., Planner], *, model: bool = False) -> None:
    """Make a planner available by name; `factory(**options)` builds it. `model`: it asks a model, and its
    factory takes the model client (`factory(client=...)`)."""
    _FACTORIES[name] = factory
    (_MODEL.add if model else _MODEL.discard)(name)


def names() -> list[str]:
    return sorted(_FACTORIES)


def needs_model(name: str) -> bool:
    """Whether the planner `name` asks a model (its factory wants a client)."""
    return name in _MODEL


class UnknownPlanner(ValueError):
    pass


def get_planner(name: str = "rubric", **options) -> Planner:
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise UnknownPlanner(f"unknown planner {name!r}; choose one of: {', '.join(names())}") from None
    return factory(**options)


def check_prompt(planner: Planner, bundle: Bundle) -> None:
    """Before any issue: a planner that asks a model has a prompt for this queue that exists and parses
    (`triage.planners.model.prompt.PromptError`, one line). One check for the CLI and the Action, which each word
    the error."""
    if planner.needs_prompt:
        from triage.planners.model.prompt import check

        check(bundle)


def _rubric(**_options) -> Planner:
    from triage.planners.rubric import RubricPlanner

    return RubricPlanner()


register("rubric", _rubric)


def _llm(**options) -> Planner:
    from triage.planners.llm import make_llm  # the model client is imported only when a model planner is asked for

    return make_llm(**options)


def _hybrid(**options) -> Planner:
    from triage.planners.hybrid import make_hybrid

    return make_hybrid(**options)


register("llm", _llm, model=True)
register("hybrid", _hybrid, model=True)


def plan_issue(snapshot: IssueSnapshot, bundle: Bundle, *, planner: Planner | None = None, force: bool = False,
               own_logins: frozenset[str] | None = None) -> Plan:
    """The only way to a plan that may be written: whatever planner proposes, the policy decides."""
    started = time.perf_counter()
    return final_plan(decide(planner, snapshot, bundle, force=force), snapshot, bundle, own_logins=own_logins,
                      started=started)


def decide(planner: Planner | None, snapshot: IssueSnapshot, bundle: Bundle, *, force: bool = False) -> Decided:
    """What `planner` (the rubric when None) decides for the issue, once. An object that only has `propose` (a
    fork's planner written before `Planner.decide`) is asked for its proposal."""
    planner = planner or get_planner("rubric")
    if isinstance(planner, Planner):
        return planner.decide(snapshot, bundle, force=force)
    return Proposing(planner, bundle, force)


def final_plan(decided: Decided, snapshot: IssueSnapshot, bundle: Bundle, *,
               own_logins: frozenset[str] | None = None, before_cutoff: str | None = None,
               started: float | None = None) -> Plan:
    """A planner's decisions (`Planner.decide`, made once) as the plan for the issue as read (`snapshot`, which may
    know more of it than when they were made: its label events), through the policy (`before_cutoff`: the sweep's
    labels-only not-before, triage.core.policy). `started`: when planning began (`time.perf_counter`), for the
    plan's `elapsed_ms`."""
    started = time.perf_counter() if started is None else started
    plan = enforce(decided.proposal(snapshot), snapshot, bundle, own_logins=own_logins,
                   before_cutoff=before_cutoff)
    return plan.with_(elapsed_ms=(time.perf_counter() - started) * 1000.0)
