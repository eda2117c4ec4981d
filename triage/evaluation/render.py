"""The measurement as text: the figures, the halves, the answer key's figures and operating point, the misses.

Every table's rows and columns come from the figures document (`triage.evaluation.report`): routes, modules and
kinds are the configuration's, never written here.

May import: the standard library, `triage.evaluation.figures`.
"""

from __future__ import annotations

from typing import Any

from triage.evaluation.figures import HALVES, Miss


def render_text(figures: dict[str, Any], source: str, not_in_queue: str = "not in the queue") -> str:
    """The figures against gold; `not_in_queue` is what the queue calls step 1 sending an issue back."""
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
    routes = " or ".join(modules["routes"])
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
    lines.append(f"Wrongly {not_in_queue}".ljust(26)
                 + f"{_num(nd['rate'])}  ({nd['wrongly_not_distributed']}/{nd['distributed']})")
    for name, counts in figures["types"].items():
        lines.append(_prf_line(name, counts, indent=0, width=26))
    timing = figures["timing_ms"]
    lines.append(
        f"Planning time per issue   mean {_ms(timing['mean'])}  p95 {_ms(timing['p95'])}  max {_ms(timing['max'])}"
    )
    lines.append("Outcomes: " + ", ".join(f"{k} {v}" for k, v in figures["outcomes"].items()))
    return "\n".join(lines) + "\n"


def _half_table(title: str, columns: list[dict[str, Any]]):
    """(the table's lines so far, `row(name, cell)` that appends a row): one column for the whole dataset, one per
    half; `cell(figures)` gives a column's text."""
    head = "".join(f"{name:>16}" for name in ("all", *(f"half {h}" for h in HALVES)))
    lines = ["", title, " " * 30 + head]

    def row(name: str, cell) -> None:
        lines.append(f"  {name:<28}" + "".join(f"{cell(c):>16}" for c in columns))

    return lines, row


def _accuracy(r: dict[str, Any]) -> str:
    """A routing figure (`accuracy`, `correct` of `scored`) as a cell."""
    return _frac(r["accuracy"], r["correct"], r["scored"])


def render_halves(figures: dict[str, Any]) -> str:
    """The headline figures against the labels people gave, on the whole dataset and on each half."""
    halves = figures["halves"]
    lines, row = _half_table("Halves (fixed: sha256 of the id, first byte even = A, odd = B), against the labels "
                             "people gave", [figures, *(halves[h] for h in HALVES)])
    row("issues", lambda f: str(f["rows"]))
    row("routing accuracy", lambda f: _accuracy(f["routing"]))
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
    lines, row = _half_table(f"Against the procedure answer key ({key['source']})", columns)

    row("high-priority recall", lambda f: _frac(f["high_priority"]["recall"], f["high_priority"]["flagged"],
                                                f["high_priority"]["key"]))
    row("high-priority recall, sure", lambda f: _frac(f["high_priority"]["sure"]["recall"],
                                                      f["high_priority"]["sure"]["flagged"],
                                                      f["high_priority"]["sure"]["key"]))
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
    for name in key["all"]["requests"]["by_type"]:
        row(f"  {name}", lambda f, n=name: _frac(f["requests"]["by_type"][n]["rate"],
                                                 f["requests"]["by_type"][n]["right"], f["requests"]["by_type"][n]["key"]))
    row("requests: any type label", lambda f: _frac(f["requests"]["typed_rate"], f["requests"]["typed"],
                                                    f["requests"]["key"]))
    row("non-requests: a type label", lambda f: _frac(f["non_requests"]["typed_rate"], f["non_requests"]["typed"],
                                                      f["non_requests"]["key"]))
    row("performance enhancements", lambda f: _frac(f["performance"]["recall"], f["performance"]["labelled"],
                                                    f["performance"]["key"]))
    row("performance on others", lambda f: str(f["performance"]["false_labels"]))
    if "routing_in_queue" in key["all"]:
        row("routing, key's in-queue", lambda f: _accuracy(f["routing_in_queue"]))
        row("not-distributed sent away", lambda f: _frac(f["not_in_queue"]["rate"], f["not_in_queue"]["sent_away"],
                                                         f["not_in_queue"]["key"]))
        row("wrongly not distributed", lambda f: _frac(f["not_in_queue"]["wrongly_rate"],
                                                  f["not_in_queue"]["wrongly_sent_away"], f["not_in_queue"]["in_queue"]))
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


def render_report(figures: dict[str, Any], source: str, found: list[Miss] | None = None,
                  not_in_queue: str = "not in the queue") -> str:
    """The whole text report: figures, halves, the key's figures when measured, and the misses when listed."""
    parts = [render_text(figures, source, not_in_queue), render_halves(figures)]
    if "key" in figures:
        parts.append(render_key(figures["key"]))
    if found is not None:
        parts.append(render_misses(found))
    return "".join(parts)
