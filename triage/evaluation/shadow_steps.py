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
Each step also counts what decides whether to let it write (`caught`, `missed`, `extra`, precision and recall):
agreement on issues where neither side did anything is not evidence, so the step's `rate` is kept for the JSON
but is never the report's headline. Issues nobody has triaged yet are "not yet triaged by people": planned (what
the bot would have written counts them) but in no step and never a disagreement. What to change, and the verdict
per step, are `triage.evaluation.shadow_advice` and `triage.evaluation.shadow_verdicts`.

May import: the standard library, `triage.evaluation.*`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from triage.evaluation.cases import Case, added_labels, labels_after
from triage.evaluation.figures import evaluate, module_scored, ratio
from triage.evaluation.scoring import (NO_ROUTE, Scoring, expected_route, flagged_high_priority, predicted_modules,
                                      predicted_route, request_kinds, route_correct, scoring_from_bundle)
from triage.evaluation.shadow_advice import advice
from triage.evaluation.shadow_verdicts import next_step, step_verdicts

CANNOT_REBUILD = ("titles and bodies are as they are today: the REST API keeps no history of an issue's body, so "
                  "an issue edited after it entered the queue is planned on its edited text")
STEPS = ("routing", "modules", "type", "flag", "reproduction")
STEP_NUMBERS = {"routing": 2, "modules": 3, "type": 4, "flag": 5, "reproduction": 6}
# The model's budget of calls (llm-max-calls) is a limit the user set, not a failure: the rubric plans the rest.
BUDGET_FALLBACK = "LLMBudgetExhausted"


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


def decision_counts(step: str, scored: Sequence[dict]) -> dict[str, Any]:
    """What decides whether to let a step write: `caught` (the bot did what people did), `missed` (people did,
    the bot did not: a wrong route is missed and extra), `extra` (the bot did what people did not)."""
    caught = missed = extra = 0
    for v in scored:
        if step == "routing":
            right = bool(v["agree"])
            caught, missed, extra = caught + right, missed + (not right), extra + (not right and v["bot"] != NO_ROUTE)
        elif isinstance(v["bot"], list):  # label sets: modules, type
            bot, people = set(v["bot"]), set(v["people"])
            caught, missed, extra = caught + len(bot & people), missed + len(people - bot), extra + len(bot - people)
        else:  # yes or no: flag, reproduction
            caught += v["bot"] and v["people"]
            missed += v["people"] and not v["bot"]
            extra += v["bot"] and not v["people"]
    return {"caught": caught, "missed": missed, "extra": extra, "precision": ratio(caught, caught + extra),
            "recall": ratio(caught, caught + missed)}


def step_figures(all_verdicts: Sequence[dict[str, dict]], figures: dict[str, Any]) -> dict[str, dict]:
    """{"agree", "total", "caught", "missed", "extra", "precision", "recall"} per step, with eval's figures where
    it has them (confusion, module precision and recall)."""
    steps: dict[str, dict] = {}
    for step in STEPS:
        scored = [v[step] for v in all_verdicts if step in v]
        steps[step] = {"agree": sum(v["agree"] for v in scored), "total": len(scored), **decision_counts(step, scored)}
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


def planners(cases: Sequence[Case], asked: str) -> dict[str, Any]:
    """Which planner decided what: per step, the plans whose step was decided by each planner; and the issues on
    which a model was asked for but its plan was not used (`fallbacks`; `failed`: not for the call budget)."""
    by_step: dict[str, Counter] = {step: Counter() for step in STEPS}
    reasons: Counter = Counter()
    fell_back: list[str] = []
    failed = 0
    for case in cases:
        for item in case.plan.get("steps") or ():
            for step, number in STEP_NUMBERS.items():
                if item.get("step") == number and item.get("decision") != "skipped":
                    by_step[step][str(item.get("by") or case.plan.get("planner") or "rubric")] += 1
        usage = case.plan.get("usage")
        reason = usage.get("fallback") if isinstance(usage, dict) else None
        if reason:
            fell_back.append(case.id)
            reasons[str(reason)] += 1
            failed += not str(reason).startswith(BUDGET_FALLBACK)
    return {"asked": asked, "issues": len(cases), "fallbacks": len(fell_back), "failed": failed,
            "fallback_issues": fell_back, "fallback_reasons": [{"reason": r, "issues": n}
                                                               for r, n in reasons.most_common()],
            "by_step": {step: dict(counts.most_common()) for step, counts in by_step.items()}}


def shadow_document(run, cases: Sequence[Case], bundle, *, requests: Mapping[str, Any], planner: str = "rubric",
                    words: Mapping[str, dict] | None = None) -> dict[str, Any]:
    """The whole report as a JSON-able document (`--json`); the text and Markdown reports render it. `words`: per
    issue, what each step read in plain words (`triage.evaluation.shadow_words.evidence_words`)."""
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
    steps = step_figures(all_verdicts, figures)
    decided = planners(cases, planner)
    for step, counts in decided["by_step"].items():
        steps[step]["decided_by"] = counts
    advised = advice(triaged, all_verdicts, bundle, scoring, words or {}, urls=run.urls)
    lines = config_lines(advised)
    verdict = step_verdicts(steps, advised, planner=planner, lines=lines)
    return {
        "repo": window.repo, "since": window.since, "until": window.until, "planner": planner, "query": run.query,
        "issues": len(cases), "triaged_by_people": len(triaged), "not_yet_triaged": run.not_yet_triaged,
        "opted_out": len(run.opted_out), "opted_out_issues": list(run.opted_out),
        "skipped": list(run.skipped), "notes": list(run.notes), "failed": run.failed,
        "found": run.found, "examined": run.examined, "outside_window": run.outside, "from_cache": run.cached,
        "left": run.left, "stopped": run.stopped, "requests": requests.get("requests", 0),
        "requests_by_endpoint": dict(requests),
        "planners": decided,
        "steps": steps,
        "verdicts": verdict,
        "next": next_step(verdict),
        "lines": lines,
        **advised,
        "outcomes": figures["outcomes"],
        "disagreements": disagreements,
        "would_write": {"labels": sum(len(item["labels"]) for item in would),
                        "comments": sum(item["comment"] is not None for item in would),
                        "issues": [item for item in would if item["labels"] or item["comment"]]},
        "cannot_rebuild": _cannot_rebuild(run),
    }


def config_lines(advised: Mapping[str, Any]) -> dict[str, str | None]:
    """The configuration lines the report offers, in a queue folder's files and in a repository's
    `.github/ptd-triage.yml` (the same keys, nested)."""
    disable, table = advised.get("disable_line"), advised["high_priority_table"]
    suggested = table.get("suggested")
    change = suggested is not None and suggested != table["threshold"]
    return {"disable": f"labels.json: {disable['labels_json']}" if disable else None,
            "disable_repository": f".github/ptd-triage.yml: {disable['repository_file']}" if disable else None,
            "threshold": f"rubric.yaml: high_priority: threshold: {suggested:g}" if change else None,
            "threshold_repository": (f".github/ptd-triage.yml: rubric: {{high_priority: {{threshold: {suggested:g}}}}}"
                                     if change else None)}


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
