"""Every plan of a dataset as JSON lines, to show that a refactoring changed no plan (issue 27).

    python bench/plans_dump.py DATASET.jsonl [--config queues/pt2] [--planners rubric,llm,hybrid] > plans.jsonl

Each row is planned as `ptd-triage eval` plans it (`plan_issue`, the policy included), once per planner. The llm
and hybrid planners ask `StubModel`, a deterministic stand-in for a model: each answer is drawn from the plan
schema's own choices by a generator seeded with the issue number, so the model paths (the adapter, hybrid's
merge, the fallbacks) are compared too, offline and for free. About one issue in eight is answered with something
that is not a plan (a schema-invalid answer, which is repaired once, or a refusal that costs tokens), so the
fallbacks and what a failed call cost are compared as well. Its token counts are the prompt's length over four: a
prompt that changed shows up as a changed plan.

Left out, because a re-run changes them by itself: `elapsed_ms` and `latency_ms`. Everything else a plan says is
kept (labels, comment, outcome, reasons, every step's decision, score and decider, usage), and after each
planner's plans one line with its run totals.

To compare two checkouts, run this file (it only uses interfaces both have) with each checkout first on
PYTHONPATH, e.g.

    git worktree add /tmp/base 4622f28
    PYTHONPATH=/tmp/base python bench/plans_dump.py ../shared/eval/dev.jsonl > /tmp/before.jsonl
    PYTHONPATH=. python bench/plans_dump.py ../shared/eval/dev.jsonl > /tmp/after.jsonl
    diff /tmp/before.jsonl /tmp/after.jsonl | grep -c '^>'

and read what differs. `--seed N` draws another set of the stand-in's answers (more of the model paths
compared); `--summary` prints, instead of plans, the number of plans per planner (a quick check that both runs
planned the same rows).

Imports: the standard library and the project (`triage`). Nothing here is imported by the package or the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triage.cli.common import load_config  # noqa: E402
from triage.evaluation.dataset import read_dataset  # noqa: E402
from triage.llm.client import Budget, LLMConfig  # noqa: E402
from triage.llm.common import Reply  # noqa: E402
from triage.llm.errors import LLMRefused  # noqa: E402
from triage.llm.pricing import Prices  # noqa: E402
from triage.planners import get_planner, plan_issue  # noqa: E402

QUOTES = ("", "nothing like this is in the issue")


class StubModel:
    """A model client (`complete` -> `Reply`) whose answers depend only on the issue and the call's number."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.budget = Budget(max_calls=None)
        self.config = LLMConfig(model="stub", api_key="stub", prices=Prices(3.0, 15.0))
        self.calls: dict[str, int] = {}

    def complete(self, system, user, schema, schema_name, *, key: str = "unknown") -> Reply:
        self.budget.take_call()
        index = self.calls[key] = self.calls.get(key, 0) + 1
        rng = random.Random(f"{key}/{index}" if not self.seed else f"{self.seed}/{key}/{index}")
        tokens_in, tokens_out = (len(system) + len(user)) // 4, 150
        self.budget.add_tokens(tokens_in, tokens_out)
        luck = rng.random()
        if luck < 0.04:
            raise LLMRefused("stub: refused", provider=self.config.provider, input_tokens=tokens_in,
                             output_tokens=tokens_out)
        words = user.split()
        start = rng.randrange(max(1, len(words) - 4))
        answer = _draw(schema, rng, QUOTES + (" ".join(words[start:start + 4]),))
        if luck < 0.12 and index == 1:  # not a plan: one repair call follows
            answer.pop(sorted(answer)[0])
        return Reply(answer, tokens_in, tokens_out, json.dumps(answer, sort_keys=True))


def _draw(node: dict, rng: random.Random, quotes: tuple[str, ...], key: str = "") -> object:
    if "enum" in node:
        choices = sorted(node["enum"])
        if key == "not_distributed" and "distributed" in choices:  # mostly in the queue: the later steps run
            return "distributed" if rng.random() < 0.9 else "not_distributed"
        return rng.choice(choices)
    kind = node.get("type")
    if kind == "object":
        return {name: _draw(sub, rng, quotes, key if name == "decision" else name)
                for name, sub in sorted(node["properties"].items())}
    if kind == "array":
        choices = sorted(node["items"]["enum"])
        return rng.sample(choices, rng.randint(0, min(2, len(choices))))
    if kind == "boolean":
        return rng.random() < 0.3
    return rng.choice(quotes) if key == "quote" else f"stub reason for {key}"


def _clean(plan: dict) -> dict:
    plan.pop("elapsed_ms", None)
    if isinstance(plan.get("usage"), dict):
        plan["usage"].pop("latency_ms", None)
    return plan


def _totals(planner) -> dict | None:
    """The planner's run totals, through whichever interface this checkout has."""
    usage = getattr(planner, "usage_totals", None)
    consultant = getattr(planner, "consultant", None)
    totals = usage() if callable(usage) else consultant.usage_totals() if consultant is not None else None
    if totals:
        totals = {k: v for k, v in totals.items() if k != "latency_ms"}
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--config", metavar="DIR", help="a queue folder, e.g. queues/pt2")
    parser.add_argument("--planners", default="rubric,llm,hybrid")
    parser.add_argument("--summary", action="store_true", help="counts only")
    parser.add_argument("--seed", type=int, default=0, help="another set of the stand-in's answers (default 0)")
    args = parser.parse_args(argv)
    import triage

    print(f"plans_dump: triage from {Path(triage.__file__).parent}", file=sys.stderr)
    folder = args.config
    options = argparse.Namespace(config=folder, rubric=None, labels=None, templates=None)
    if folder:
        options.rubric, options.labels = os.path.join(folder, "rubric.yaml"), os.path.join(folder, "labels.json")
        options.templates = os.path.join(folder, "templates")
    bundle = load_config(options)
    rows = read_dataset(args.dataset)
    out = sys.stdout
    for name in args.planners.split(","):
        planner = get_planner(name) if name == "rubric" else get_planner(name, client=StubModel(args.seed))
        count = 0
        for row in rows:
            plan = _clean(plan_issue(row.snapshot, bundle, planner=planner).to_dict())
            count += 1
            if not args.summary:
                out.write(json.dumps({"planner": name, "id": row.id, "plan": plan}, sort_keys=True,
                                     ensure_ascii=False) + "\n")
        line = {"planner": name, "plans": count, "totals": _totals(planner)}
        out.write(json.dumps(line, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
