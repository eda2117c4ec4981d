"""The seed's procedure, one function per step (0-6), each returning one `StepResult`.

A step is pure: it looks at the issue snapshot, at the `Analysis` (the issue read once and scored
against every rubric topic) and at the configuration, and returns its decision, the labels the
decision adds, a one-line reason and the evidence behind it. The one procedure (`triage.core.procedure`)
runs them in order, for every planner; these functions are how the rubric decides a step. A step that depends on
an earlier one takes that step's decision as an argument (step 3 the route, step 5 the request type), as the
procedure decided it: no step function calls another (tests/test_procedure_rules.py checks it), and the rules that
tie steps together (stops, a dismissed flag, no reproduction asked of a request) are the procedure's.

May import: the standard library, `triage.text`, `triage.config` (types), `triage.core.snapshot`,
`triage.core.outcome` (who classified it), `triage.core.authors` (who said what), `triage.core.step_result` (what a
step returns, re-exported here), `triage.core.request_type` (step 4's readings), `triage.core.vocab`,
`triage.reading` (what the rubric could not read).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from triage.config.labels import LabelSet
from triage.config.rubric import Check, Rubric
from triage.config.words import queue_words
from triage.core.authors import people_comments, reporter
from triage.core.outcome import classification
from triage.core.request_type import decide_type
from triage.core.snapshot import IssueSnapshot
from triage.core.step_result import StepResult
from triage.core.step_result import skipped as skipped  # re-exported: the procedure skips a step with it
from triage.core.vocab import Confidence, Flag, InQueue, Reproduction, Role, Triaged, TypeKind
from triage.reading.unread import unread_reasons
from triage.text.document import Document, build_document
from triage.text.frames import (
    read_slots,
    reads,
    score_frames,
    stronger_reading,
)
from triage.text.matching import Evidence, score, summarize


@dataclass(frozen=True)
class Analysis:
    doc: Document
    topic_scores: dict[str, float]
    topic_evidence: dict[str, list[Evidence]] = field(default_factory=dict)
    unread: tuple[str, ...] = ()  # what the rubric could not read (`triage.reading.unread`): its "no" is no answer

    @property
    def queue_score(self) -> float:
        """All positive evidence that the issue is the queue's at all (every topic's)."""
        return sum(max(s, 0.0) for s in self.topic_scores.values())


def human_comments(snapshot: IssueSnapshot, template_names) -> list[str]:
    """The texts of the comments by people (`triage.core.authors.people_comments`, which says who wrote each)."""
    return [comment.body for comment, _ in people_comments(snapshot, template_names)]


def analyse(snapshot: IssueSnapshot, rubric: Rubric, template_names=()) -> Analysis:
    """The issue read once, each passage with who said it (the reporter, a maintainer, another user)."""
    doc = build_document(
        snapshot.title, snapshot.body,
        [(comment.body, who) for comment, who in people_comments(snapshot, template_names)],
        environment_heading=rubric.environment_heading, comment_separator=rubric.comment_separator,
        reporter=reporter(snapshot),
    )
    return replace(score_topics(doc, rubric), unread=unread_reasons(doc, author=snapshot.author))


def score_topics(doc: Document, rubric: Rubric) -> Analysis:
    scores, evidence = {}, {}
    for topic in rubric.topics:
        scores[topic.name], evidence[topic.name] = score(topic.signals, doc, rubric.locations)
    return Analysis(doc, scores, evidence)


def passes(g: Check, analysis: Analysis, rubric: Rubric) -> tuple[bool, float, list[Evidence]]:
    total, evidence = score(g.signals, analysis.doc, rubric.locations)
    return total >= g.min_score and total > 0, total, evidence


# --- step 0: already triaged by a human? ------------------------------------------------------------


def step0_already_triaged(snapshot: IssueSnapshot, labels: LabelSet, rubric: Rubric | None = None) -> StepResult:
    """A human classified it when it has both an allowlisted module label and a sub-oncall, added by people:
    labels this bot added itself (the snapshot knows who added what, when the caller read the label events)
    are its own earlier work, not a human's classification. In a queue whose default route adds no sub-oncall
    label, module labels alone are a complete classification."""
    by_people = (label for label in snapshot.labels if label not in snapshot.labels_added_by_bots)
    human = classification(by_people, labels, rubric)
    modules, oncalls = list(human.modules), list(human.oncalls)
    if human.complete:
        where = oncalls[0] if oncalls else f"route {human.unlabelled_route}"
        return StepResult(0, Triaged.ALREADY, (labels.marker,), stop=True,
                          reason=f"step 0: already triaged by a human ({where}; {', '.join(modules)})")
    ours = [label for label in snapshot.labels
            if label in snapshot.labels_added_by_bots and labels.role(label) in (Role.MODULE, Role.SUB_ONCALL)]
    if human.partial:
        return StepResult(0, Triaged.PARTLY,
                          reason=f"step 0: partly triaged ({', '.join(modules + oncalls)}), continuing")
    if ours:
        return StepResult(0, Triaged.NOT_YET,
                          reason=f"step 0: only labels a bot added ({', '.join(ours)}), continuing")
    return StepResult(0, Triaged.NOT_YET, reason=f"step 0: no module or {_team(rubric, labels)} label yet")


def _team(rubric: Rubric | None, labels: LabelSet) -> str:
    """What this queue calls a label of role sub-oncall (rubric `words.team`): a fork's reasons never say
    "sub-oncall" unless its rubric does."""
    return queue_words(rubric.words if rubric is not None else None, labels.queue_label).team


# --- step 1: is this the queue's issue at all? -----------------------------------------------------


def step1_not_in_queue(analysis: Analysis, rubric: Rubric, labels: LabelSet, template: str) -> StepResult:
    """Not in the queue only when a known trap matches AND the queue's evidence is weak: a wrong 'not in the
    queue' sends a real bug away, so both must hold. The reporter's own word that none of the queue's code is
    involved (the trap's `declared` part) is such a trap, weighed against the queue's code actually run (a script
    or a traceback), not against names dropped in the text. The reasons use the queue's words (`rubric.words`)."""
    words = queue_words(rubric.words, labels.queue_label)
    trapped, trap_score, trap_evidence = passes(rubric.not_in_queue, analysis, rubric)
    declared = rubric.declared_not_in_queue
    said, said_score, said_evidence, tried = _declared(declared, analysis, rubric)
    dist, rest = analysis.queue_score, analysis
    if trapped or said:
        # What the trap itself matched is not the queue's evidence (an import error that names a library of the
        # queue is still a packaging problem): score again without it.
        rest = score_topics(analysis.doc.without([e.text for e in trap_evidence + said_evidence]), rubric)
        dist = rest.queue_score
    if not trapped and dist <= 0 and rubric.min_trap_score_unopposed is not None:
        trapped = trap_score >= rubric.min_trap_score_unopposed  # a strong trap, and nothing of the queue at all
    if trapped and dist <= rubric.max_queue_score:
        return StepResult(
            1, InQueue.NO, (labels.review, labels.marker), comment=template, stop=True,
            evidence=tuple(trap_evidence), score=trap_score,
            reason=(f"step 1: {words.not_in_queue} — trap score {trap_score:g} ({summarize(trap_evidence, 2)}), "
                    f"{words.queue} evidence only {dist:g}"),
        )
    run = _evidence_in(rest, declared.locations) if declared else 0.0
    if said and (run <= declared.max_run_score or tried) and dist < declared.outweighed * said_score:  # type: ignore[union-attr]
        return StepResult(
            1, InQueue.NO, (labels.review, labels.marker), comment=template, stop=True,
            evidence=tuple(said_evidence), score=said_score,
            reason=(f"step 1: {words.not_in_queue} — the reporter says so ({summarize(said_evidence, 2)}); "
                    f"{words.queue} code run only {run:g}, evidence {dist:g}"),
        )
    if trapped or said:
        found = trap_evidence or said_evidence
        return StepResult(1, InQueue.YES, evidence=tuple(found), score=dist,
                          reason=f"step 1: a '{words.not_in_queue}' trap matched ({summarize(found, 1)}) "
                                 f"but {words.queue} evidence is {dist:g}")
    if dist <= 0:
        return StepResult(1, InQueue.YES, score=dist,
                          reason="step 1: no evidence either way; kept in the queue (only a matched trap sends an "
                                 "issue away)")
    return StepResult(1, InQueue.YES, score=dist, reason=f"step 1: {words.queue} (evidence {dist:g})")


def _declared(declared, analysis: Analysis, rubric: Rubric) -> tuple[bool, float, list[Evidence], bool]:
    """The reporter's word that none of the queue's code is involved: (said, score, evidence, tried). Statements
    and experiments add up; `tried` is an experiment alone reaching the declaration's score (the failure outlived
    the queue's code that the issue's script shows, so that script is no counter-evidence)."""
    if not declared:
        return False, 0.0, [], False
    weights = {**rubric.locations, **declared.weights}
    said_score, evidence = score(declared.check.signals, analysis.doc, weights)
    tried_score, tried_ev = score(declared.experiments, analysis.doc, weights)
    total, minimum = said_score + tried_score, declared.check.min_score
    return total >= minimum and total > 0, total, evidence + tried_ev, tried_score > 0 and tried_score >= minimum


def _evidence_in(analysis: Analysis, locations: tuple[str, ...]) -> float:
    """The queue's positive evidence found in the given locations (e.g. code actually run: a script, a
    traceback)."""
    return sum(e.points for found in analysis.topic_evidence.values() for e in found
               if e.points > 0 and e.location in locations)


# --- step 2: route to one sub-oncall ---------------------------------------------------------------


def route_scores(snapshot: IssueSnapshot, analysis: Analysis, rubric: Rubric, labels: LabelSet):
    totals = {route: 0.0 for route in rubric.routes}
    evidence: dict[str, list[Evidence]] = {route: [] for route in rubric.routes}
    for topic in rubric.topics:
        # A topic's negative (disambiguating) signals can cancel that topic, not its whole route.
        points = analysis.topic_scores[topic.name]
        if points > 0 and topic.route is not None:  # a route-less topic classifies, it does not route
            totals[topic.route] += points
            evidence[topic.route].extend(e for e in analysis.topic_evidence[topic.name] if e.points > 0)
    for route, rule in rubric.routes.items():
        points, found = score(rule.signals, analysis.doc, rubric.locations)
        totals[route] += points
        evidence[route].extend(found)
    # A module label already on the issue (the first-level bot adds some) is strong evidence.
    for name in snapshot.labels:
        home = labels.route(name) if labels.role(name) == Role.MODULE else None
        if home is not None and home in totals:
            route = home
            totals[route] += rubric.existing_module_weight
            evidence[route].append(Evidence("existing-label", "labels", name, rubric.existing_module_weight))
    return totals, evidence


def step2_route(snapshot: IssueSnapshot, analysis: Analysis, rubric: Rubric, labels: LabelSet) -> StepResult:
    """The route (decision) and, unless the issue already has a sub-oncall, its label. An existing sub-oncall
    is always kept. `stop` is set for routes whose team owns further triage."""
    for name in snapshot.labels:
        route = rubric.route_of_label(name)
        if route:
            return StepResult(2, route, (), stop=route in rubric.stop_after,
                              reason=f"step 2: keeps existing {_team(rubric, labels)} '{name}'")
    totals, evidence = route_scores(snapshot, analysis, rubric, labels)
    # Precedence: a route earlier in the list wins when it has enough evidence of its own and is
    # not swamped by the routes after it (min_ratio of their best score).
    order = list(rubric.precedence)
    chosen, why = rubric.default_route, ""
    for i, route in enumerate(order):
        if route == rubric.default_route:
            continue
        rule = rubric.routes[route]
        later = max((totals[r] for r in order[i + 1 :]), default=0.0)
        if totals[route] >= rule.min_score and totals[route] > 0 and totals[route] >= rule.min_ratio * later:
            chosen = route
            why = (f"step 2: {route} (score {totals[route]:g} vs {later:g} for later routes): "
                   f"{summarize(evidence[route], 3)}")
            break
    else:
        shown = ", ".join(f"{r} {totals[r]:g}" for r in order)
        how = "no other route qualified" if totals[chosen] > 0 else "by default, no evidence for any route"
        why = f"step 2: {chosen} ({how}; {shown}): {summarize(evidence[chosen], 3)}"
    label = rubric.route_label(chosen)  # None: the route's team adds no sub-oncall label
    return StepResult(2, chosen, (label,) if label else (), reason=why, evidence=tuple(evidence[chosen]),
                      score=totals[chosen], stop=chosen in rubric.stop_after)


# --- step 3: classify module -----------------------------------------------------------------------


def step3_modules(snapshot: IssueSnapshot, analysis: Analysis, rubric: Rubric, labels: LabelSet,
                  route: str) -> StepResult:
    """Module labels for the route, with confidence high/medium (decision) or low, which picks nothing
    and asks for a human (the review label)."""
    per_label: dict[str, float] = {}
    evidence: dict[str, list[Evidence]] = {}
    for topic in rubric.topics:
        if topic.label is None or topic.route not in (route, None):  # None: a module of every route
            continue
        per_label[topic.label] = per_label.get(topic.label, 0.0) + analysis.topic_scores[topic.name]
        evidence.setdefault(topic.label, []).extend(analysis.topic_evidence[topic.name])
    existing = [label for label in snapshot.labels
                if labels.role(label) == Role.MODULE and labels.route(label) in (route, None)]
    for name in existing:
        per_label[name] = max(per_label.get(name, 0.0), rubric.module_high)
    ranked = sorted(per_label.items(), key=lambda kv: (-kv[1], kv[0]))
    if not ranked or ranked[0][1] < rubric.module_medium:
        matched = [(label, s) for label, s in ranked if s > 0]
        best = (f"best {matched[0][0]} {matched[0][1]:g} < {rubric.module_medium:g}" if matched
                else "no evidence for any module")
        return StepResult(3, Confidence.LOW, (labels.review,), reason=f"step 3: module unclear ({best}), no guess")
    top = ranked[0][1]
    # A module in the title's own tag ("[Module][Other] ...") is one the reporter filed the issue under, the most
    # explicit mention there is: it is chosen whatever its share of the top module's score. The share keeps out
    # modules the body merely touches. (A module only named in the title's words does not get this: measured on
    # two queues' dev sets, that let in more wrong modules than right ones.)
    tagged = {label for label in per_label
              if any(e.location == "title" and e.points > 0 and e.text.startswith("[")
                     for e in evidence.get(label, []))}
    chosen = [label for label, s in ranked
              if s >= rubric.module_medium and (s >= rubric.module_min_share * top or label in tagged)]
    confidence = Confidence.HIGH if top >= rubric.module_high else Confidence.MEDIUM
    detail = "; ".join(f"{label} {per_label[label]:g}: {summarize(evidence.get(label, []), 2)}"
                       for label in chosen)
    return StepResult(3, confidence, tuple(chosen), reason=f"step 3: {confidence} confidence — {detail}",
                      evidence=tuple(e for label in chosen for e in evidence.get(label, [])), score=top)


# --- step 4: type labels ---------------------------------------------------------------------------


def step4_types(analysis: Analysis, rubric: Rubric, labels: LabelSet) -> StepResult:
    """The seed's step 4, in its own order: is the issue a request at all (does it ask for something, or report
    what went wrong)? Bug reports, questions and CI or test reports get no type label. Of a request: `feature` when
    what it asks for does not exist today in any form, else `enhancement` (an improvement to something that works),
    with the performance label when it is about speed or memory. The rubric's checks weigh signals and frames; with
    a learned scorer (`types.scorer`), a request they miss may be found by it, over the issue's words and those
    checks' scores (`triage.core.request_type`). What the rubric could not read is said (`Analysis.unread`)."""
    found = decide_type(analysis.doc, rubric, labels)
    return StepResult(4, found.decision, found.labels, evidence=found.evidence, score=found.score,
                      reason=found.reason + unread_note(analysis))


def unread_note(analysis: Analysis) -> str:
    """What a reason adds when the rubric could not read all of the issue (nothing when it could)."""
    return f" [the rubric could not read all of it: {'; '.join(analysis.unread)}]" if analysis.unread else ""


# --- step 5: possibly high priority: a human must look first ----------------------------------------


def step5_high_priority(analysis: Analysis, rubric: Rubric, labels: LabelSet, types: StepResult) -> StepResult:
    """The seed's step 5 criteria, each scored on its own evidence (`high_priority.criteria` in the rubric); the
    issue's high-priority score is its best criterion's score plus the counter-evidence (questions, requests, test
    reports, ...; a request counts `request_weight`). Whether the issue is a request is step 4's decision as the
    procedure decided it (`types`, whoever decided it: the rubric, a model, a hybrid), never decided here again; a
    skipped step 4 found no request. Flagged at or above the rubric's threshold: the review label, and (enforced by
    the policy) no marker, so a human looks first. The score is kept (`StepResult.score`,
    `Plan.high_priority_score`) so that another threshold can be measured. (A flag a person already dismissed is
    the procedure's rule, for every planner: `triage.core.procedure`.)"""
    hp = rubric.high_priority
    weights = {**rubric.locations, **hp.locations}  # step 5's own weights: a fact told in a comment is a fact
    slots = read_slots(hp.slots, analysis.doc, plan=reads(hp.frames), said_by=hp.slot_said_by)  # once, by sentence
    scored = []
    for criterion in hp.criteria:
        _, found = score(criterion.signals, analysis.doc, weights)
        _, framed_ev = score_frames(criterion.frames, slots, weights)
        scored.append((stronger_reading(found, framed_ev), criterion.name, found + framed_ev))
    best_points, best_name, best_ev = max(scored, key=lambda item: item[0])  # ties: the rubric's order
    against, against_ev = score(hp.counter, analysis.doc, weights)
    framed, framed_ev = score_frames(hp.counter_frames, slots, weights)
    against, against_ev = against + framed, against_ev + framed_ev
    if hp.request_weight and types.decision in (TypeKind.FEATURE, TypeKind.ENHANCEMENT):
        against += hp.request_weight
        against_ev = against_ev + [Evidence("request", "step 4", types.decision, hp.request_weight)]
    total = best_points + against if best_points > 0 else 0.0
    evidence = tuple([e for e in best_ev if e.points] + against_ev) if best_points > 0 else ()
    also = [f"{name} {points:g}" for points, name, _ in scored if points > 0 and name != best_name]
    detail = f"{best_name} {best_points:g}: {summarize(best_ev, 2)}" + (f"; also {', '.join(also)}"
                                                                          if also else "")
    if against_ev and best_points > 0:
        detail += f"; against {against:g}: {summarize(against_ev, 2)}"
    if best_points <= 0 or total < hp.threshold or total <= 0:
        why = "no high-priority criterion met" if best_points <= 0 else \
            f"not high priority (score {total:g} < {hp.threshold:g}; {detail})"
        # Be conservative (the seed): "no criterion" in an issue the rubric could not read is no answer.
        review = hp.unread_review and bool(analysis.unread)
        return StepResult(5, Flag.NO_FLAG, (labels.review,) if review else (), score=total, evidence=evidence,
                          reason=f"step 5: {why}{unread_note(analysis)}"
                                 + (f": {labels.review} for a person to read it" if review else ""))
    return StepResult(5, Flag.FLAG, (labels.review,), evidence=evidence, score=total, criteria=(best_name,),
                      reason=f"step 5: possibly high priority — {best_name} (score {total:g}; {detail}) "
                             f"— a human must look first{unread_note(analysis)}")


# --- step 6: missing reproduction -------------------------------------------------------------------


def step6_needs_reproduction(analysis: Analysis, rubric: Rubric, labels: LabelSet, template: str,
                             performance_template: str | None = None) -> StepResult:
    """Ask for a reproduction when none is there. (Never of a request: the procedure does not ask this step about
    an issue step 4 found to be one, whoever decided step 4.)"""
    has_repro, _, evidence = passes(rubric.reproduction, analysis, rubric)
    if has_repro:
        return StepResult(6, Reproduction.HAS, evidence=tuple(evidence),
                          reason=f"step 6: has a reproduction ({summarize(evidence, 1)})")
    chosen = reproduction_template(analysis, rubric, template, performance_template)
    return StepResult(6, Reproduction.NEEDS, (labels.reproduction,), comment=chosen,
                      reason="step 6: a performance report with no script or numbers to reproduce"
                      if chosen != template else "step 6: no script, code or steps to reproduce")


def reproduction_template(analysis: Analysis, rubric: Rubric, template: str,
                          performance_template: str | None) -> str:
    """Which request for a reproduction to post, whoever judged that one is missing: a report about speed or
    memory gets the performance wording when the rubric names one, because asking for "the error output of every
    rank" about a slowdown is not true to what the reporter saw."""
    if performance_template and passes(rubric.performance, analysis, rubric)[0]:
        return performance_template
    return template
