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
