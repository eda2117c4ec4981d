"""`ptd-triage eval DATASET.jsonl`: replay a labelled dataset through the planner and print accuracy figures.

Exit status: 0 whatever the figures (measuring is not judging), 1 when a `--min-*` gate is set and not met,
2 on bad input (one line naming the file and line). The helpers here are shared with `ptd-triage replay`, which
prints the same report for issues it rebuilt from a live repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Iterable, TextIO

from triage.cli.common import add_config_options, fail
from triage.config.bundle import ConfigError, load_bundle
from triage.evaluation.dataset import DatasetError, DatasetRow, read_dataset
from triage.evaluation.evaluate import Case, Miss, evaluate, misses, scoring_from_labels
from triage.planners.rubric import plan_issue

# gate option -> (figure path, human name)
GATES = {
    "min_routing": (("routing", "accuracy"), "routing accuracy", "--min-routing"),
    "min_module_f1": (("modules", "micro", "f1"), "module F1", "--min-module-f1"),
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="measure the rubric on a labelled dataset (JSONL)",
        description="Plan every line of an eval-format dataset as if the queue label had just been added, and "
        "compare the labels the plans add with the gold answers.",
    )
    parser.add_argument("dataset", metavar="DATASET.jsonl", help="eval-format dataset, one issue a line")
    add_config_options(parser)
    add_report_arguments(parser)
    parser.set_defaults(func=run)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--errors", action="store_true", help="also list every miss with what was expected, planned, and why"
    )
    parser.add_argument("--min-routing", type=_fraction, metavar="X", help="exit 1 if routing accuracy < X (0..1)")
    parser.add_argument("--min-module-f1", type=_fraction, metavar="X", help="exit 1 if module micro F1 < X (0..1)")


def run(args: argparse.Namespace) -> int:
    try:
        bundle = load_bundle(args.rubric, args.labels, args.templates)
        rows = read_dataset(args.dataset)
    except (ConfigError, DatasetError) as exc:
        return fail(str(exc))
    cases = plan_rows(rows, bundle)
    return report(cases, bundle, args, source=args.dataset)


def plan_rows(rows: Iterable[DatasetRow], bundle) -> list[Case]:
    """Plan each row (as it stood when the queue label was added), timing the planner alone."""
    cases = []
    for row in rows:
        started = time.perf_counter()
        plan = plan_issue(row.snapshot, bundle)
        elapsed = (time.perf_counter() - started) * 1000
        cases.append(
            Case(
                id=row.id,
                title=row.snapshot.title,
                gold=row.gold,
                plan=plan.to_dict(),
                labels_before=row.snapshot.labels,
                elapsed_ms=elapsed,
            )
        )
    return cases


def report(
    cases: list[Case],
    bundle,
    args: argparse.Namespace,
    *,
    source: str,
    extra: dict[str, Any] | None = None,
    out: TextIO | None = None,
) -> int:
    """Print figures (and misses) in the chosen format; return the exit status the gates give."""
    out = out or sys.stdout
    scoring = scoring_from_labels(bundle.labels)
    figures = evaluate(cases, scoring)
    found = misses(cases, scoring) if args.errors else []
    if args.format == "json":
        document: dict[str, Any] = {"dataset": source, **(extra or {}), **figures}
        if args.errors:
            document["errors"] = [m.to_dict() for m in found]
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        out.write(render_text(figures, source))
        if args.errors:
            out.write(render_misses(found))
    out.flush()
    return check_gates(figures, args)


def check_gates(figures: dict[str, Any], args: argparse.Namespace) -> int:
    failed = False
    for option, (path, name, flag) in GATES.items():
        threshold = getattr(args, option, None)
        if threshold is None:
            continue
        value: Any = figures
        for key in path:
            value = value[key]
        if value is None:
            print(f"ptd-triage: {name} could not be measured (no scored issues), {flag} {threshold:.3f} not met",
                  file=sys.stderr)
            failed = True
        elif value < threshold:
            print(f"ptd-triage: {name} {value:.3f} is below {flag} {threshold:.3f}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


# --- text rendering ------------------------------------------------------------------------------------------


def render_text(figures: dict[str, Any], source: str) -> str:
    lines = [f"ptd-triage: {source}: {figures['rows']} issues", ""]
    routing = figures["routing"]
    unscored = figures["rows"] - routing["scored"]
    lines.append(
        f"Routing accuracy          {_num(routing['accuracy'])}  "
        f"({routing['correct']}/{routing['scored']} scored; {unscored} with no gold route not scored)"
    )
    columns = routing["columns"]
    width = max(len(c) for c in columns) + 2
    lines.append("  " + "gold \\ planned".ljust(16) + "".join(c.rjust(width) for c in columns))
    for gold_route, row in routing["confusion"].items():
        lines.append("  " + gold_route.ljust(16) + "".join(str(row[c]).rjust(width) for c in columns))
    lines.append("")

    modules = figures["modules"]
    width = max([len("micro"), *map(len, modules["per_label"])]) + 2
    lines.append(f"Modules (over {modules['scored']} issues routed parallelisms in gold)")
    lines.append(_prf_line("micro", modules["micro"], width=width))
    for name, counts in modules["per_label"].items():
        lines.append(_prf_line(name, counts, width=width) + f"  support {counts['support']}")
    lines.append("")

    review = figures["triage_review"]
    hp = figures["high_priority"]
    nd = figures["not_distributed"]
    lines.append(f"Triage review rate        {_num(review['rate'])}  ({review['count']}/{figures['rows']})")
    lines.append(f"High-priority recall      {_num(hp['recall'])}  ({hp['flagged']}/{hp['gold']} gold high priority flagged)")
    lines.append(f"High-priority false flags {_num(hp['false_flag_rate'])}  ({hp['false_flags']}/{hp['others']} others flagged)")
    lines.append(
        f"Wrongly not distributed   {_num(nd['rate'])}  ({nd['wrongly_not_distributed']}/{nd['distributed']})"
    )
    for name, counts in figures["types"].items():
        lines.append(_prf_line(name, counts, indent=0, width=26))
    timing = figures["timing_ms"]
    lines.append(
        f"Planning time per issue   mean {_ms(timing['mean'])}  p95 {_ms(timing['p95'])}  max {_ms(timing['max'])}"
    )
    lines.append("Outcomes: " + ", ".join(f"{k} {v}" for k, v in figures["outcomes"].items()))
    return "\n".join(lines) + "\n"


def render_misses(found: list[Miss]) -> str:
    lines = ["", f"Misses ({len(found)}):"]
    for m in found:
        lines.append(f"- [{m.kind}] {m.id}  {m.title}")
        lines.append(f"    expected: {m.expected}   planned: {m.planned}   outcome: {m.outcome}")
        lines.append("    reasons:" + ("" if m.reasons else " (none given)"))
        lines.extend(f"      - {reason}" for reason in m.reasons)
    return "\n".join(lines) + "\n"


def _prf_line(name: str, counts: dict[str, Any], *, width: int, indent: int = 2) -> str:
    return (
        " " * indent
        + name.ljust(width)
        + f"P {_num(counts['precision'])}  R {_num(counts['recall'])}  F1 {_num(counts['f1'])}"
        + f"  (tp {counts['tp']}, fp {counts['fp']}, fn {counts['fn']})"
    )


def _num(value: float | None) -> str:
    return "n/a  " if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value

