"""What `ptd-triage eval` and `ptd-triage replay` share: the report's options, printing the measurement (text or
JSON, `triage.evaluation.report` and `.render`), and the `--min-*` gates.

Exit status of a report: 0 whatever the figures (measuring is not judging), 1 when a `--min-*` minimum is set and
not met. Bad input never gets here: it is raised and the one error handler (`common.run_command`) says it.

May import: the standard library, `triage.cli.common` (CliError), `triage.config.words`, `triage.core.snapshot`
(InputError), `triage.evaluation`, `triage.llm.pricing`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, TextIO

from triage.cli.common import CliError
from triage.config.words import queue_words
from triage.core.snapshot import InputError
from triage.evaluation.answer_key import AnswerKeyError, KeyEntry, join_key, read_key
from triage.evaluation.cases import Case
from triage.evaluation.render import render_report
from triage.evaluation.report import measure

# minimum option -> (figure path, human name, flag)
MINIMUMS = {
    "min_routing": (("routing", "accuracy"), "routing accuracy", "--min-routing"),
    "min_module_f1": (("modules", "micro", "f1"), "module F1", "--min-module-f1"),
}


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


def key_from_args(args: argparse.Namespace, bundle=None) -> dict[str, KeyEntry] | None:
    """The answer key `--key` names, read before anything is planned (None without one), its criteria checked
    against the queue's (`bundle`'s step 5 criteria). `--thresholds` without a key would be ignored without a word
    (the thresholds are scored against the key's answers): bad input."""
    if getattr(args, "thresholds", None) and not args.key:
        raise InputError("--thresholds needs --key: the thresholds are scored against the key's high-priority "
                         "answers")
    criteria = [c.name for c in bundle.rubric.high_priority.criteria] if bundle is not None else None
    return read_key(args.key, criteria) if args.key else None


def check_key_joins(items, key: dict[str, KeyEntry] | None, args: argparse.Namespace, source: str) -> None:
    """The key answers for these issues (`join_key`), else one line naming the key and the issues' source: a key for
    another dataset or repository fails before anything is printed."""
    if key is None:
        return
    try:
        join_key(items, key)
    except AnswerKeyError as exc:
        raise CliError(f"{args.key}: {exc} ({source})") from None


def report(cases: list[Case], bundle, args: argparse.Namespace, *, source: str, extra: dict[str, Any] | None = None,
           key: dict[str, KeyEntry] | None = None, out: TextIO | None = None) -> int:
    """Print the measurement in the chosen format; return the exit status the minimums give."""
    out = out or sys.stdout
    result = measure(cases, bundle, key=key, key_source=getattr(args, "key", None),
                     thresholds=getattr(args, "thresholds", None), with_misses=args.errors)
    figures = result.figures
    if args.format == "json":
        document: dict[str, Any] = {"dataset": source, **(extra or {}), **figures}
        if args.errors:
            document["errors"] = [m.to_dict() for m in result.misses]
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        words = queue_words(bundle.rubric.words, bundle.labels.queue_label)
        out.write(render_report(figures, source, result.misses if args.errors else None, words.not_in_queue))
        if extra and "model" in extra:
            out.write(render_model(extra["model"]))
    out.flush()
    return check_minimums(figures, args)


def check_minimums(figures: dict[str, Any], args: argparse.Namespace) -> int:
    failed = False
    for option, (path, name, flag) in MINIMUMS.items():
        threshold = getattr(args, option, None)
        if threshold is None:
            continue
        value: Any = figures
        for part in path:
            value = value[part]
        if value is None:
            print(f"ptd-triage: {name} could not be measured (no scored issues), {flag} {threshold:.3f} not met",
                  file=sys.stderr)
            failed = True
        elif value < threshold:
            print(f"ptd-triage: {name} {value:.3f} is below {flag} {threshold:.3f}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


# Per issue that asked the model: what its plan's `usage` says it cost.
PER_ISSUE = ("calls", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "cost_usd")


def model_figures(totals: dict[str, Any], rows: int, cases=()) -> dict[str, Any]:
    """Calls, tokens (and of them cached and written to the provider's cache), estimated cost and latency of a
    model planner (its `usage_totals()`), the share of issues that asked it, and (`per_issue`) what each issue that
    asked it cost, from its plan's usage."""
    totals = dict(totals)
    totals["issues"] = rows
    totals["call_rate"] = totals["issues_asked"] / rows if rows else None
    totals["per_issue"] = [{"issue": case.plan.get("issue"), **{k: case.plan["usage"].get(k) for k in PER_ISSUE}}
                           for case in cases if isinstance(case.plan.get("usage"), dict)
                           and case.plan["usage"].get("calls")]
    return totals


def render_model(m: dict[str, Any]) -> str:
    from triage.llm.pricing import format_usd

    lat = m["latency_ms"]
    rate = "n/a" if m["call_rate"] is None else f"{m['call_rate']:.3f}"
    mean = "n/a" if lat["mean"] is None else f"{lat['mean']:.1f} ms"
    p95 = "n/a" if lat["p95"] is None else f"{lat['p95']:.1f} ms"
    issues = m.get("per_issue") or []
    each = ""
    if issues:
        avg = {k: sum(i.get(k) or 0 for i in issues) / len(issues) for k in ("input_tokens", "cached_input_tokens")}
        costs = [i["cost_usd"] for i in issues if i.get("cost_usd") is not None]
        each = (f"Per issue asked: {avg['input_tokens']:.0f} input tokens ({avg['cached_input_tokens']:.0f} "
                f"cached) on average" + (f", cost {format_usd(sum(costs) / len(costs))} on average, at most "
                                         f"{format_usd(max(costs))}" if costs else "") + "\n")
    return (f"Model: asked for {m['issues_asked']}/{m['issues']} issues ({rate}), {m['calls']} calls, "
            f"{m['input_tokens']} input tokens ({m.get('cached_input_tokens', 0)} cached, "
            f"{m.get('cache_write_tokens', 0)} written to the cache) + {m['output_tokens']} output tokens, cost "
            f"{format_usd(m['cost_usd'])}, {m['fallbacks']} fell back to the rubric; latency mean {mean}, p95 {p95}\n"
            + each)


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
    if not all(math.isfinite(v) for v in values):  # float() reads "inf" and "nan": no score is compared with them
        raise argparse.ArgumentTypeError(f"{text!r}: a threshold is a finite number")
    return values
