"""A queue's history written into the GitHub stand-in from dataset rows (the eval format): each issue opened as it
stood when it entered the queue, the queue label added, then every other label its people gave it (`gold.labels`)
added as a label event by a person. What shadow reads back is then the dataset's own answer, so a report made on
it can be checked against the rows, and a picture can be made of a real queue's history without committing its
text (the dev sets live outside the repository; the shipped tests use invented rows, `invented_rows`).

May import: the standard library, `fakegithub`.
"""
from __future__ import annotations

import json
from pathlib import Path

QUEUE = "oncall: distributed"
FIRST_LEVEL_BOT = "pytorch-bot[bot]"  # the bot that puts issues in the queue
PEOPLE = ("alice", "bob", "carol")


def read_rows(path: Path, limit: int | None = None) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


def write_history(gh, rows: list[dict], *, repo: str, queue: str = QUEUE) -> tuple[str, str]:
    """Open each row's issue, queue it (by the first-level bot), and let a person add each of its people's labels.
    Returns the window (since, until) that holds all of it."""
    gh.add_user(FIRST_LEVEL_BOT, user_type="Bot")
    stamps: list[str] = []
    for index, row in enumerate(rows):
        issue = row["issue"]
        at_queue = [item["name"] for item in issue.get("labels") or [] if item["name"] != queue]
        author = (issue.get("user") or {}).get("login") or "reporter"
        made = gh.add_issue(repo, title=issue["title"], body=issue.get("body") or "", labels=at_queue,
                            author=author)
        number = made["number"]
        stamps.append(made["created_at"])
        for comment in row.get("comments") or []:
            gh.add_comment(repo, number, comment.get("body") or "", author=(comment.get("user") or {}).get(
                "login") or "reporter")
        gh.label_issue(repo, number, queue, actor=FIRST_LEVEL_BOT, actor_type="Bot")
        person = PEOPLE[index % len(PEOPLE)]
        for name in row["gold"].get("labels") or []:
            if name != queue and name not in at_queue:
                gh.label_issue(repo, number, name, actor=person)
        stamps.append(gh.issue(repo, number)["updated_at"])
    return min(stamps), max(stamps)
