"""A verdict per step, from shadow's counts: is the bot ready to write this step live, ready with a change (which),
or should the step stay in dry run (or be given to a model)? docs/shadow.md states these rules; they are here once.

The counts are a step's `caught`, `missed` and `extra` over the issues people triaged (`shadow_steps`). A step
that writes labels or a comment (routing, modules, type, reproduction) is judged on what it would write: its
precision, caught / (caught + extra). A step is never ready on little evidence:
- fewer than MIN_CASES decisions of either side (caught + missed + extra): **too few cases** (keep the dry run,
  measure a longer window);
- precision at least READY_PRECISION over at least MIN_CASES writes: **ready to write live**;
- a change drawn from the history (type: disable the type labels people (almost) never give) after which what
  the step still writes has precision at least READY_PRECISION (the report says when that is fewer than
  MIN_CASES writes), or it writes nothing at all: **write with a change**;
- fewer than MIN_CASES writes (the bot rarely acts; people did): **too few cases**;
- otherwise: **keep in dry run**, or ask a model where the rubric is unsure (`planner: hybrid`).
The high-priority hold (flag) is a request for a person's look, so it is judged on both sides: people must have
marked at least MIN_CASES issues high priority (else **too few cases**); it is ready when it holds at least
HOLD_RECALL of them with no more extra holds than caught ones (precision HOLD_PRECISION); with a change when the
threshold the history suggests (`shadow_advice.suggest_threshold`) meets that bar; else keep in dry run.

Pure. May import: the standard library.
"""

from __future__ import annotations

from typing import Any, Mapping

MIN_CASES = 5
READY_PRECISION = 0.9
HOLD_RECALL = 0.5
HOLD_PRECISION = 0.5
WORDS = {"ready": "ready to write live", "change": "write with a change", "dry_run": "keep in dry run",
         "too_few": "too few cases"}
EVIDENCE = {"routing": "Routing below; JSON steps.routing, confusions.routing",
            "modules": "Modules below; JSON steps.modules, confusions.modules",
            "type": "Labels above; JSON labels, disagreements_by_step.type",
            "flag": "High priority above; JSON high_priority_table",
            "reproduction": "Reproduction below; JSON disagreements_by_step.reproduction"}
WRITING = ("routing", "modules", "type", "reproduction")
NAMES = {"flag": "high priority"}  # the steps as the report names them, where that differs


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _verdict(kind: str, why: str, do: str, lines: list[str], step: str, change: str | None = None
             ) -> dict[str, Any]:
    """`do`: what to do, in words; `lines`: the lines, inputs or commands that do it, in order (none: nothing to
    type); `why`: the counts that decided, in a few words."""
    return {"verdict": kind, "words": WORDS[kind], "why": why, "change": change, "do": do, "lines": lines,
            "evidence": EVIDENCE[step]}


def _too_few(why: str, step: str) -> dict[str, Any]:
    return _verdict("too_few", why, "measure a longer window", ["--since (shadow-since)"], step)


def _ready(why: str, step: str) -> dict[str, Any]:
    return _verdict("ready", why, "nothing to change", [], step)


def _dry_run(why: str, step: str, planner: str, first: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Keep the dry run; a change the history suggests comes first, then a model where the rubric is unsure."""
    before, lines = (f"{first['what']}, then ", [first["line"]]) if first else ("", [])
    if planner == "rubric":
        return _verdict("dry_run", why, f"{before}ask a model where the rubric is unsure", lines + ["planner: hybrid"],
                        step)
    return _verdict("dry_run", why, f"{before}keep the dry run; read the disagreements", lines, step)


def writing_verdict(step: str, s: Mapping[str, Any], *, planner: str, change: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    """The verdict of a step that writes (see the module doc). `change`: {"what", "line", "caught_removed",
    "extra_removed"}: what the change would take out of the step's counts."""
    caught, missed, extra = s["caught"], s["missed"], s["extra"]
    writes = caught + extra
    if caught + missed + extra < MIN_CASES:
        return _too_few(f"{caught + missed + extra} decisions, {MIN_CASES} needed", step)
    precision = _ratio(caught, writes)
    if writes >= MIN_CASES and precision is not None and precision >= READY_PRECISION:
        return _ready(f"{precision:.2f} of {writes} writes right", step)
    if change is not None:
        kept = caught - change["caught_removed"]
        left = writes - change["caught_removed"] - change["extra_removed"]
        after = _ratio(kept, left)
        if left == 0 or after is not None and after >= READY_PRECISION:
            few = f", few ({MIN_CASES} make a case)" if 0 < left < MIN_CASES else ""
            result = f"then {after:.2f} of {left} writes right{few}" if left else "then it writes nothing here"
            return _verdict("change", f"{change['what']}: {result}", change["what"], [change["line"]], step,
                            change=change["what"])
    if writes < MIN_CASES:
        return _too_few(f"{writes} writes, {MIN_CASES} needed", step)
    return _dry_run(f"{precision:.2f} of {writes} writes right", step, planner, change)


def _holds_ok(caught: int, missed: int, extra: int) -> bool:
    recall, precision = _ratio(caught, caught + missed), _ratio(caught, caught + extra)
    return recall is not None and recall >= HOLD_RECALL and precision is not None and precision >= HOLD_PRECISION


def flag_verdict(s: Mapping[str, Any], table: Mapping[str, Any], *, planner: str,
                 threshold_line: str | None) -> dict[str, Any]:
    caught, missed, extra = s["caught"], s["missed"], s["extra"]
    people = caught + missed
    if people < MIN_CASES:
        return _too_few(f"people marked {people}, {MIN_CASES} needed", "flag")
    why = f"holds {caught} of people's {people}, {extra} others"
    if _holds_ok(caught, missed, extra):
        return _ready(why, "flag")
    suggested = table.get("suggested")
    row = next((r for r in table.get("rows", ()) if r["threshold"] == suggested), None)
    if row is None or suggested == table.get("threshold") or not threshold_line:
        return _dry_run(why, "flag", planner)
    what = f"set the threshold to {suggested:g}"
    if _holds_ok(row["caught"], row["missed"], row["extra"]):
        return _verdict("change", f"{what}: then holds {row['caught']} of {people}, {row['extra']} others", what,
                        [threshold_line], "flag", change=what)
    return _dry_run(why, "flag", planner, {"what": what, "line": threshold_line})


def step_verdicts(steps: Mapping[str, Mapping[str, Any]], advised: Mapping[str, Any], *, planner: str,
                  lines: Mapping[str, str | None]) -> dict[str, dict[str, Any]]:
    """Step -> verdict. `lines`: the configuration lines the report offers (`disable`, `threshold`)."""
    out: dict[str, dict[str, Any]] = {}
    disable = advised.get("disable_line")
    for step in WRITING:
        change = None
        if step == "type" and disable and lines.get("disable"):
            counted = [row for row in advised["labels"]  # the type step counts these two kinds
                       if row["label"] in disable["labels"] and row["kind"] in ("feature", "enhancement")]
            change = {"what": "disable " + ", ".join(disable["labels"]), "line": lines["disable"],
                      "caught_removed": sum(row["both"] for row in counted),
                      "extra_removed": sum(row["bot_adds"] - row["both"] for row in counted)}
        out[step] = writing_verdict(step, steps[step], planner=planner, change=change)
    out["flag"] = flag_verdict(steps["flag"], advised["high_priority_table"], planner=planner,
                               threshold_line=lines.get("threshold"))
    return {step: out[step] for step in steps}


def next_step(verdicts: Mapping[str, Mapping[str, Any]]) -> str:
    """What to do first, in one line."""
    kinds = {v["verdict"] for v in verdicts.values()}
    if kinds == {"ready"}:
        return 'every step is ready: go live with PTD_TRIAGE_LIVE: "true" in the workflow'
    if "change" in kinds and kinds <= {"ready", "change"}:
        return ("make the change(s) below, run shadow again (from the cache it reads no issue again), then go live "
                'with PTD_TRIAGE_LIVE: "true"')
    waiting = [NAMES.get(step, step) for step, v in verdicts.items() if v["verdict"] in ("dry_run", "too_few")]
    return f"keep the dry run (PTD_TRIAGE_LIVE: \"false\"): {', '.join(waiting)} not ready"
