"""Train step 4's learned type scorer on the keyed issues and write it as data (`triage/reading/types-v1.json`).

    pip install -e '.[train]'                        # numpy and scikit-learn: for training only
    python scripts/train_type_scorer.py              # writes triage/reading/types-v1.json
    python scripts/train_type_scorer.py --check      # trains again and says whether the shipped file is the same

What it is trained on: every keyed set there is, each issue read by the bundled distributed rubric, against its
answer key's type (feature, enhancement; bug, question and other are "not a request"):
- with the real issues' texts beside the repository (`../shared/eval/dev.jsonl`, `dev2.jsonl`; their keys ship in
  `examples/answer-keys/`): dev + dev2 + the invented sets 6-13 (`examples/invented-sets/`), 897 issues;
- without them (a user's clone): the invented sets 6-13 only, 570 issues, and the file says so in `trained.on`.
  (Trained only on invented writers, a model types real issues badly: measure before you ship one.)
Never a sealed set: only the sets named in `SETS` are read.

How: the features of `triage.reading.features` (hashed word uni- and bigrams of title, prose and comments with
identifiers masked; the text's shape; the rubric's four step-4 scores), keeping only the n-gram buckets seen in at
least `MIN_DF` training issues. Two L2-regularised logistic regressions (scikit-learn's lbfgs, class-balanced):
request vs not over every issue, feature vs enhancement over the requests. Each issue is also trained on a second
time with the rubric's scores zeroed, as if the rubric had read nothing in it: a writer the rubric's phrases were not
written for looks like that, and the words must then carry the decision alone (leave-one-writer-out, this raised
the left-out writers' right type; bench/leave_one_writer_out.py). The settings in `SETTINGS` were chosen by those
figures. Deterministic: the same data and library versions write the same file.

Imports: the standard library, numpy, scipy and scikit-learn (here only), and the project (`triage`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triage.config.bundle import load_bundle  # noqa: E402
from triage.core.request_type import rubric_scores, weigh_all  # noqa: E402
from triage.core.steps import analyse  # noqa: E402
from triage.evaluation.answer_key import read_key  # noqa: E402
from triage.evaluation.dataset import read_dataset  # noqa: E402
from triage.reading.features import REQUEST_SCORES, RUBRIC_SCORES, bucket, type_features  # noqa: E402
from triage.reading.scorer import FORMAT, pack  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"
OUT = ROOT / "triage" / "reading" / "types-v1.json"
# writer -> (dataset, answer key); the real sets' texts are not in the repository.
SETS = {
    "dev": (SHARED / "dev.jsonl", ROOT / "examples/answer-keys/distributed-dev.jsonl"),
    "dev2": (SHARED / "dev2.jsonl", ROOT / "examples/answer-keys/distributed-dev2.jsonl"),
    **{f"set{n}": (ROOT / f"examples/invented-sets/set{n}/issues.jsonl",
                   ROOT / f"examples/invented-sets/set{n}/key.jsonl") for n in range(6, 14)},
}
REAL = ("dev", "dev2")
SETTINGS = {"bits": 18, "min_df": 2, "c_request": 1.0, "c_feature": 1.0, "request_threshold": 0.8,
            "feature_threshold": 0.5, "rubric_blind_copies": True}


@dataclass(frozen=True)
class Example:
    writer: str
    id: str
    features: dict[str, float]
    type: str  # the key's: feature, enhancement, bug, question, other


def available(names=tuple(SETS)) -> list[str]:
    return [name for name in names if SETS[name][0].is_file() and SETS[name][1].is_file()]


def read_examples(names, bundle=None) -> list[Example]:
    """Each issue of the named sets, read by the rubric as step 4 reads it."""
    bundle = bundle or load_bundle()
    rubric = bundle.rubric
    out = []
    for name in names:
        dataset, key_path = SETS[name]
        key = read_key(key_path)
        for row in read_dataset(dataset):
            analysis = analyse(row.snapshot, rubric, bundle.templates.names)
            scores = rubric_scores(weigh_all(analysis.doc, rubric))
            out.append(Example(name, row.id, type_features(analysis.doc, scores), key[row.id].type))
    return out


def train(examples: list[Example], settings: dict | None = None, on: list[str] | None = None) -> dict:
    """The model file's content (`triage.reading.scorer.parse_scorer` reads it)."""
    import numpy as np
    import scipy.sparse as sp
    import sklearn
    from sklearn.linear_model import LogisticRegression

    s = {**SETTINGS, **(settings or {})}
    bits = s["bits"]
    rows = [{bucket(name, bits): 0.0 for name in ex.features} for ex in examples]
    for row, ex in zip(rows, examples):
        for name, value in ex.features.items():
            row[bucket(name, bits)] += value
    rubric_buckets = {bucket(name, bits) for ex in examples for name in ex.features if name.startswith("rubric:")}
    df: dict[int, int] = {}
    for row in rows:
        for b in row:
            df[b] = df.get(b, 0) + 1
    kept = sorted(b for b, n in df.items() if n >= s["min_df"] or b in rubric_buckets)
    column = {b: i for i, b in enumerate(kept)}

    # The request model reads the request check's scores only (the others are weighed for a request alone).
    not_for_request = {bucket("rubric:" + name, bits) for name in RUBRIC_SCORES if name not in REQUEST_SCORES}

    def matrix(blind: bool, drop=frozenset()):
        data, ind, ptr = [], [], [0]
        for row in rows:
            for b, value in row.items():
                if b in column and b not in drop and not (blind and b in rubric_buckets):
                    data.append(value)
                    ind.append(column[b])
            ptr.append(len(data))
        return sp.csr_matrix((data, ind, ptr), shape=(len(rows), len(kept)))

    X, X_request = matrix(False), matrix(False, not_for_request)
    is_request = np.array([ex.type in ("feature", "enhancement") for ex in examples], dtype=int)
    is_feature = np.array([ex.type == "feature" for ex in examples], dtype=int)
    if s["rubric_blind_copies"]:
        X, X_request = sp.vstack([X, matrix(True)]).tocsr(), sp.vstack([X_request, matrix(True)]).tocsr()
        is_request, is_feature = np.concatenate([is_request, is_request]), np.concatenate([is_feature, is_feature])

    def fit(X, y, c):
        model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced", tol=1e-6)
        model.fit(X, y)
        return model

    requests = is_request == 1
    m_request = fit(X_request, is_request, s["c_request"])
    m_feature = fit(X[requests], is_feature[requests], s["c_feature"])

    def linear(model, threshold):
        weights = {kept[i]: float(w) for i, w in enumerate(model.coef_[0]) if abs(w) >= 5e-6}  # the rest: noise
        return {"bias": round(float(model.intercept_[0]), 6), "threshold": threshold, **pack(weights)}

    writers = on or sorted({ex.writer for ex in examples})
    counts = {w: sum(1 for ex in examples if ex.writer == w) for w in writers}
    return {
        "format": FORMAT,
        "bits": bits,
        "trained": {
            "by": "scripts/train_type_scorer.py",
            "on": counts,
            "real_issues_included": any(w in REAL for w in writers),
            "settings": s,
            "library": f"scikit-learn {sklearn.__version__}, numpy {np.__version__}",
        },
        "request": linear(m_request, s["request_threshold"]),
        "feature": linear(m_feature, s["feature_threshold"]),
    }


def write(model: dict, path: Path = OUT) -> None:
    path.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="train and compare with the file; write nothing")
    args = parser.parse_args(argv)
    names = available()
    if not all(name in names for name in REAL):
        print("the real sets' texts are not beside the repository: training on the invented sets only",
              file=sys.stderr)
    model = train(read_examples(names), on=names)
    if args.check:
        same = json.loads(args.out.read_text(encoding="utf-8")) == model
        print(f"{args.out}: {'the same' if same else 'DIFFERENT'} (trained on {', '.join(names)})")
        return 0 if same else 1
    write(model, args.out)
    print(f"wrote {args.out}: trained on {', '.join(names)} "
          f"({sum(model['trained']['on'].values())} issues); "
          f"{len(model['request']['weights']) // 8} + {len(model['feature']['weights']) // 8} weights")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
