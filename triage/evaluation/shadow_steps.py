"""Shadow's comparison, per step, of the bot's plans with what people did, and the report document it makes.

Pure. The figures are eval's (`triage.evaluation.figures.evaluate` over the issues people have triaged, in the
configuration's terms from `triage.evaluation.scoring`); each issue's verdict per step is read with the same
helpers, so a disagreement listed is one a figure counts:
- routing: the sub-oncall the issue ends up with against people's (over issues people routed);
- modules: the module labels against people's, exactly (over issues routed in gold to a route that classifies
  modules, with people's module labels), plus eval's micro precision and recall;
- type: the request-kind labels (feature, enhancement) against people's, none counting as an answer;
- flag: the bot's high-priority hold (the review label without the marker) against a person's `high priority`;
- reproduction: the bot's reproduction request against people's reproduction label.
Issues nobody has triaged yet are "not yet triaged by people": planned (what the bot would have written counts
them) but in no step and never a disagreement.

May import: the standard library, `triage.evaluation.*`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from triage.evaluation.cases import Case, added_labels, labels_after
from triage.evaluation.figures import evaluate, module_scored
from triage.evaluation.scoring import (Scoring, expected_route, flagged_high_priority, predicted_modules,
                                      predicted_route, request_kinds, route_correct, scoring_from_bundle)

CANNOT_REBUILD = ("titles and bodies are as they are today: the REST API keeps no history of an issue's body, so "
                  "an issue edited after it entered the queue is planned on its edited text")
STEPS = ("routing", "modules", "type", "flag", "reproduction")


def verdicts(case: Case, scoring: Scoring, reproduction_label: str, people_asked: bool) -> dict[str, dict]:
    """Step -> {"agree", "bot", "people"} for each step this issue is scored on."""
    gold = case.gold
    found: dict[str, dict] = {}
    if gold.route is not None:
        planned = predicted_route(case, scoring)
        found["routing"] = {"agree": route_correct(gold.route, planned, scoring), "bot": planned,
                            "people": expected_route(gold.route, scoring)}
    if module_scored(case, scoring):
        want = sorted(m for m in gold.modules if m in scoring.modules)
        got = sorted(predicted_modules(case, scoring))
        found["modules"] = {"agree": want == got, "bot": got, "people": want}
    kinds = sorted(request_kinds(case, scoring))
    found["type"] = {"agree": kinds == ([gold.type] if gold.type else []), "bot": kinds,
                     "people": [gold.type] if gold.type else []}
    held = flagged_high_priority(case, scoring)
    found["flag"] = {"agree": held == gold.high_priority, "bot": held, "people": gold.high_priority}
    asked = reproduction_label in labels_after(case)
    found["reproduction"] = {"agree": asked == people_asked, "bot": asked, "people": people_asked}
    return found


def step_figures(all_verdicts: Sequence[dict[str, dict]], figures: dict[str, Any]) -> dict[str, dict]:
    """{"agree", "total"} per step, with eval's figures where it has them (confusion, precision and recall)."""
    steps: dict[str, dict] = {}
    for step in STEPS:
        scored = [v[step] for v in all_verdicts if step in v]
        steps[step] = {"agree": sum(v["agree"] for v in scored), "total": len(scored)}
    routing = figures["routing"]
    steps["routing"].update(columns=routing["columns"], confusion=routing["confusion"])
    micro = figures["modules"]["micro"]
    steps["modules"].update({key: micro[key] for key in ("tp", "fp", "fn", "precision", "recall", "f1")})
    steps["type"]["kinds"] = figures["types"]
    hp = figures["high_priority"]
    steps["flag"].update(people_flagged=hp["gold"], bot_held_of_those=hp["flagged"], bot_held_others=hp["false_flags"])
    repro = [v["reproduction"] for v in all_verdicts]
    steps["reproduction"].update(people_asked=sum(v["people"] for v in repro), bot_asked=sum(v["bot"] for v in repro),
                                 both=sum(v["people"] and v["bot"] for v in repro))
    for value in steps.values():
        value["rate"] = value["agree"] / value["total"] if value["total"] else None
    return steps


def shadow_document(run, cases: Sequence[Case], bundle, *, requests: Mapping[str, Any],
                    planner: str = "rubric") -> dict[str, Any]:
    """The whole report as a JSON-able document (`--json`); the text and Markdown reports render it."""
    scoring = scoring_from_bundle(bundle)
    triaged = [case for case in cases if run.triaged[case.id]]
    all_verdicts = [verdicts(case, scoring, bundle.labels.reproduction, run.reproduction[case.id])
                    for case in triaged]
    figures = evaluate(triaged, scoring)
    disagreements = []
    for case, verdict in zip(triaged, all_verdicts):
        wrong = {step: {"bot": v["bot"], "people": v["people"]} for step, v in verdict.items() if not v["agree"]}
        if wrong:
            disagreements.append({"id": case.id, "url": run.urls.get(case.id, ""), "title": case.title,
                                  "steps": wrong, "bot": _bot(case), "people": list(case.gold.labels)})
    would = [{"id": case.id, "url": run.urls.get(case.id, ""), "title": case.title,
              "triaged_by_people": run.triaged[case.id], **_bot(case)} for case in cases]
    window = run.window
    return {
        "repo": window.repo, "since": window.since, "until": window.until, "planner": planner, "query": run.query,
        "issues": len(cases), "triaged_by_people": len(triaged), "not_yet_triaged": run.not_yet_triaged,
        "found": run.found, "examined": run.examined, "outside_window": run.outside, "from_cache": run.cached,
        "left": run.left, "stopped": run.stopped, "requests": requests.get("requests", 0),
        "requests_by_endpoint": dict(requests),
        "steps": step_figures(all_verdicts, figures),
        "outcomes": figures["outcomes"],
        "disagreements": disagreements,
        "would_write": {"labels": sum(len(item["labels"]) for item in would),
                        "comments": sum(item["comment"] is not None for item in would),
                        "issues": [item for item in would if item["labels"] or item["comment"]]},
        "cannot_rebuild": _cannot_rebuild(run),
    }


def _bot(case: Case) -> dict[str, Any]:
    comment = case.plan.get("comment")
    return {"labels": added_labels(case), "comment": comment["template"] if comment else None,
            "outcome": case.plan.get("outcome"), "reasons": list(case.plan.get("reasons") or ())}


def _cannot_rebuild(run) -> list[str]:
    notes = [CANNOT_REBUILD]
    if run.edited_comments:
        notes.append(f"{run.edited_comments} comment(s) the bot would have read were edited after they were "
                     "written: planned on their edited text")
    notes.append("an issue whose queue label was removed since is not found (the search sees today's labels)")
    return notes
