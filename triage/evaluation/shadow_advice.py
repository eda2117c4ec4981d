"""What to change, read from the queue's own history: shadow's advice beside its figures.

Pure; everything is counted over the issues people have triaged in the window (`triaged`, with each one's
per-step verdicts from `triage.evaluation.shadow_steps.verdicts`):
- `labels`: for each module, type and reproduction label the bot would add or people gave, how often each side
  did. A label people (almost) never give (`rarely_used`: on at most RARE_SHARE of their issues, while the bot
  would add it at least RARE_FACTOR times as often) is one to stop the bot adding: for a type label the report
  gives the configuration line that does it (labels.json `disabled`, or the same key under `labels:` in a
  repository's `.github/ptd-triage.yml`);
- `high_priority_table`: step 5's operating point on this history: per threshold, people's `high priority` issues
  the bot would hold (caught, missed) and its holds of others (extra), from the score each plan keeps (the test
  step 5 applies: score >= threshold and > 0), with the threshold the history suggests (`suggest_threshold`) and
  the line to set;
- `confusions`: routing and module disagreements grouped by what people chose against what the bot chose (for
  modules: the labels people gave and the bot did not, against those the bot added and people did not), with the
  words of the issues behind the bot's choice;
- `disagreements_by_step`: every disagreement, step by step, in plain words (routes, modules, criteria by name,
  quotes of the issue; the comment the bot would post): the report shows a screen of each, the JSON keeps all.

May import: the standard library, `triage.evaluation.*`, `triage.config.labels`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Mapping, Sequence

from triage.config.labels import Role
from triage.evaluation.cases import Case, added_labels, high_priority_score
from triage.evaluation.key_figures import flagged_at
from triage.evaluation.report import DEFAULT_THRESHOLDS
from triage.evaluation.shadow_words import criterion_words, step_words

LABEL_ROLES = (Role.TYPE, Role.MODULE, Role.REPRODUCTION)
SIGNALS = 3  # quotes kept per confusion
RARE_SHARE = 0.02  # people give a label on at most 1 issue in 50...
RARE_FACTOR = 3  # ...and the bot would add it at least 3 times as often: people of this queue do not use it


def advice(triaged: Sequence[Case], all_verdicts: Sequence[dict], bundle, scoring, words: Mapping[str, dict], *,
           urls: Mapping[str, str]) -> dict[str, Any]:
    return {
        "labels": label_usage(triaged, bundle),
        "disable_line": disable_line(triaged, bundle),
        "high_priority_table": high_priority_table(triaged, bundle),
        "confusions": confusions(triaged, all_verdicts, words),
        "disagreements_by_step": by_step(triaged, all_verdicts, words, urls),
    }


def label_usage(triaged: Sequence[Case], bundle) -> list[dict[str, Any]]:
    """Per label of the roles the bot writes with judgement (type, module, reproduction): on how many of the
    triaged issues the bot would add it, people gave it, and both; `never_used`: the bot would add it and people
    never gave it; `rarely_used`: see the module doc (never used is rarely used)."""
    labels = bundle.labels
    rows = []
    for spec in labels.specs:
        if spec.role not in LABEL_ROLES:
            continue
        bot = [spec.name in added_labels(case) for case in triaged]
        people = [spec.name in case.gold.labels for case in triaged]
        if not any(bot) and not any(people) and spec.name not in labels.disabled:
            continue
        rows.append({"label": spec.name, "role": str(spec.role), "kind": spec.kind, "bot_adds": sum(bot),
                     "people_apply": sum(people),
                     "both": sum(b and p for b, p in zip(bot, people)), "of": len(triaged),
                     "disabled": spec.name in labels.disabled, "never_used": any(bot) and not any(people),
                     "rarely_used": _rare(sum(bot), sum(people), len(triaged))})
    return sorted(rows, key=lambda r: (not r["rarely_used"], -r["bot_adds"] + r["both"], r["label"]))


def _rare(bot: int, people: int, of: int) -> bool:
    return bot > 0 and people <= RARE_SHARE * of and bot >= RARE_FACTOR * max(people, 1) or bot > 0 and people == 0


def rarely_used_types(triaged: Sequence[Case], bundle) -> list[str]:
    """The type labels the bot would add that people (almost) never give."""
    return [row["label"] for row in label_usage(triaged, bundle) if row["rarely_used"] and row["role"] == Role.TYPE]


def disable_line(triaged: Sequence[Case], bundle) -> dict[str, Any] | None:
    """The one line that stops the bot adding the type labels people (almost) never give, in the two places a
    queue is configured; None when there are none."""
    never = rarely_used_types(triaged, bundle)
    if not never:
        return None
    names = [s.name for s in bundle.labels.specs if s.name in set(never) | bundle.labels.disabled]
    listed = json.dumps(names, ensure_ascii=False)
    return {"labels": never, "labels_json": f'"disabled": {listed}',
            "repository_file": f"labels: {{disabled: {listed}}}"}


def high_priority_table(triaged: Sequence[Case], bundle) -> dict[str, Any]:
    """Step 5's operating point over this history (see the module doc)."""
    current = float(bundle.rubric.high_priority.threshold)
    people = sum(case.gold.high_priority for case in triaged)
    scored = sum(high_priority_score(case) is not None for case in triaged)
    rows = []
    for threshold in sorted(set(DEFAULT_THRESHOLDS) | {current}):
        caught = sum(case.gold.high_priority and flagged_at(case, threshold) for case in triaged)
        extra = sum(not case.gold.high_priority and flagged_at(case, threshold) for case in triaged)
        rows.append({"threshold": threshold, "caught": caught, "missed": people - caught, "extra": extra,
                     "current": threshold == current})
    return {"threshold": current, "people_flagged": people, "scored": scored, "rows": rows,
            "suggested": suggest_threshold(rows, current)}


def suggest_threshold(rows: Sequence[dict], current: float) -> float | None:
    """The threshold this history argues for: the one that best trades people's high-priority issues held against
    holds of others (the most caught - extra), at least one caught; on a tie the one nearest the current
    threshold, then the higher. None when no threshold catches any."""
    useful = [row for row in rows if row["caught"] > 0]
    if not useful:
        return None
    best = max(useful, key=lambda r: (r["caught"] - r["extra"], -abs(r["threshold"] - current), r["threshold"]))
    return best["threshold"]


def _quotes(case_words: Mapping[str, list[str]] | None, step: int) -> list[str]:
    return list((case_words or {}).get(str(step), []))


def confusions(triaged: Sequence[Case], all_verdicts: Sequence[dict], words: Mapping[str, dict]) -> dict[str, list]:
    """Routing and module disagreements grouped by (people's, the bot's), most frequent first, each with the
    words that most often moved the bot."""
    groups: dict[str, dict[tuple, dict]] = {"routing": {}, "modules": {}}
    for case, verdict in zip(triaged, all_verdicts):
        pairs = []
        if "routing" in verdict and not verdict["routing"]["agree"]:
            pairs.append(("routing", verdict["routing"]["people"], verdict["routing"]["bot"], 2))
        if "modules" in verdict and not verdict["modules"]["agree"]:
            people, bot = set(verdict["modules"]["people"]), set(verdict["modules"]["bot"])
            pairs.append(("modules", ", ".join(sorted(people - bot)) or "none",
                          ", ".join(sorted(bot - people)) or "none", 3))
        for kind, people_said, bot_said, step in pairs:
            group = groups[kind].setdefault((people_said, bot_said), {"people": people_said, "bot": bot_said,
                                                                     "issues": [], "signals": Counter()})
            group["issues"].append(case.id)
            group["signals"].update(_quotes(words.get(case.id), step))
    return {kind: [{**g, "count": len(g["issues"]), "signals": [q for q, _ in g["signals"].most_common(SIGNALS)]}
                   for g in sorted(found.values(), key=lambda g: (-len(g["issues"]), g["people"], g["bot"]))]
            for kind, found in groups.items()}


def _said(step: str, verdict: dict, plan: dict) -> tuple[str, str]:
    """(the bot's answer, people's) in words."""
    bot, people = verdict["bot"], verdict["people"]
    if step == "flag":
        criteria = ", ".join(criterion_words(c) for c in step_words(plan, 5).get("criteria") or ())
        held = f"held for a person ({criteria})" if criteria else "held for a person"
        return (held if bot else "not held"), ("high priority" if people else "not high priority")
    if step == "reproduction":
        return ("asks for a reproduction" if bot else "does not ask"), ("asked" if people else "did not ask")
    if isinstance(bot, list):
        return ", ".join(bot) or "none", ", ".join(people) or "none"
    return ("no route" if bot == "none" else str(bot)), str(people)


def _kind(step: str, verdict: dict) -> str:
    """Whether the bot missed what people did, or did more (a wrong route or label is both: "wrong")."""
    bot, people = verdict["bot"], verdict["people"]
    if isinstance(bot, bool):
        return "extra" if bot else "missed"
    if isinstance(bot, list):
        return "missed" if set(bot) < set(people) else "extra" if set(people) < set(bot) else "wrong"
    return "missed" if bot == "none" else "wrong"


def by_step(triaged: Sequence[Case], all_verdicts: Sequence[dict], words: Mapping[str, dict],
            urls: Mapping[str, str]) -> dict[str, list[dict]]:
    """Every disagreement, per step, in plain words: missed ones first, then wrong, then extra."""
    numbers = {"routing": 2, "modules": 3, "type": 4, "flag": 5, "reproduction": 6}
    out: dict[str, list[dict]] = {step: [] for step in numbers}
    for case, verdict in zip(triaged, all_verdicts):
        for step, value in verdict.items():
            if value["agree"]:
                continue
            bot, people = _said(step, value, dict(case.plan))
            comment = case.plan.get("comment")
            out[step].append({"id": case.id, "url": urls.get(case.id, ""), "title": case.title,
                              "kind": _kind(step, value), "bot": bot, "people": people,
                              "because": _quotes(words.get(case.id), numbers[step]),
                              "score": step_words(dict(case.plan), numbers[step]).get("score"),
                              "comment": comment if step == "reproduction" else None})
    order = {"missed": 0, "wrong": 1, "extra": 2}
    return {step: sorted(items, key=lambda i: order[i["kind"]]) for step, items in out.items()}
