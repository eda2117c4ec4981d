"""`ptd-triage eval DATASET.jsonl [--key KEY.jsonl]`: replay a labelled dataset through the planner and print
accuracy figures against the labels people gave (`gold`), on the whole dataset and on its two fixed halves, and,
with `--key`, against a procedure answer key (`examples/answer-keys/`) joined by `id`, with the high-priority
operating point (recall and false-flag rate over a range of thresholds).

Exit status: 0 whatever the figures (measuring is not judging), 1 when a `--min-*` minimum is set and not met,
2 on bad input (one line naming the file and line). The helpers here are shared with `ptd-triage replay`, which
prints the same report for issues it rebuilt from a live repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Iterable, TextIO

from triage.cli.common import CliError, add_config_options, add_planner_options, fail, planner_from_args
from triage.config.bundle import ConfigError
from triage.evaluation.dataset import DatasetError, DatasetRow, check_routes, read_dataset
from triage.cli.common import load_config
from triage.config.bundle import routes_of
from triage.evaluation.evaluate import (
    HALVES,
    AnswerKeyError,
    Case,
    KeyEntry,
    Miss,
    evaluate,
    evaluate_key,
    index_key,
    join_key,
    key_entry_from_json,
    key_misses,
    misses,
    scoring_from_bundle,
    split_halves,
    threshold_sweep,
)
from triage.planners import plan_issue

# minimum option -> (figure path, human name, flag)
MINIMUMS = {
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
    add_planner_options(parser)
    parser.add_argument("--record", metavar="DIR", help="save the model's replies to DIR (with --planner llm|hybrid)")
    parser.add_argument("--replay", metavar="DIR", help="answer from replies saved with --record: offline, free")
    parser.set_defaults(func=run)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--errors", action="store_true", help="also list every miss with what was expected, planned, and why"
    )
    parser.add_argument("--min-routing", type=_fraction, metavar="X", help="exit 1 if routing accuracy < X (0..1)")
    parser.add_argument("--min-module-f1", type=_fraction, metavar="X", help="exit 1 if module micro F1 < X (0..1)")
    parser.add_argument(
        "--key", metavar="KEY.jsonl",
        help="also score against a procedure answer key (one JSON object a line, joined to the dataset by id; "
        "see examples/answer-keys/)",
    )
    parser.add_argument(
        "--thresholds", type=_thresholds, metavar="T,T,...",
        help="high-priority thresholds to sweep against the key (default: 1,2,3,4,5,6,8,10,12 and the rubric's)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        bundle = load_config(args)  # issue 9: --config DIR or a repository config, as every command
        rows = read_dataset(args.dataset)
        check_routes(rows, routes_of(bundle), args.dataset)
        key = read_key(args.key) if args.key else None
        if key is not None:
            # Joined before planning, so a key for another dataset fails at once, with nothing printed.
            join_key([Case(row.id, "", row.gold, {}) for row in rows], key)
    except (ConfigError, DatasetError) as exc:
        return fail(str(exc))
    except AnswerKeyError as exc:
        return fail(f"{args.key}: {exc} ({args.dataset})")
    if getattr(args, "record", None) and getattr(args, "replay", None):
        return fail("--record and --replay cannot be used together")
    try:
        planner = planner_from_args(args, record=getattr(args, "record", None), replay=getattr(args, "replay", None))
    except CliError as exc:
        return fail(str(exc), exc.status)
    cases = plan_rows(rows, bundle, planner=planner)
    consultant = getattr(planner, "consultant", None)  # issue 8: the model planners' calls, tokens, cost, latency
    extra = {"planner": planner.name, "model": model_figures(consultant, len(cases))} if consultant else None
    status = report(cases, bundle, args, source=args.dataset, key=key, extra=extra)
    if extra is not None and args.format == "text":
        sys.stdout.write(render_model(extra["model"]))
    return status


def model_figures(consultant, rows: int) -> dict[str, Any]:
    """Calls, tokens, estimated cost and latency of a model planner, and the share of issues that asked it."""
    totals = consultant.usage_totals()
    totals["issues"] = rows
    totals["call_rate"] = totals["issues_asked"] / rows if rows else None
    return totals


def render_model(m: dict[str, Any]) -> str:
    from triage.llm.pricing import format_usd

    lat = m["latency_ms"]
    rate = "n/a" if m["call_rate"] is None else f"{m['call_rate']:.3f}"
    mean = "n/a" if lat["mean"] is None else f"{lat['mean']:.1f} ms"
    p95 = "n/a" if lat["p95"] is None else f"{lat['p95']:.1f} ms"
    return (f"Model: asked for {m['issues_asked']}/{m['issues']} issues ({rate}), {m['calls']} calls, "
            f"{m['input_tokens']} input + {m['output_tokens']} output tokens, cost {format_usd(m['cost_usd'])}, "
            f"{m['fallbacks']} fell back to the rubric; latency mean {mean}, p95 {p95}\n")


def read_key(path: str) -> dict[str, KeyEntry]:
    """An answer key file: one JSON object a line (`examples/answer-keys/SCHEMA.json`). Strict like the
    dataset: the first bad line stops everything with one message naming the file and line."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entries.append(key_entry_from_json(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: {exc}") from None
    if not entries:
        raise DatasetError(f"{path}: no key lines")
    try:
        return index_key(entries)
    except AnswerKeyError as exc:
        raise DatasetError(f"{path}: {exc}") from None


def plan_rows(rows: Iterable[DatasetRow], bundle, planner=None) -> list[Case]:
    """Plan each row (as it stood when the queue label was added), timing the planner alone."""
    cases = []
    for row in rows:
        started = time.perf_counter()
        plan = plan_issue(row.snapshot, bundle, planner=planner)
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
    key: dict[str, KeyEntry] | None = None,
) -> int:
    """Print figures (and misses) in the chosen format; return the exit status the minimums give."""
    out = out or sys.stdout
    scoring = scoring_from_bundle(bundle)  # issue 9: routes and scored modules from the configuration
    figures = evaluate(cases, scoring)
    halves = split_halves(cases)
    figures["halves"] = {half: evaluate(halves[half], scoring) for half in HALVES}
    found = misses(cases, scoring) if args.errors else []
    if key is not None:
        pairs = join_key(cases, key)
        threshold = rubric_threshold(bundle)
        thresholds = sorted(set(getattr(args, "thresholds", None) or DEFAULT_THRESHOLDS) | {threshold})
        by_half = {half: [p for p in pairs if p[0] in halves[half]] for half in HALVES}
        figures["key"] = {
            "source": getattr(args, "key", None),
            "all": evaluate_key(pairs, scoring),
            **{half: evaluate_key(by_half[half], scoring) for half in HALVES},
            "threshold": threshold,
            "sweep": [
                {**row, "halves": {half: _sweep_cell(by_half[half], row["threshold"]) for half in HALVES}}
                for row in threshold_sweep(pairs, thresholds)
            ],
        }
        if args.errors:
            found += key_misses(pairs, scoring)
    if args.format == "json":
        document: dict[str, Any] = {"dataset": source, **(extra or {}), **figures}
        if args.errors:
            document["errors"] = [m.to_dict() for m in found]
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        out.write(render_text(figures, source))
        out.write(render_halves(figures))
        if "key" in figures:
            out.write(render_key(figures["key"]))
        if args.errors:
            out.write(render_misses(found))
    out.flush()
    return check_minimums(figures, args)


DEFAULT_THRESHOLDS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0)


def rubric_threshold(bundle) -> float:
    """The operating point the rubric sets for step 5."""
    high = bundle.rubric.high_priority
    return float(getattr(high, "threshold", None) if hasattr(high, "threshold") else high.min_score)


def _sweep_cell(pairs, threshold: float) -> dict[str, Any]:
    row = threshold_sweep(pairs, [threshold])[0]
    return {k: row[k] for k in ("flagged", "recall", "false_flags", "false_flag_rate")}


def check_minimums(figures: dict[str, Any], args: argparse.Namespace) -> int:
    failed = False
    for option, (path, name, flag) in MINIMUMS.items():
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
    routes = " or ".join(modules.get("routes") or ["parallelisms"])
    lines.append(f"Modules (over {modules['scored']} issues routed {routes} in gold, with gold modules)")
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


def render_halves(figures: dict[str, Any]) -> str:
    """The headline figures against the labels people gave, on the whole dataset and on each half."""
    halves = figures["halves"]
    columns = [figures, *(halves[h] for h in HALVES)]
    head = "".join(f"{name:>16}" for name in ("all", *(f"half {h}" for h in HALVES)))
    lines = ["", "Halves (fixed: sha256 of the id, first byte even = A, odd = B), against the labels people gave",
             " " * 30 + head]

    def row(name: str, cell) -> None:
        lines.append(f"  {name:<28}" + "".join(f"{cell(c):>16}" for c in columns))

    row("issues", lambda f: str(f["rows"]))
    row("routing accuracy", lambda f: _frac(f["routing"]["accuracy"], f["routing"]["correct"], f["routing"]["scored"]))
    row("module F1 (micro)", lambda f: _num(f["modules"]["micro"]["f1"]).strip())
    row("high-priority recall", lambda f: _frac(f["high_priority"]["recall"], f["high_priority"]["flagged"],
                                                f["high_priority"]["gold"]))
    row("high-priority false flags", lambda f: _frac(f["high_priority"]["false_flag_rate"],
                                                     f["high_priority"]["false_flags"], f["high_priority"]["others"]))
    for name in figures["types"]:
        row(f"{name} P / R", lambda f, n=name: f"{_num(f['types'][n]['precision']).strip()} / "
                                                f"{_num(f['types'][n]['recall']).strip()}")
    return "\n".join(lines) + "\n"


def render_key(key: dict[str, Any]) -> str:
    """Figures against the procedure answer key, per half, and the high-priority operating point."""
    columns = [key["all"], *(key[h] for h in HALVES)]
    head = "".join(f"{name:>16}" for name in ("all", *(f"half {h}" for h in HALVES)))
    lines = ["", f"Against the procedure answer key ({key['source']})", " " * 30 + head]

    def row(name: str, cell) -> None:
        lines.append(f"  {name:<28}" + "".join(f"{cell(c):>16}" for c in columns))

    row("high-priority recall", lambda f: _frac(f["high_priority"]["recall"], f["high_priority"]["flagged"],
                                                f["high_priority"]["key"]))
    row("high-priority false flags", lambda f: _frac(f["high_priority"]["false_flag_rate"],
                                                     f["high_priority"]["false_flags"], f["high_priority"]["others"]))
    criteria = sorted({name for f in columns for name in f["high_priority"]["by_criterion"]})
    for name in criteria:
        def cell(f, n=name):
            c = f["high_priority"]["by_criterion"].get(n)
            return _frac(c["recall"], c["flagged"], c["key"]) if c else "-"
        row(f"  {name}", cell)
    row("requests: right type", lambda f: _frac(f["requests"]["right_type_rate"], f["requests"]["right_type"],
                                                f["requests"]["key"]))
    for name in ("feature", "enhancement"):
        row(f"  {name}", lambda f, n=name: _frac(f["requests"]["by_type"][n]["rate"],
                                                 f["requests"]["by_type"][n]["right"], f["requests"]["by_type"][n]["key"]))
    row("requests: any type label", lambda f: _frac(f["requests"]["typed_rate"], f["requests"]["typed"],
                                                    f["requests"]["key"]))
    row("non-requests: a type label", lambda f: _frac(f["non_requests"]["typed_rate"], f["non_requests"]["typed"],
                                                      f["non_requests"]["key"]))
    row("performance enhancements", lambda f: _frac(f["performance"]["recall"], f["performance"]["labelled"],
                                                    f["performance"]["key"]))
    row("performance on others", lambda f: str(f["performance"]["false_labels"]))
    lines.append("")
    lines.append(f"High-priority operating point against the key (flag when step 5's score >= threshold; "
                 f"the rubric's is {key['threshold']:g}, marked *)")
    lines.append("  threshold" + "".join(f"{h:>16}" for h in ("recall all", *(f"recall {x}" for x in HALVES)))
                 + "".join(f"{h:>16}" for h in ("false flags all", *(f"false flags {x}" for x in HALVES))))
    for r in key["sweep"]:
        cells = [r, *(r["halves"][h] for h in HALVES)]
        mark = "*" if r["threshold"] == key["threshold"] else " "
        lines.append(f"  {r['threshold']:>8g}{mark}"
                     + "".join(f"{_num(c['recall']).strip():>16}" for c in cells)
                     + "".join(f"{_num(c['false_flag_rate']).strip():>16}" for c in cells))
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


def _frac(value: float | None, numerator: int, denominator: int) -> str:
    return f"{_num(value).strip()} ({numerator}/{denominator})"


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



def _thresholds(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    if not values:
        raise argparse.ArgumentTypeError("no thresholds given")
    return values
