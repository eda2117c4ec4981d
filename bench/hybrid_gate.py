"""When the hybrid planner would ask the model, measured on eval datasets with a procedure answer key.

    python bench/hybrid_gate.py [--gate]              # ../shared/eval dev + dev2 with their keys
    python bench/hybrid_gate.py [--gate] DATA.jsonl KEY.jsonl [DATA KEY ...]

`--gate`: as with `hybrid: {gate: true}` (ask only where a trigger fires); without it, the rubric's own settings
(the bundled `gate: false` asks about every issue whose steps 4 and 5 run).

No model is called: the gate (`triage.planners.hybrid.uncertain_steps`) decides from the rubric's plan alone, so
what it would send is measured exactly. Per dataset and per fixed half (`triage.evaluation.figures.half_of`):
- asked: the share of issues for which the model would be asked anything (any step), and for step 5 (the same
  share since issue 28: whenever the model is asked, its reading of steps 4 and 5 decides);
- step 5 seen: of the key's high-priority issues, the share the rubric flags or the gate sends to the model at
  step 5 (goal >= 0.95: the gate must not hide a high-priority issue from the model);
- rubric hp recall (all, and over the key's `sure: high` lines) and false flags, for reference.
Goals: step 5 seen >= 0.95 (issue 17); asked <= 0.60 (issue 28: every issue the rubric flags, every request it
finds and every bug report with a failure cue is asked; measured dev 0.679, dev2 0.601).

Imports: the standard library and the project (`triage`). Nothing here is imported by the package or the tests.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triage.config.bundle import load_bundle  # noqa: E402
from triage.core.procedure import reached_judgement  # noqa: E402
from triage.evaluation.dataset import read_dataset  # noqa: E402
from triage.evaluation.figures import half_of  # noqa: E402
from triage.planners import plan_issue  # noqa: E402
from triage.planners.hybrid import HybridSettings, uncertain_steps  # noqa: E402

SHARED = ROOT.parent / "shared" / "eval"
DEFAULT = [(SHARED / "dev.jsonl", ROOT / "examples" / "answer-keys" / "distributed-dev.jsonl"),
           (SHARED / "dev2.jsonl", ROOT / "examples" / "answer-keys" / "distributed-dev2.jsonl")]


def _ratio(n: int, d: int) -> str:
    return f"{n / d:.3f} ({n}/{d})" if d else "n/a"


def measure(data: Path, key_path: Path, bundle, gate: bool | None = None) -> dict[str, dict[str, int]]:
    key = {json.loads(line)["id"]: json.loads(line) for line in key_path.read_text(encoding="utf-8").splitlines() if line.strip()}
    settings = HybridSettings.from_rubric(bundle.rubric)
    if gate is not None:
        settings = dataclasses.replace(settings, gate=gate)
    counts: dict[str, dict[str, int]] = {}
    for row in read_dataset(data):
        entry = key[row.id]
        plan = plan_issue(row.snapshot, bundle)
        # As the planner does: nothing is asked about an issue on which the procedure reached no judgement.
        take = uncertain_steps(row.snapshot, bundle, plan, settings)[0] if reached_judgement(plan.steps) else ()
        flagged = plan.outcome == "high_priority"
        for half in ("all", half_of(row.id)):
            c = counts.setdefault(half, dict.fromkeys(
                ("n", "asked", "asked5", "hp", "seen", "tp", "sure", "sure_tp", "other", "ff"), 0))
            c["n"] += 1
            c["asked"] += bool(take)
            c["asked5"] += 5 in take
            if entry["high_priority"]:
                c["hp"] += 1
                c["tp"] += flagged
                c["seen"] += flagged or 5 in take
                if entry.get("sure") == "high":
                    c["sure"] += 1
                    c["sure_tp"] += flagged
            else:
                c["other"] += 1
                c["ff"] += flagged
    return counts


def main(argv: list[str]) -> int:
    gate = True if "--gate" in argv else None
    argv = [a for a in argv if a != "--gate"]
    pairs = [(Path(a), Path(b)) for a, b in zip(argv[::2], argv[1::2])] if argv else DEFAULT
    missing = [str(p) for pair in pairs for p in pair if not p.is_file()]
    if missing:
        print(f"bench/hybrid_gate.py: not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    bundle = load_bundle()
    print("| dataset | half | asked (any step) | asked at step 5 | step-5 issues seen | rubric hp recall | "
          "recall, sure: high | false flags |")
    print("|---|---|---|---|---|---|---|---|")
    for data, key in pairs:
        counts = measure(data, key, bundle, gate)
        for half in ("A", "B", "all"):
            c = counts.get(half)
            if c:
                print(f"| {data.name} | {half} | {_ratio(c['asked'], c['n'])} | {_ratio(c['asked5'], c['n'])} | "
                      f"{_ratio(c['seen'], c['hp'])} | {_ratio(c['tp'], c['hp'])} | {_ratio(c['sure_tp'], c['sure'])} | "
                      f"{_ratio(c['ff'], c['other'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
