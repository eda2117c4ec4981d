"""Leave one writer out: what step 4's learned scorer does for a writer it was not trained on.

    pip install -e '.[train]'
    python bench/leave_one_writer_out.py                      # the table, also written into bench/results.md
    python bench/leave_one_writer_out.py --thresholds 0.8,0.85,0.9 --out /tmp/results.md
    python bench/leave_one_writer_out.py --settings '{"c_request": 3}' --out /tmp/results.md

Each keyed set is one writer (the real sets dev and dev2, when their texts are beside the repository in
`../shared/eval/`, and the invented sets 6-13). For every writer in turn, the scorer is trained on all the others
(`scripts/train_type_scorer.py`, the same code and settings that wrote the shipped file) and the left-out writer's
issues are planned twice through the whole procedure and policy (`plan_rows`, as `ptd-triage eval` plans):

- **rubric**: today's rubric, its phrases deciding step 4 (`types.scorer` off) and nothing added for what it could
  not read (`high_priority.unread_review` off);
- **design**: the fold's scorer finding the requests the phrases missed (`types.scorer`), and the review label where
  the rubric could not read the issue and step 5 flagged nothing.

Figures against the writer's answer key, as `ptd-triage eval --key` prints them: high-priority recall, false flags
(the key's other issues flagged: review without the marker), right type on requests (the key's feature and
enhancement issues given exactly that type), a type label on non-requests (bug, question, other), and the share of
issues sent to review (the review label, with or without the marker). Read the rubric column with care: its phrases
were written while reading every one of these sets but set13 (examples/invented-sets/README.md), so on the others
it is measured on what it was tuned on; the design's scorer never saw the writer it is measured on, though the
rubric scores it reads were tuned the same way. set13 is the one fold where neither saw the writer.

Imports: the standard library, numpy and scikit-learn (through the training script), and the project (`triage`).
Nothing here is imported by the package or the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

import train_type_scorer as training  # noqa: E402

from triage.config.bundle import load_bundle  # noqa: E402
from triage.evaluation.answer_key import read_key  # noqa: E402
from triage.evaluation.cases import plan_rows  # noqa: E402
from triage.evaluation.dataset import read_dataset  # noqa: E402
from triage.evaluation.key_figures import evaluate_key  # noqa: E402
from triage.evaluation.scoring import scoring_from_bundle  # noqa: E402
from triage.reading.scorer import parse_scorer  # noqa: E402

FIGURES = (("recall", "high-priority recall"), ("false_flags", "false flags"), ("right_type", "right type"),
           ("typed_non_requests", "type on non-requests"), ("review", "to review"))
OUT = ROOT / "bench" / "results.md"
START, END = "<!-- lowo -->", "<!-- /lowo -->"


def variant(bundle, scorer, unread_review: bool):
    rubric = bundle.rubric
    hp = replace(rubric.high_priority, unread_review=unread_review)
    return replace(bundle, rubric=replace(rubric, type_scorer=scorer, high_priority=hp))


def figures(bundle, rows, key) -> dict[str, float]:
    cases = plan_rows(rows, bundle)
    scoring = scoring_from_bundle(bundle)
    found = evaluate_key([(case, key[case.id]) for case in cases], scoring)
    review = sum(1 for case in cases if bundle.labels.review in (case.plan.get("add_labels") or ()))
    return {
        "recall": found["high_priority"]["recall"], "false_flags": found["high_priority"]["false_flag_rate"],
        "right_type": found["requests"]["right_type_rate"], "typed_non_requests": found["non_requests"]["typed_rate"],
        "review": review / len(cases), "ms": statistics.mean(case.elapsed_ms or 0.0 for case in cases),
    }


def leave_one_writer_out(settings: dict | None = None, thresholds=()) -> dict[float, dict]:
    """threshold -> writer -> {"rubric": figures, "design": figures, "issues": {"n": ...}}: the design's scorer
    read at each of `thresholds` (default: the training settings'); the rubric's figures are the same in each."""
    bundle = load_bundle()
    writers = training.available()
    examples = training.read_examples(writers, bundle)
    thresholds = tuple(thresholds) or ({**training.SETTINGS, **(settings or {})}["request_threshold"],)
    out: dict[float, dict] = {t: {} for t in thresholds}
    for writer in writers:
        others = [w for w in writers if w != writer]
        model = training.train([ex for ex in examples if ex.writer != writer], settings, on=others)
        scorer = parse_scorer(json.loads(json.dumps(model)), f"without-{writer}")
        dataset, key_path = training.SETS[writer]
        rows, key = read_dataset(dataset), read_key(key_path)
        rubric = figures(variant(bundle, None, False), rows, key)
        for t in thresholds:
            at = replace(scorer, request=replace(scorer.request, threshold=t))
            out[t][writer] = {"rubric": rubric, "design": figures(variant(bundle, at, True), rows, key),
                              "issues": {"n": len(rows)}}
        print(f"{writer}: done", file=sys.stderr, flush=True)
    return out


def _show(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _cell(found: dict, name: str) -> str:
    return f"{_show(found['rubric'][name])} / {_show(found['design'][name])}"


def table(result: dict, settings: dict) -> str:
    head = "| left out | issues | " + " | ".join(label for _, label in FIGURES) + " |"
    lines = [head, "|" + " --- |" * (len(FIGURES) + 2)]
    for writer, found in result.items():
        lines.append(f"| {writer} | {found['issues']['n']} | " + " | ".join(_cell(found, n) for n, _ in FIGURES) + " |")
    for label, group in (("mean, real", [w for w in result if w in training.REAL]),
                         ("mean, invented", [w for w in result if w not in training.REAL]),
                         ("mean, all", list(result))):
        if not group:
            continue
        mean = {side: {n: statistics.mean(result[w][side][n] for w in group if result[w][side][n] is not None)
                       for n, _ in FIGURES} for side in ("rubric", "design")}
        lines.append(f"| **{label}** | {sum(result[w]['issues']['n'] for w in group)} | "
                     + " | ".join(_cell(mean, n) for n, _ in FIGURES) + " |")
    ms = {side: statistics.mean(f[side]["ms"] for f in result.values()) for side in ("rubric", "design")}
    return ("Each cell: rubric / design. " + f"Settings: `{json.dumps({**training.SETTINGS, **settings})}`. "
            f"Planning time per issue, mean over the folds: rubric {ms['rubric']:.1f} ms, design {ms['design']:.1f} ms."
            "\n\n" + "\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default="{}", help="training settings over the script's SETTINGS (JSON)")
    parser.add_argument("--out", type=Path, default=OUT, help="results file whose lowo section is written")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--thresholds", help="read the design's scorer at these request thresholds (T,T,...): one "
                        "table each (default: the training settings' threshold)")
    args = parser.parse_args(argv)
    settings = json.loads(args.settings)
    thresholds = tuple(float(t) for t in args.thresholds.split(",")) if args.thresholds else ()
    results = leave_one_writer_out(settings, thresholds)
    text = "\n".join(table(result, {**settings, "request_threshold": t}) for t, result in results.items())
    print(text)
    from startup import write_section  # bench/startup.py: the same markers' rule for every section

    write_section(args.out, "## Leave one writer out (bench/leave_one_writer_out.py)\n\n" + text, START, END)
    if args.json:
        args.json.write_text(json.dumps({str(t): r for t, r in results.items()}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
