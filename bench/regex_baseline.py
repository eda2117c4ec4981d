"""A plain regex labeller for the pt2 queue, the yardstick the pt2 configuration is measured against.

As the eval README describes it: one regex per module label over title and body, `oncall: export` on
torch.export words, `oncall: cpu inductor` on CPU + inductor words (export first, then cpu-inductor, else core),
no high-priority flag. Scored like `ptd-triage eval`: routing accuracy over every row, module micro P/R/F1 over
rows with at least one gold module, counting the 15 module labels.

    python bench/regex_baseline.py /path/to/pt2-dev.jsonl [--halves]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys

MODULES = {
    "module: dynamo": r"\bdynamo\b",
    "module: inductor": r"\binductor\b",
    "module: pt2-dispatcher": r"\bpt2[- ]dispatcher\b|\bfake ?tensor\b|\bfunctionali[sz]",
    "module: dynamic shapes": r"\bdynamic shapes?\b",
    "module: higher order operators": r"\bhigher[- ]order op",
    "module: aotdispatch": r"\baot ?dispatch\b|\baot_?autograd\b",
    "module: flex attention": r"\bflex[_ ]?attention\b",
    "module: aotinductor": r"\baot ?inductor\b|\baoti\b",
    "module: compiled autograd": r"\bcompiled[_ ]autograd\b",
    "module: cuda graphs": r"\bcuda ?graphs?\b",
    "module: graph breaks": r"\bgraph breaks?\b",
    "module: guards": r"\bguards?\b",
    "module: user triton": r"\buser[- ]defined triton\b|\btriton kernel",
    "module: functorch": r"\bfunctorch\b",
    "module: cpu inductor": r"\bcpu inductor\b",
}
EXPORT = r"\btorch\.export\b|\bexport(?:ed)?\b"
CPU, INDUCTOR = r"\bcpu\b|\bcpp\b|\bx86\b|\baarch64\b|\barm\b", r"\binductor\b"


def label(issue: dict) -> tuple[str, set[str]]:
    text = (issue.get("title") or "") + "\n" + (issue.get("body") or "")
    modules = {name for name, rx in MODULES.items() if re.search(rx, text, re.I)}
    if re.search(EXPORT, text, re.I):
        return "export", modules
    if re.search(CPU, text, re.I) and re.search(INDUCTOR, text, re.I):
        return "cpu-inductor", modules
    return "core", modules


def half(row_id: str) -> str:
    return "A" if hashlib.sha256(row_id.encode("utf-8")).digest()[0] % 2 == 0 else "B"


def score(rows: list[dict]) -> dict:
    routed = correct = tp = fp = fn = 0
    for row in rows:
        route, modules = label(row["issue"])
        gold = row["gold"]
        if gold.get("route") is not None:
            routed += 1
            correct += route == gold["route"]
        want = {m for m in gold.get("modules", []) if m in MODULES}
        if want:
            tp += len(modules & want)
            fp += len(modules - want)
            fn += len(want - modules)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"rows": len(rows), "routing_accuracy": correct / routed if routed else None,
            "module_precision": p, "module_recall": r, "module_f1": 2 * p * r / (p + r) if p + r else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--halves", action="store_true", help="also score the two fixed halves (by id)")
    args = parser.parse_args(argv)
    with open(args.dataset, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    out = {"all": score(rows)}
    if args.halves:
        for name in ("A", "B"):
            out[name] = score([r for r in rows if half(r.get("id") or str(r["issue"]["number"])) == name])
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
