#!/usr/bin/env python3
"""How many dev records each rubric rule fires on, and which rules fire on exactly one.

A rule (a signal anywhere in the rubric, or a frame of step 4 or step 5) that matches exactly one record of the sets a queue
is tuned on is the mark of a rule fitted to that record, which held-out issues punish (issue 17: "no rule may
fire on one dev record only"). A rule that fires on no dev record is general vocabulary, one that fires on two or
more is evidence of a pattern; both are fine.

    python scripts/rule_support.py                        # both bundled queues, on their dev sets
    python scripts/rule_support.py --queue pt2            # one queue
    python scripts/rule_support.py --queue distributed --dataset my.jsonl   # other records

"Fires" ignores the rubric's location weights: a rule counts for a record when it matches in any location it
looks in (title, prose, code, traceback frame or error, comment, environment), because a rule that scores
nothing where it matches is still a rule fitted to the words it matches. Records are read with the project's
dataset reader and turned into located text the way the planner does (`triage.core.steps.analyse`), so bot
comments and the queue's own templates are not read. A record in two sets (same id) counts once.

Exit status: 0 when no rule has support 1, 1 when some do (they are listed), 2 on bad input (one line).
tests/test_rule_support.py runs this for both queues.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout without an installed package
    sys.path.insert(0, str(ROOT))

from triage.config.bundle import ConfigError, load_bundle  # noqa: E402
from triage.config.rubric import Rubric  # noqa: E402
from triage.core.steps import analyse  # noqa: E402
from triage.evaluation.dataset import DatasetError, read_dataset  # noqa: E402
from triage.text.document import LOCATIONS, Document  # noqa: E402
from triage.text.frames import Frame, SlotHits, match_frame, read_slots  # noqa: E402
from triage.text.matching import Signal, match_signal  # noqa: E402
from triage.text.patterns import Pattern  # noqa: E402

# Every location counts as much as any other: the question is whether a rule matches, not what it scores.
EVERYWHERE = {location: 1.0 for location in LOCATIONS}

# The sets each bundled queue is tuned on, under $PTD_SHARED_DIR/eval (default ../shared/eval).
DEV_SETS = {
    "distributed": ("dev.jsonl", "dev2.jsonl"),
    "pt2": ("pt2-dev.jsonl",),
}


@dataclass(frozen=True)
class Rule:
    id: str
    where: str  # the rubric section, e.g. "topics/fsdp" or "high_priority/criteria/hang (frame)"
    rule: Signal | Frame
    vocabulary: str = "high_priority"  # a frame's slots: step 5's (`high_priority.slots`) or step 4's (`types.slots`)


def rubric_rules(rubric: Rubric) -> list[Rule]:
    """Every signal and frame of the rubric, with the section it sits in."""
    out: list[Rule] = []

    def add(signals: Iterable[Signal | Frame], where: str, vocabulary: str = "high_priority") -> None:
        out.extend(Rule(s.id, where, s, vocabulary) for s in signals)

    for topic in rubric.topics:
        add(topic.signals, f"topics/{topic.name}")
    for name, route in rubric.routes.items():
        add(route.signals, f"routing/routes/{name}")
    add(rubric.not_in_queue.signals, "not_distributed")
    for name in ("request", "feature", "enhancement", "performance"):
        add(getattr(rubric, name).signals, f"types/{name}")
        add(getattr(rubric, name).frames, f"types/{name} (frame)", "types")
    add(rubric.reproduction.signals, "reproduction")
    hp = rubric.high_priority
    for criterion in hp.criteria:
        add(criterion.signals, f"high_priority/criteria/{criterion.name}")
        add(criterion.frames, f"high_priority/criteria/{criterion.name} (frame)")
    add(hp.counter, "high_priority/counter_evidence")
    add(hp.counter_frames, "high_priority/counter_evidence (frame)")
    return out


def fires(rule: Signal | Frame, doc: Document, slots: Callable[[], SlotHits]) -> bool:
    """Whether the rule matches the document anywhere it looks (`slots` reads the frames' vocabulary, once)."""
    if isinstance(rule, Frame):
        return match_frame(rule, slots(), EVERYWHERE) is not None
    return bool(match_signal(rule, doc, EVERYWHERE))


def support(rules: list[Rule], docs: Iterable[Document], slot_patterns: dict[str, Pattern],
            type_slot_patterns: dict[str, Pattern] | None = None) -> dict[str, int]:
    """Rule id -> how many of the documents it fires on (each document counts once per rule). Frames read the
    slots of their own section: step 5's (`slot_patterns`) or step 4's (`type_slot_patterns`)."""
    vocabularies = {"high_priority": slot_patterns, "types": type_slot_patterns or {}}
    counts = {rule.id: 0 for rule in rules}
    for doc in docs:
        read: dict[str, SlotHits] = {}

        def slots(vocabulary: str) -> SlotHits:
            if vocabulary not in read:
                read[vocabulary] = read_slots(vocabularies[vocabulary], doc)  # every slot, every location
            return read[vocabulary]

        for rule in rules:
            if fires(rule.rule, doc, lambda: slots(rule.vocabulary)):
                counts[rule.id] += 1
    return counts


def queue_documents(bundle, paths: Iterable[Path]) -> list[Document]:
    """The located text of every distinct record of the sets, as the planner reads it."""
    seen: set[str] = set()
    docs = []
    for path in paths:
        for row in read_dataset(path):
            if row.id in seen:
                continue
            seen.add(row.id)
            docs.append(analyse(row.snapshot, bundle.rubric, bundle.templates.names).doc)
    return docs


@dataclass(frozen=True)
class Report:
    queue: str
    records: int
    rules: list[Rule]
    counts: dict[str, int]

    @property
    def singletons(self) -> list[Rule]:
        return [r for r in self.rules if self.counts[r.id] == 1]

    def summary(self) -> str:
        unused = sum(1 for r in self.rules if self.counts[r.id] == 0)
        return (f"{self.queue}: {len(self.rules)} rules over {self.records} records, {unused} with support 0, "
                f"{len(self.singletons)} with support 1")


def measure(queue: str, datasets: Iterable[Path]) -> Report:
    # A bundled queue by name, or a queue folder (a path: `load_bundle` reads a str as a bundled name).
    bundle = load_bundle(queue=Path(queue) if "/" in queue or Path(queue).is_dir() else queue)
    docs = queue_documents(bundle, datasets)
    rules = rubric_rules(bundle.rubric)
    return Report(queue, len(docs), rules,
                  support(rules, docs, bundle.rubric.high_priority.slots, bundle.rubric.type_slots))


def shared_eval() -> Path:
    env = os.environ.get("PTD_SHARED_DIR")
    return (Path(env) if env else ROOT.parent / "shared") / "eval"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue", action="append", metavar="NAME_OR_DIR",
                        help="a bundled queue's name or a queue folder (repeatable; default: distributed and pt2)")
    parser.add_argument("--dataset", action="append", type=Path, metavar="JSONL",
                        help="records to count on (repeatable; default: the queue's dev sets under "
                             "$PTD_SHARED_DIR/eval); needs exactly one --queue")
    args = parser.parse_args(argv)
    queues = args.queue or list(DEV_SETS)
    if args.dataset and len(queues) != 1:
        print("rule_support: --dataset needs exactly one --queue", file=sys.stderr)
        return 2
    failing = False
    for queue in queues:
        if args.dataset:
            paths = args.dataset
        elif queue in DEV_SETS:
            paths = [shared_eval() / name for name in DEV_SETS[queue]]
        else:
            print(f"rule_support: queue {queue!r} has no known dev sets: give --dataset", file=sys.stderr)
            return 2
        try:
            report = measure(queue, paths)
        except (ConfigError, DatasetError) as exc:
            print(f"rule_support: {exc}", file=sys.stderr)
            return 2
        for rule in report.singletons:
            print(f"{queue}\t{rule.id}\t{rule.where}")
        print(report.summary())
        failing = failing or bool(report.singletons)
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
