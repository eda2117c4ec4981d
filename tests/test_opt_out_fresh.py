"""The opt-out is read fresh before any write, a reaction included (issue 37): a `/ptd-retriage` whose payload
predates the opt-out label used to get its 👀 first (the labels came from the payload, and the reaction came before
the issue was read again). Now the command's answer is decided on the issue as it is now: 😕, and nothing else is
written. Through the real entrypoint against the stand-in; the control: without the label, 👀 and the triage."""
from __future__ import annotations

from actionrun import MARKER, NOT_DISTRIBUTED, REPO, comment_payload, run_action, seed_issue

SKIP = "ptd-bot-skip"


def _command(fake, number: int) -> dict:
    fake.set_role(REPO, "a-triager", "triage")
    return fake.add_comment(REPO, number, "/ptd-retriage", author="a-triager")


def test_an_opt_out_added_after_the_command_is_seen_before_any_write(fake_github, tmp_path):
    seed_issue(fake_github, 1, NOT_DISTRIBUTED)
    comment = _command(fake_github, 1)
    payload = comment_payload(fake_github, 1, comment)  # written before the label: it does not carry it
    fake_github.label_issue(REPO, 1, SKIP, actor="a-maintainer")
    run = run_action(fake_github, tmp_path, "issue_comment", payload)
    assert run.returncode == 0, run.stdout + run.stderr
    calls = [f"{r.method} {r.path}" for r in run.requests if "/contents/" not in r.path]
    assert calls[:2] == [f"GET /repos/{REPO}/collaborators/a-triager/permission", f"GET /repos/{REPO}/issues/1"]
    writes = run.writes
    assert [(w.path.rsplit("/", 1)[-1], w.body) for w in writes] == [("reactions", {"content": "confused"})]
    assert writes[0].path.endswith(f"/issues/comments/{comment['id']}/reactions")
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["confused"]
    assert fake_github.comments(REPO, 1) == [comment] and MARKER not in fake_github.issue_labels(REPO, 1)
    assert SKIP in run.stdout and run.outputs["outcome"] == "ignored"


def test_the_control_without_the_label_the_command_is_acknowledged_and_run(fake_github, tmp_path):
    seed_issue(fake_github, 2, NOT_DISTRIBUTED)
    comment = _command(fake_github, 2)
    run = run_action(fake_github, tmp_path, "issue_comment", comment_payload(fake_github, 2, comment))
    assert run.returncode == 0, run.stdout + run.stderr
    assert [r["content"] for r in fake_github.reactions(REPO, comment["id"])] == ["eyes"]
    assert MARKER in fake_github.issue_labels(REPO, 2)
