"""Step 4's two readings of an issue's request type (`triage.core.steps.step4_types` is the step).

The rubric's checks (`types:` request, feature, enhancement, performance) are each weighed once: signals, and every
frame over `types.slots` that holds. Without a learned scorer they decide, as the rubric says: a request when its
evidence reaches `request.min_score`, a feature when that check passes and outweighs the evidence that the issue
changes something existing, else an enhancement. With a scorer (`types.scorer`, `triage.reading.scorer`), a
request the phrases did not find may still be found by the scorer, over the issue's own words and the checks'
scores; its reason quotes the scorer's strongest contributions, and its evidence is still the rubric's (what a
hybrid gate reads). In both, the performance label comes from the rubric's performance check, beside an
enhancement.

May import: the standard library, `triage.config` (types), `triage.core.vocab`, `triage.text`.
"""

from __future__ import annotations

from dataclasses import dataclass

from triage.config.labels import LabelSet
from triage.config.rubric import Check, Rubric
from triage.core.vocab import TypeKind
from triage.text.document import Document
from triage.text.frames import read_slots, reads, sum_frames
from triage.text.matching import Evidence, score, summarize

CHECKS = ("request", "feature", "enhancement", "performance")


@dataclass(frozen=True)
class TypeDecision:
    decision: TypeKind
    labels: tuple[str, ...]
    evidence: tuple[Evidence, ...]
    score: float  # the rubric's request score, whoever decided
    reason: str


class Checks(dict):
    """Step 4's checks by name, each weighed when first asked for, once (most issues are bug reports: their
    feature, enhancement and performance checks are never weighed)."""

    def __init__(self, doc: Document, rubric: Rubric):
        super().__init__()
        self.doc, self.rubric = doc, rubric
        self.slots = read_slots(rubric.type_slots, doc, plan=reads(rubric.type_frames),  # read once, by sentence
                                said_by=rubric.type_slot_said_by)

    def __missing__(self, name: str) -> tuple[bool, float, list[Evidence]]:
        self[name] = weigh(getattr(self.rubric, name), self.doc, self.rubric, self.slots)
        return self[name]


def decide_type(doc: Document, rubric: Rubric, labels: LabelSet) -> TypeDecision:
    checks = Checks(doc, rubric)
    return (by_phrases if rubric.type_scorer is None else by_scorer)(checks, doc, rubric, labels)


def weigh_all(doc: Document, rubric: Rubric) -> Checks:
    """Each of step 4's checks weighed (what the training script reads as the rubric's scores)."""
    checks = Checks(doc, rubric)
    for name in CHECKS:
        checks[name]  # noqa: B018 -- weighed now
    return checks


def request_scores(checks: Checks) -> dict[str, float]:
    """The request check's evidence for and against (`triage.reading.features.REQUEST_SCORES`)."""
    request = checks["request"][2]
    return {"request_for": sum(e.points for e in request if e.points > 0),
            "request_against": sum(e.points for e in request if e.points < 0)}


def rubric_scores(checks: Checks) -> dict[str, float]:
    """Everything a learned scorer reads of the checks (`triage.reading.features.RUBRIC_SCORES`)."""
    kinds = {name: checks[name][1] for name in ("feature", "enhancement", "performance")}
    return {**request_scores(checks), **kinds}


def weigh(check: Check, doc: Document, rubric: Rubric, slots) -> tuple[bool, float, list[Evidence]]:
    """One of step 4's checks: its signals and every one of its frames that holds."""
    total, evidence = score(check.signals, doc, rubric.locations)
    framed, framed_ev = sum_frames(check.frames, slots, rubric.locations)
    total, evidence = total + framed, evidence + framed_ev
    return total >= check.min_score and total > 0, total, evidence


def by_phrases(checks: Checks, doc: Document, rubric: Rubric, labels: LabelSet) -> TypeDecision:
    is_request, r_score, r_ev = checks["request"]
    if not is_request:
        # Most of a queue's issues are bug reports (the seed says so); the reason shows what weighed, if anything.
        why = (f"not a request (score {r_score:g} < {rubric.request.min_score:g}: {summarize(r_ev, 2)}), "
               "no type label" if r_ev else "not a request, no type label")
        return TypeDecision(TypeKind.NONE, (), tuple(r_ev), r_score, f"step 4: {why}")
    (is_feature, f_score, f_ev), (_, e_score, e_ev) = checks["feature"], checks["enhancement"]
    if is_feature and f_score > e_score:
        why = f"wholly new ({summarize(f_ev, 2)}; request: {summarize(r_ev, 1)})"
        return TypeDecision(TypeKind.FEATURE, (labels.feature,), tuple(r_ev + f_ev), r_score,
                            f"step 4: feature request, {why}")
    is_perf, _, p_ev = checks["performance"]
    added = (labels.enhancement,) + ((labels.performance,) if is_perf else ())
    improves = summarize([e for e in e_ev if e.points > 0], 2) if e_score > 0 else "nothing shows it is wholly new"
    why = f"request: {summarize(r_ev, 1)}; improves what exists: {improves}"
    if is_feature:
        why += f" (outweighs new-functionality evidence {f_score:g})"
    if is_perf:
        why += f"; performance: {summarize(p_ev, 1)}"
    return TypeDecision(TypeKind.ENHANCEMENT, added, tuple(r_ev + e_ev), r_score, f"step 4: enhancement ({why})")


def by_scorer(checks: Checks, doc: Document, rubric: Rubric, labels: LabelSet) -> TypeDecision:
    """The rubric's phrases first: a request they find, they type. Where they find none, the learned reading may: a
    request when its probability reaches the scorer's threshold, typed by its feature model (leave-one-writer-out,
    the phrases typed the requests they found better than the scorer did, and missed the ones a new writer words
    differently: bench/leave_one_writer_out.py), unless the phrases' counter-evidence says the issue is something
    else than a request (`types.scorer_defers_to`: a question, a test report, a tracking list; a failure told
    beside an ask is not such evidence)."""
    found = by_phrases(checks, doc, rubric, labels)
    scorer = rubric.type_scorer
    if found.decision != TypeKind.NONE or scorer is None:
        return found
    if any(e.points < 0 and e.signal in rubric.scorer_defers_to for e in found.evidence):
        return found  # the phrases say it is something else (a question, a test report, a tracking list)
    read = scorer.read(doc, request_scores(checks), lambda: rubric_scores(checks))
    if not read.is_request:
        return found
    (_, r_score, r_ev), (_, _, f_ev), (_, _, e_ev), (is_perf, _, p_ev) = (checks[name] for name in CHECKS)
    said = (f"the rubric's phrases found none (score {r_score:g}), its learned reading {scorer.name} does: "
            f"request {read.request:.2f} ({'; '.join(read.for_request)}); wholly new {read.feature:.2f} "
            f"({'; '.join(read.for_kind) or 'nothing for it'})")
    if read.is_feature:
        return TypeDecision(TypeKind.FEATURE, (labels.feature,), tuple(r_ev + f_ev), r_score,
                            f"step 4: feature request ({said})")
    added = (labels.enhancement,) + ((labels.performance,) if is_perf else ())
    perf = f"; performance: {summarize(p_ev, 1)}" if is_perf else ""
    return TypeDecision(TypeKind.ENHANCEMENT, added, tuple(r_ev + e_ev), r_score,
                        f"step 4: enhancement ({said}{perf})")
