#!/usr/bin/env python3
"""Write the figures the docs quote, from the commands that measure them, so that no figure can go stale.

Each figure block in the docs sits between `<!-- figures:NAME -->` and `<!-- /figures:NAME -->` and is written
here, never by hand:

    python scripts/doc_figures.py            # rewrite every block whose data is present
    python scripts/doc_figures.py --check    # exit 1 naming each block that differs from what the commands say

tests/test_doc_figures.py runs the same check. The datasets (PyTorch's dev sets, `$PTD_SHARED_DIR/eval` or
`../shared/eval`) are not shipped with this repository: a block whose dataset is absent is left as it is (and the
test skips it, saying why). Machine-dependent timings are not quoted in blocks; bench/results.md, which
bench/run.py writes with its date and machine, holds them.

Blocks:
- distributed-dev (docs/measuring.md): `ptd-triage eval dev.jsonl --key examples/answer-keys/distributed-dev.jsonl`;
- pt2-dev (docs/measuring.md): the pt2 queue's routes and modules (from queues/pt2), `ptd-triage eval --config
  queues/pt2 pt2-dev.jsonl` and `bench/regex_baseline.py`;
- hybrid-gate (docs/reference.md): `bench/hybrid_gate.py` on dev and dev2 with their keys.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = ROOT / "examples" / "answer-keys"


def shared_eval() -> Path:
    env = os.environ.get("PTD_SHARED_DIR")
    return (Path(env) if env else ROOT.parent / "shared") / "eval"


def _run_json(*args: str) -> dict:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(proc.stdout)


def _eval(*args: str) -> dict:
    return _run_json("-m", "triage", "eval", *args, "--format", "json")


def _r(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


class Missing(Exception):
    """The block's dataset is not on this machine."""


def _need(*paths: Path) -> None:
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        raise Missing(", ".join(absent))


# ---- the blocks --------------------------------------------------------------------------------------------------

def distributed_dev() -> str:
    data, key = shared_eval() / "dev.jsonl", KEYS / "distributed-dev.jsonl"
    _need(data, key)
    e = _eval(str(data), "--key", str(key.relative_to(ROOT)))
    halves, k = e["halves"], e["key"]

    def mod(m: dict) -> str:
        return _r(m["micro"]["f1"])

    def hp(part: dict) -> str:
        return _r(part["high_priority"]["recall"])

    def ff(part: dict) -> str:
        return _r(part["high_priority"]["false_flag_rate"])

    def sure(part: dict) -> str:
        return _r(part["high_priority"]["sure"]["recall"])

    rq = k["all"]["requests"]
    nr = k["all"]["non_requests"]
    rows = [
        "| figure | all | half A | half B |",
        "| --- | --- | --- | --- |",
        f"| routing accuracy | {_r(e['routing']['accuracy'])} ({e['routing']['correct']}/{e['routing']['scored']}) | "
        f"{_r(halves['A']['routing']['accuracy'])} | {_r(halves['B']['routing']['accuracy'])} |",
        f"| module F1 (precision / recall), parallelisms | {mod(e['modules'])} "
        f"({_r(e['modules']['micro']['precision'])} / {_r(e['modules']['micro']['recall'])}) | "
        f"{mod(halves['A']['modules'])} | {mod(halves['B']['modules'])} |",
        f"| `triage review` rate | {_r(e['triage_review']['rate'])} | | |",
        f"| wrongly \"not distributed\" | {_r(e['not_distributed']['rate'])} | | |",
        "| **against the procedure answer key** | | | |",
        f"| high-priority recall | {hp(k['all'])} ({k['all']['high_priority']['flagged']}/"
        f"{k['all']['high_priority']['key']}) | {hp(k['A'])} | {hp(k['B'])} |",
        f"| high-priority recall, the key's sure ones | {sure(k['all'])} ({k['all']['high_priority']['sure']['flagged']}/"
        f"{k['all']['high_priority']['sure']['key']}) | {sure(k['A'])} | {sure(k['B'])} |",
        f"| high-priority false flags | {ff(k['all'])} ({k['all']['high_priority']['false_flags']}/"
        f"{k['all']['high_priority']['others']}) | {ff(k['A'])} | {ff(k['B'])} |",
        f"| requests given the right type | {_r(rq['right_type_rate'])} ({rq['right_type']}/{rq['key']}) | "
        f"{_r(k['A']['requests']['right_type_rate'])} | {_r(k['B']['requests']['right_type_rate'])} |",
        f"| non-requests given a type label | {_r(nr['typed_rate'])} ({nr['typed']}/{nr['key']}) | "
        f"{_r(k['A']['non_requests']['typed_rate'])} | {_r(k['B']['non_requests']['typed_rate'])} |",
        "| **against PyTorch's labels** | | | |",
        f"| high-priority recall / false flags | {hp(e)} / {ff(e)} | {hp(halves['A'])} / {ff(halves['A'])} | "
        f"{hp(halves['B'])} / {ff(halves['B'])} |",
    ]
    intro = (f"`ptd-triage eval ../shared/eval/dev.jsonl --key examples/answer-keys/distributed-dev.jsonl` "
             f"({e['rows']} real issues from\npytorch/pytorch's distributed queue, not shipped with this repository) "
             f"gives, with the bundled rubric:")
    return intro + "\n\n" + "\n".join(rows)


def pt2_dev() -> str:
    from triage.config.bundle import load_bundle

    data = shared_eval() / "pt2-dev.jsonl"
    _need(data)
    bundle = load_bundle(queue="pt2")
    routes = list(bundle.rubric.routes)
    modules = bundle.labels.with_role("module")
    e = _eval("--config", "queues/pt2", str(data))
    base = _run_json("bench/regex_baseline.py", str(data), "--halves")
    h = e["halves"]
    m = e["modules"]["micro"]
    b = base["all"]
    rows = [
        "| | routing accuracy | module F1 (P / R) |",
        "| --- | --- | --- |",
        f"| `queues/pt2` | **{_r(e['routing']['accuracy'])}** ({e['routing']['correct']}/{e['routing']['scored']}) | "
        f"**{_r(m['f1'])}** ({_r(m['precision'])} / {_r(m['recall'])}) |",
        f"| halves A / B | {_r(h['A']['routing']['accuracy'])} / {_r(h['B']['routing']['accuracy'])} | "
        f"{_r(h['A']['modules']['micro']['f1'])} / {_r(h['B']['modules']['micro']['f1'])} |",
        f"| regex labeller | {_r(b['routing_accuracy'])} | {_r(b['module_f1'])} ({_r(b['module_precision'])} / "
        f"{_r(b['module_recall'])}) |",
    ]
    intro = (f"{_count(len(routes))} routes, {len(modules)} module labels. On its {e['rows']} labelled dev issues "
             f"(`ptd-triage eval --config queues/pt2 ../shared/eval/pt2-dev.jsonl`), beside a plain regex labeller "
             f"(`python bench/regex_baseline.py FILE`; one regex per module, `oncall: export` on export words, "
             f"`oncall: cpu inductor` on CPU + inductor words):")
    return _wrap(intro) + "\n\n" + "\n".join(rows)


def hybrid_gate() -> str:
    pairs = [("dev", shared_eval() / "dev.jsonl", KEYS / "distributed-dev.jsonl"),
             ("dev2", shared_eval() / "dev2.jsonl", KEYS / "distributed-dev2.jsonl")]
    _need(*(p for _, data, key in pairs for p in (data, key)))
    spec = importlib.util.spec_from_file_location("hybrid_gate", ROOT / "bench" / "hybrid_gate.py")
    gate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gate)
    from triage.config.bundle import load_bundle

    bundle = load_bundle()
    head = ("| dataset | asked (bundled, `gate: false`) | asked with `gate: true` | with the gate: key's high-priority "
            "issues flagged or asked |")
    rows = [head, "|---|---|---|---|"]
    for name, data, key in pairs:
        c = gate.measure(data, key, bundle)["all"]
        g = gate.measure(data, key, bundle, True)["all"]
        rows.append(f"| {name} ({c['n']}) | {_r(c['asked'] / c['n'])} ({c['asked']}) | "
                    f"{_r(g['asked'] / g['n'])} ({g['asked']}) | {_r(g['seen'] / g['hp'])} ({g['seen']}/{g['hp']}) |")
    return "\n".join(rows)


def _count(n: int) -> str:
    words = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}
    return words.get(n, str(n))


def _wrap(text: str, width: int = 116) -> str:
    out, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*out, line])


BLOCKS: dict[str, tuple[Path, Callable[[], str]]] = {
    "distributed-dev": (ROOT / "docs" / "measuring.md", distributed_dev),
    "pt2-dev": (ROOT / "docs" / "measuring.md", pt2_dev),
    "hybrid-gate": (ROOT / "docs" / "reference.md", hybrid_gate),
}


def block_pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- figures:{re.escape(name)} -->\n)(.*?)(\n<!-- /figures:{re.escape(name)} -->)", re.S)


def current(name: str) -> str:
    path, _ = BLOCKS[name]
    found = block_pattern(name).search(path.read_text(encoding="utf-8"))
    if not found:
        raise SystemExit(f"{_shown(path)}: no <!-- figures:{name} --> block")
    return found.group(2)


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block is stale")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    stale = 0
    for name, (path, make) in BLOCKS.items():
        try:
            fresh = make()
        except Missing as exc:
            print(f"{name}: skipped, not on this machine: {exc}", file=sys.stderr)
            continue
        if current(name) == fresh:
            print(f"{name}: up to date", file=sys.stderr)
            continue
        if args.check:
            print(f"{name}: stale in {_shown(path)} (run scripts/doc_figures.py)", file=sys.stderr)
            stale += 1
            continue
        text = path.read_text(encoding="utf-8")
        path.write_text(block_pattern(name).sub(lambda m: m.group(1) + fresh + m.group(3), text, count=1),
                        encoding="utf-8")
        print(f"{name}: written to {_shown(path)}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
