"""snapshot_from_json: every accepted input shape, and one-line InputErrors for everything else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine_helpers import QUEUE, rest_comment, rest_issue, snapshot_dict
from triage.core.snapshot import Comment, InputError, IssueSnapshot, snapshot_from_json

EXAMPLES = Path(__file__).resolve().parent / "contract" / "webhooks" / "examples"


def test_rest_issue_object():
    snap = snapshot_from_json(rest_issue("DDP hangs", "body text", labels=(QUEUE, "module: ddp"), number=7, login="alice", comments=3))
    assert isinstance(snap, IssueSnapshot)
    assert (snap.number, snap.title, snap.body, snap.author) == (7, "DDP hangs", "body text", "alice")
    assert snap.labels == (QUEUE, "module: ddp")
    assert snap.comments == ()
    assert snap.comment_count == 3  # the REST count, even without the comment bodies
    assert snap.state == "open" and snap.is_pull_request is False
    assert snap.has_label("module: ddp") and not snap.has_label("module: fsdp")


def test_snapshot_shape_reads_comments_with_author_type():
    obj = snapshot_dict("t", "b", comments=[rest_comment("hi", login="bob"), rest_comment("auto", login="ci[bot]", user_type="Bot", cid=9)])
    snap = snapshot_from_json(obj)
    assert snap.comments == (Comment(1, "bob", "User", "hi"), Comment(9, "ci[bot]", "Bot", "auto"))
    assert snap.comment_count == 2


def test_comments_argument_overrides_the_embedded_ones():
    obj = snapshot_dict("t", "b", comments=["old"])
    snap = snapshot_from_json(obj, comments=[rest_comment("new", login="carol", cid=5)])
    assert [c.body for c in snap.comments] == ["new"]


def test_event_payload_from_the_contract_examples():
    payload = json.loads((EXAMPLES / "issues.labeled.json").read_text())
    snap = snapshot_from_json(payload)
    assert snap.number == payload["issue"]["number"]
    assert snap.title == payload["issue"]["title"]
    assert snap.labels == tuple(l["name"] for l in payload["issue"]["labels"])
    assert snap.author == payload["issue"]["user"]["login"]


def test_eval_line_shape_ignores_extra_keys():
    obj = snapshot_dict("FSDP bug", "text")
    obj.update({"id": "x1", "chunk": 3, "gold": {"labels": ["module: fsdp"]}})
    assert snapshot_from_json(obj).title == "FSDP bug"


def test_null_body_labels_as_strings_and_duplicates():
    issue = rest_issue("t", None)
    issue["labels"] = ["a", {"name": "b"}, "a"]
    snap = snapshot_from_json(issue)
    assert snap.body == "" and snap.labels == ("a", "b")


def test_pull_request_and_closed_state_are_read():
    issue = rest_issue("t", "b")
    issue.update({"pull_request": {"url": "x"}, "state": "closed"})
    snap = snapshot_from_json(issue)
    assert snap.is_pull_request and snap.state == "closed"


def _bad(mutate):
    issue = rest_issue("t", "b")
    mutate(issue)
    return issue


@pytest.mark.parametrize(
    "obj, fragment",
    [
        ([1, 2], "JSON object"),
        ("text", "JSON object"),
        ({"hello": 1}, "not an issue"),
        ({"number": 3}, "not an issue"),
        ({"issue": "nope"}, "'issue' must be a JSON object"),
        (_bad(lambda i: i.update(number=0)), "issue.number"),
        (_bad(lambda i: i.update(number=True)), "issue.number"),
        (_bad(lambda i: i.update(number="12")), "issue.number"),
        (_bad(lambda i: i.update(title=None)), "issue.title"),
        (_bad(lambda i: i.update(body=["x"])), "issue.body"),
        (_bad(lambda i: i.update(labels="bug")), "issue.labels"),
        (_bad(lambda i: i.update(labels=[{"color": "fff"}])), "without a name"),
        ({"issue": rest_issue("t", "b"), "comments": "many"}, "'comments' must be a list"),
        ({"issue": rest_issue("t", "b"), "comments": ["just a string"]}, "comment must be a JSON object"),
        ({"issue": rest_issue("t", "b"), "comments": [{"body": 5}]}, "comment.body"),
    ],
)
def test_bad_shapes_raise_one_line_input_error(obj, fragment):
    with pytest.raises(InputError) as info:
        snapshot_from_json(obj)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    assert isinstance(info.value, ValueError)


# ---- bounded work and Unicode safety (issue 12) --------------------------------------------------------------------

from triage.core.snapshot import MAX_COMMENT_TEXT, TEXT_LIMIT, TITLE_LIMIT  # noqa: E402


def test_text_is_clipped_to_githubs_limits_and_the_clipping_is_recorded():
    obj = snapshot_dict("T" * 1_000, "b" * 10_000_000, comments=["c" * 70_000, "short"])
    snap = snapshot_from_json(obj)
    assert len(snap.title) == TITLE_LIMIT == 256
    assert len(snap.body) == TEXT_LIMIT == 65_536
    assert [len(c.body) for c in snap.comments] == [65_536, 5]
    assert snap.clipped == (
        "title clipped to 256 characters",
        "body clipped to 65,536 characters",
        "1 comment clipped to 65,536 characters",
    )
    assert snapshot_from_json(snapshot_dict("t", "b", comments=["c"])).clipped == ()


def test_comments_read_later_give_the_snapshot_a_whole_read_gives():
    """The service reads the issue, then (only when there are any) its comments: one parse of the issue."""
    issue = rest_issue("T" * 1_000, "b" * 70_000, labels=(QUEUE,), comments=2)
    later = [rest_comment("c" * 70_000, login="bob", cid=1), rest_comment("auto", login="ci[bot]", user_type="Bot")]
    assert snapshot_from_json(issue).with_comments(later) == snapshot_from_json(issue, later)
    again = snapshot_from_json(issue, later).with_comments([rest_comment("new", login="carol", cid=5)])
    assert [c.body for c in again.comments] == ["new"] and again.clipped == snapshot_from_json(issue).clipped
    with pytest.raises(InputError):
        snapshot_from_json(issue).with_comments({"not": "a list"})


def test_the_first_comments_by_people_are_read_and_every_bot_comment_is_kept():
    people = [rest_comment(f"comment {i}", login=f"user{i}", cid=i) for i in range(150)]
    ours = rest_comment("<!-- ptd-triage:needs_distributed_reproduction -->", login="ptd-bot[bot]", user_type="Bot", cid=999)
    snap = snapshot_from_json(snapshot_dict("t", "b", comments=people[:140] + [ours] + people[140:]))
    human = [c.body for c in snap.comments if c.author_type == "User"]
    assert human == [f"comment {i}" for i in range(100)]  # the first 100, in order
    assert snap.comments[-1].id == 999  # the bot's comment (it carries a marker) is kept wherever it is
    assert snap.comment_count == 151
    assert snap.clipped == ("read 100 of 150 comments by people",)
    assert len(snapshot_from_json(snapshot_dict("t", "b", comments=people), max_comments=3).comments) == 3


def test_comment_text_by_people_has_a_total_budget():
    full = ["x" * TEXT_LIMIT] * 7
    snap = snapshot_from_json(snapshot_dict("t", "b", comments=full))
    assert sum(len(c.body) for c in snap.comments) == MAX_COMMENT_TEXT
    assert len(snap.comments) == MAX_COMMENT_TEXT // TEXT_LIMIT
    assert "read 4 of 7 comments by people" in snap.clipped


def test_a_10_mb_body_costs_what_a_64_kb_one_does():
    import time

    started = time.perf_counter()
    snapshot_from_json(rest_issue("t", "\ud800" + "x" * 10_000_000))
    assert time.perf_counter() - started < 0.2


LONE = "\ud800"  # a lone surrogate: valid in JSON ("\ud800"), not encodable as UTF-8


def _surrogate_issue() -> dict:
    obj = snapshot_dict(f"FSDP {LONE} hangs", f"model = FSDP(m) {LONE}\n```\n{LONE}\n```",
                        labels=(QUEUE, f"bad {LONE} label"), comments=[rest_comment(f"same {LONE}", login=f"bob{LONE}")])
    obj["issue"]["user"]["login"] = f"eve{LONE}"
    return obj


def test_lone_surrogates_are_replaced_everywhere_in_the_snapshot():
    snap = snapshot_from_json(_surrogate_issue())
    texts = [snap.title, snap.body, snap.author, *snap.labels, *(c.body for c in snap.comments), *(c.author for c in snap.comments)]
    for text in texts:
        text.encode("utf-8")  # would raise UnicodeEncodeError before
    assert snap.title == "FSDP \ufffd hangs" and snap.author == "eve\ufffd" and "bad \ufffd label" in snap.labels


def test_a_snapshot_with_surrogates_plans_and_its_plan_encodes():
    from engine_helpers import bundle
    from triage.planners import plan_issue

    plan = plan_issue(snapshot_from_json(_surrogate_issue()), bundle())
    json.dumps(plan.to_dict(), ensure_ascii=False).encode("utf-8")
    assert "module: fsdp" in plan.add_labels


def test_the_cli_plans_an_issue_with_surrogates_in_both_formats(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "issue.json"
    path.write_text(json.dumps(_surrogate_issue()), encoding="ascii")  # json escapes the surrogate as \ud800
    for fmt in ("json", "text"):
        result = subprocess.run([sys.executable, "-m", "triage", "plan", "--format", fmt, str(path)],
                                capture_output=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
        assert b"Traceback" not in result.stderr
        result.stdout.decode("utf-8")
