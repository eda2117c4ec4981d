"""Builders shared by the engine tests: issues in the shapes GitHub sends, and a one-call planner.

Everything here is hand-made test data (never copied from the dev eval set). Keep builders small:
a test states the title/body/labels/comments it cares about and gets the rest filled in.
"""

from __future__ import annotations

from pathlib import Path

from triage.config.bundle import load_bundle
from triage.planners import plan_issue
from triage.core.snapshot import IssueSnapshot, snapshot_from_json

ROOT = Path(__file__).resolve().parents[1]
QUEUE = "oncall: distributed"
PAR = "oncall: distributed parallelisms"
INFRA = "oncall: distributed infra"
CKPT = "oncall: distributed checkpointing"
SUB_ONCALLS = (PAR, INFRA, CKPT)
MARKER = "ptd-bot-triaged"
REVIEW = "triage review"
REPRO = "needs reproduction"
HIGH = "high priority"
REPRO_MARK = "<!-- ptd-triage:needs_distributed_reproduction -->"
NOT_DIST_MARK = "<!-- ptd-triage:not_distributed -->"


def shared_dir() -> Path:
    """/work/shared (or $PTD_SHARED_DIR); absent on a fresh clone, so callers skip on it."""
    import os

    env = os.environ.get("PTD_SHARED_DIR")
    return Path(env) if env else ROOT.parent / "shared"


def rest_comment(body: str, *, login: str = "reporter", user_type: str = "User", cid: int = 1) -> dict:
    return {"id": cid, "body": body, "user": {"login": login, "type": user_type}}


def rest_issue(
    title: str,
    body: str | None = "",
    *,
    labels=(QUEUE,),
    number: int = 4242,
    login: str = "reporter",
    comments: int = 0,
) -> dict:
    """A GitHub REST issue object (the fields the engine reads plus some it must ignore)."""
    return {
        "url": f"https://api.github.com/repos/acme/widgets/issues/{number}",
        "number": number,
        "title": title,
        "body": body,
        "user": {"login": login, "type": "User"},
        "labels": [{"name": name, "color": "ededed"} for name in labels],
        "state": "open",
        "comments": comments,
    }


def snapshot_dict(title: str, body: str | None = "", *, labels=(QUEUE,), comments=(), **kw) -> dict:
    """The snapshot shape `{"issue": ..., "comments": [...]}`; comments are bodies or REST dicts."""
    rest = [c if isinstance(c, dict) else rest_comment(c, cid=i + 1) for i, c in enumerate(comments)]
    return {"issue": rest_issue(title, body, labels=labels, comments=len(rest), **kw), "comments": rest}


def snap(title: str, body: str | None = "", *, labels=(QUEUE,), comments=(), **kw) -> IssueSnapshot:
    return snapshot_from_json(snapshot_dict(title, body, labels=labels, comments=comments, **kw))


def bundle():
    return load_bundle()


def plan_for(title: str, body: str | None = "", *, labels=(QUEUE,), comments=(), force: bool = False, **kw):
    return plan_issue(snap(title, body, labels=labels, comments=comments, **kw), bundle(), force=force)


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code.strip()}\n```"
