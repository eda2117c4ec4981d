"""The seed's procedure, one function per step (0-6). Each is pure and returns its decision
together with a one-line reason that names the evidence it rested on.

`analyse` reads the issue once (title, description, comments; see `triage.text.document`) and scores every
rubric topic; the steps then only look at those scores and at the issue's labels.
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.github.names import is_bot_account
from triage.config.labels import LabelSet
from triage.config.rubric import Gate, Rubric
from triage.text.matching import Evidence, score, summarize
from triage.core.snapshot import IssueSnapshot
from triage.config.templates import has_marker
from triage.text.document import Document, build_document


@dataclass(frozen=True)
class Analysis:
    doc: Document
    topic_scores: dict[str, float]
    topic_evidence: dict[str, list[Evidence]]

    @property
    def distributed_score(self) -> float:
        """All positive evidence that this is about distributed training at all."""
        return sum(max(s, 0.0) for s in self.topic_scores.values())


def _readable_comments(snapshot: IssueSnapshot, template_names) -> list[str]:
    """Comments by people: the repro or the real error often arrives there. Bots (our own
    earlier comments included) add no evidence about the issue."""
    out = []
    for comment in snapshot.comments:
        if is_bot_account(comment.author, comment.author_type):
            continue
        if any(has_marker(comment.body, name) for name in template_names):
            continue
        out.append(comment.body)
    return out


def analyse(snapshot: IssueSnapshot, rubric: Rubric, template_names=()) -> Analysis:
    doc = build_document(
        snapshot.title,
        snapshot.body,
        _readable_comments(snapshot, template_names),
        environment_heading=rubric.environment_heading,
        comment_separator=rubric.comment_separator,
    )
    return _score_topics(doc, rubric)


def _score_topics(doc: Document, rubric: Rubric) -> Analysis:
    scores, evidence = {}, {}
    for topic in rubric.topics:
        scores[topic.name], evidence[topic.name] = score(topic.signals, doc, rubric.locations)
    return Analysis(doc, scores, evidence)


def gate(g: Gate, analysis: Analysis, rubric: Rubric) -> tuple[bool, float, list[Evidence]]:
    total, evidence = score(g.signals, analysis.doc, rubric.locations)
    return total >= g.min_score and total > 0, total, evidence


# --- step 0 ---------------------------------------------------------------------------------------


def step0_already_triaged(snapshot: IssueSnapshot, labels: LabelSet) -> tuple[bool, str]:
    """A human classified it when it has both an allowlisted module label and a sub-oncall."""
    modules = [l for l in snapshot.labels if labels.role(l) == "module"]
    oncalls = [l for l in snapshot.labels if labels.role(l) == "sub-oncall"]
    if modules and oncalls:
        return True, f"step 0: already triaged by a human ({oncalls[0]}; {', '.join(modules)})"
    if modules or oncalls:
        return False, f"step 0: partly triaged ({', '.join(modules + oncalls)}), continuing"
    return False, "step 0: no module or sub-oncall label yet"


# --- step 1 ---------------------------------------------------------------------------------------


def step1_not_distributed(analysis: Analysis, rubric: Rubric) -> tuple[bool, str]:
    """Not distributed only when a known trap matches AND distributed evidence is weak: a wrong
    'not distributed' sends a real bug away, so both must hold."""
    trapped, trap_score, trap_evidence = gate(rubric.not_distributed, analysis, rubric)
    dist = analysis.distributed_score
    if trapped:
        # What the trap itself matched is not distributed evidence: `undefined symbol: ncclX` at
        # `import torch` names NCCL, yet it is a packaging problem. Score again without it.
        dist = _score_topics(analysis.doc.without([e.text for e in trap_evidence]), rubric).distributed_score
    if trapped and dist <= rubric.max_distributed_score:
        return True, (
            f"step 1: not distributed — trap score {trap_score:g} ({summarize(trap_evidence, 2)}), "
            f"distributed evidence only {dist:g}"
        )
    if trapped:
        return False, f"step 1: a not-distributed trap matched ({summarize(trap_evidence, 1)}) but distributed evidence is {dist:g}"
    return False, f"step 1: distributed (evidence {dist:g})"


# --- step 2 ---------------------------------------------------------------------------------------


def route_scores(snapshot: IssueSnapshot, analysis: Analysis, rubric: Rubric, labels: LabelSet):
    totals = {route: 0.0 for route in rubric.routes}
    evidence: dict[str, list[Evidence]] = {route: [] for route in rubric.routes}
    for topic in rubric.topics:
        # A topic's negative (disambiguating) signals can cancel that topic, not its whole route.
        points = analysis.topic_scores[topic.name]
        if points > 0:
            totals[topic.route] += points
            evidence[topic.route].extend(e for e in analysis.topic_evidence[topic.name] if e.points > 0)
    for route, rule in rubric.routes.items():
        points, found = score(rule.signals, analysis.doc, rubric.locations)
        totals[route] += points
        evidence[route].extend(found)
    # A module label already on the issue (the first-level bot adds some) is strong evidence.
    for name in snapshot.labels:
        route = labels.route(name) if labels.role(name) == "module" else None
        if route in totals:
            totals[route] += rubric.existing_module_weight
            evidence[route].append(Evidence("existing-label", "labels", name, rubric.existing_module_weight))
    return totals, evidence


def step2_route(snapshot: IssueSnapshot, analysis: Analysis, rubric: Rubric, labels: LabelSet) -> tuple[str, bool, str]:
    """Returns (route, already_present, reason). An existing sub-oncall is always kept."""
    for name in snapshot.labels:
        route = rubric.route_of_label(name)
        if route:
            return route, True, f"step 2: keeps existing sub-oncall '{name}'"
    totals, evidence = route_scores(snapshot, analysis, rubric, labels)
    # Precedence: a route earlier in the list wins when it has enough evidence of its own and is
    # not swamped by the routes after it (min_ratio of their best score).
    order = list(rubric.precedence)
    for i, route in enumerate(order):
        if route == rubric.default_route:
            continue
        rule = rubric.routes[route]
        later = max((totals[r] for r in order[i + 1 :]), default=0.0)
        if totals[route] >= rule.min_score and totals[route] > 0 and totals[route] >= rule.min_ratio * later:
            return route, False, (
                f"step 2: {route} (score {totals[route]:g} vs {later:g} for later routes): {summarize(evidence[route], 3)}"
            )
    route = rubric.default_route
    shown = ", ".join(f"{r} {totals[r]:g}" for r in order)
    how = "no other route qualified" if totals[route] > 0 else "by default, no evidence for any route"
    return route, False, f"step 2: {route} ({how}; {shown}): {summarize(evidence[route], 3)}"


# --- step 3 ---------------------------------------------------------------------------------------


def step3_modules(
    snapshot: IssueSnapshot, analysis: Analysis, rubric: Rubric, labels: LabelSet, route: str
) -> tuple[list[str], str, str]:
    """Module labels for the route, with HIGH/MEDIUM/LOW confidence. LOW picks nothing."""
    per_label: dict[str, float] = {}
    evidence: dict[str, list[Evidence]] = {}
    for topic in rubric.topics:
        if topic.label is None or topic.route != route:
            continue
        per_label[topic.label] = per_label.get(topic.label, 0.0) + analysis.topic_scores[topic.name]
        evidence.setdefault(topic.label, []).extend(analysis.topic_evidence[topic.name])
    existing = [l for l in snapshot.labels if labels.role(l) == "module" and labels.route(l) == route]
    for name in existing:
        per_label[name] = max(per_label.get(name, 0.0), rubric.module_high)
    ranked = sorted(per_label.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked or ranked[0][1] < rubric.module_medium:
        best = f"best {ranked[0][0]} {ranked[0][1]:g}" if ranked else "no candidates"
        return [], "low", f"step 3: module unclear ({best} < {rubric.module_medium:g}), no guess"
    top = ranked[0][1]
    chosen = [l for l, s in ranked if s >= rubric.module_medium and s >= rubric.module_min_share * top]
    confidence = "high" if top >= rubric.module_high else "medium"
    detail = "; ".join(f"{l} {per_label[l]:g}: {summarize(evidence.get(l, []), 2)}" for l in chosen)
    return chosen, confidence, f"step 3: {confidence} confidence — {detail}"


# --- step 4 ---------------------------------------------------------------------------------------


def step4_types(analysis: Analysis, rubric: Rubric, labels: LabelSet) -> tuple[list[str], str]:
    """feature (wholly new) or enhancement (improves what works; + performance when about speed).
    Bug reports get no type label."""
    is_feature, f_score, f_ev = gate(rubric.feature, analysis, rubric)
    is_enh, e_score, e_ev = gate(rubric.enhancement, analysis, rubric)
    if is_enh and (not is_feature or e_score >= f_score):
        is_perf, _, p_ev = gate(rubric.performance, analysis, rubric)
        added = ["enhancement"] + (["module: performance"] if is_perf else [])
        why = summarize(e_ev, 2) + (f"; performance: {summarize(p_ev, 1)}" if is_perf else "")
        return added, f"step 4: enhancement ({why})"
    if is_feature:
        return ["feature"], f"step 4: feature request ({summarize(f_ev, 2)})"
    return [], "step 4: a bug report, no type label"


# --- step 5 ---------------------------------------------------------------------------------------


def step5_high_priority(analysis: Analysis, rubric: Rubric) -> tuple[bool, str]:
    flagged, total, evidence = gate(rubric.high_priority, analysis, rubric)
    if flagged:
        return True, f"step 5: possibly high priority (score {total:g}: {summarize(evidence, 3)}) — a human must look first"
    return False, "step 5: no high-priority signal" + (f" strong enough ({total:g})" if total else "")


# --- step 6 ---------------------------------------------------------------------------------------


def step6_needs_reproduction(analysis: Analysis, rubric: Rubric) -> tuple[bool, str]:
    has_repro, _, evidence = gate(rubric.reproduction, analysis, rubric)
    if has_repro:
        return False, f"step 6: has a reproduction ({summarize(evidence, 1)})"
    return True, "step 6: no script, code or steps to reproduce"
