"""Property (issue 20): whatever a plans file says, an apply run writes only what its own event allows on an issue
that, as it is now, may be triaged. Random plans files (any issue, labels including reserved and unknown ones, any
template and outcome, `forced` either way, right/wrong/missing `issue_updated_at`) are applied under random events
by `triage.action.main.main` in-process (the same code path as entrypoint.py, as the simulator's in-process
mode runs it) against the GitHub stand-in, over real HTTP."""
from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actionrun import (MARKER, NOT_DISTRIBUTED, QUEUE, REPO, dispatch_payload, issues_payload, schedule_payload,
                       seed_issue)
from sim.driver import Driver, Launch

REVIEW = "triage review"
# index -> (labels, state): only index 0 may ever be written to, and only under an event that is about it
KINDS = [((QUEUE,), "open"), ((), "open"), ((QUEUE,), "closed"), ((QUEUE, MARKER), "open"),
         ((QUEUE, REVIEW), "open")]
LABELS = st.sampled_from([MARKER, REVIEW, QUEUE, "high priority", "oncall: distributed infra", "module: fsdp",
                          "module: ddp", "triaged", "bug", "x" * 60, "oncall: distributed parallelisms"])
PLAN = st.fixed_dictionaries({
    "issue": st.integers(0, 5),  # 5: an issue that does not exist
    "add_labels": st.lists(LABELS, max_size=5),
    "comment": st.sampled_from([None, {"template": "not_distributed"},
                                {"template": "needs_distributed_reproduction"}, {"template": "nope"}]),
    "outcome": st.sampled_from(["not_distributed", "routed", "high_priority", "needs_review", "needs_repro",
                                "triaged", "already_triaged", "nothing_to_do"]),
    "forced": st.booleans(),
    "stamp": st.sampled_from(["right", "right", "wrong", "missing"]),
})
EVENTS = st.sampled_from(["schedule", "labeled 0", "labeled 4", "labeled 3", "dispatch 0", "dispatch 1",
                          "dispatch 2"])
_numbers = itertools.count(100, 10)


def _document(fake, base: int, plans: list[dict]) -> dict:
    out = []
    for raw in plans:
        number = base + raw["issue"]
        entry = {k: raw[k] for k in ("add_labels", "comment", "forced")}
        entry.update(issue=number, outcome=raw["outcome"] if raw["outcome"] in ("not_distributed", "routed",
                     "high_priority", "needs_review", "triaged", "already_triaged", "nothing_to_do") else "triaged")
        if raw["stamp"] != "missing":
            right = fake.issue(REPO, number)["updated_at"] if raw["issue"] < 5 else "2020-01-01T00:00:00Z"
            entry["issue_updated_at"] = right if raw["stamp"] == "right" else "2001-01-01T00:00:00Z"
        out.append(entry)
    return {"version": 1, "repo": REPO, "plans": out}


def _launch(fake, base: int, event: str, path: Path) -> Launch:
    inputs = {"mode": "apply", "plans-file": str(path)}
    kind, _, index = event.partition(" ")
    if kind == "schedule":
        return Launch("schedule", schedule_payload(), inputs)
    number = base + int(index)
    if kind == "labeled":
        return Launch("issues", issues_payload(fake, number, "labeled", label=QUEUE), inputs)
    return Launch("workflow_dispatch", dispatch_payload({"issue-number": str(number)}),
                  {**inputs, "issue-number": str(number)})


def _may_write(event: str, plans: list[dict]) -> bool:
    """Issue 0 (open, in the queue, fresh) may be written only when the event covers it and its last saved plan
    (the file's later entry wins) carries the right stamp."""
    if event not in ("schedule", "labeled 0", "dispatch 0"):
        return False
    mine = [p for p in plans if p["issue"] == 0]
    return bool(mine) and mine[-1]["stamp"] == "right"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(plans=st.lists(PLAN, max_size=8), event=EVENTS)
def test_no_plans_file_widens_what_an_apply_run_writes(fake_github, plans, event):
    from triage.config.bundle import load_bundle

    allowed = load_bundle().labels
    base = next(_numbers)
    for index, (labels, state) in enumerate(KINDS):
        seed_issue(fake_github, base + index, NOT_DISTRIBUTED, labels=labels, state=state)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plans.json"
        path.write_text(json.dumps(_document(fake_github, base, plans)), encoding="utf-8")
        driver = Driver(fake_github, "in_process")
        try:
            record = driver.run(_launch(fake_github, base, event, path))
        finally:
            driver.close()
    assert "internal error" not in record.output and "Traceback" not in record.output, record.output
    writes = [r for r in record.requests if r.method not in ("GET", "HEAD")]
    targets = {r.path.split("/issues/")[1].split("/")[0] for r in writes}
    assert targets <= {str(base)} and (not writes or _may_write(event, plans)), (event, plans, targets)
    for r in writes:
        if r.path.endswith("/labels"):
            names = r.body["labels"]
            assert set(names) <= allowed.names and not set(names) & allowed.forbidden, names
    for index in range(1, len(KINDS)):  # the issues no run may triage are exactly as seeded
        assert sorted(fake_github.issue_labels(REPO, base + index)) == sorted(KINDS[index][0])
        assert fake_github.comments(REPO, base + index) == []
    marks = [c["body"] for c in fake_github.comments(REPO, base) if "<!-- ptd-triage:" in c["body"]]
    assert len(marks) <= 1
