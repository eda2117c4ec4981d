"""What shadow reads from GitHub: the issues that may have entered the queue in a window, and each one's timeline,
through a local cache so that a second run (another planner, another configuration) reads nothing again.

- The search: `repo:R is:issue label:"QUEUE" updated:>=SINCE created:<=UNTIL`, open or closed, oldest first, one
  page at a time and paged by key (each page asks for issues created at or after the last one seen), as the sweep
  pages its queue: GitHub's search stops at 1,000 results a query, and numbered pages shift when issues change.
  An issue that got the queue label in the window was updated then, so it is among these; whether it did is read
  from its timeline (`triage.evaluation.history`). An issue that has left the queue since (its queue label
  removed) is not found: the search sees today's labels.
- The timeline (`GET .../issues/{n}/timeline`, 100 items a page) holds the label events and the comments with
  their bodies, so one request per issue (per 100 items) is all it costs; the issue itself comes with the search.
- The cache (`--cache DIR`): one file per issue, `DIR/OWNER/REPO/NUMBER.json`, holding the issue as the search
  returned it and its timeline, used while the issue's `updated_at` is unchanged (anything that happens to an
  issue moves it). Each file is written whole (a temporary file renamed), right after its issue is read, so a run
  killed midway keeps what it read and the next run reads only the rest.

May import: the standard library, `triage.github.names`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from triage.github.names import validate_repo

SEARCH_PAGE = 100  # results per search page (GitHub's maximum)
CACHE_VERSION = 1


def window_query(repo: str, queue_label: str, since: str, until: str) -> str:
    return f'repo:{repo} is:issue label:"{queue_label}" updated:>={since} created:<={until}'


def search_window(client, query: str) -> Iterator[tuple[dict, int]]:
    """(issue, GitHub's total for the first page's query) for every issue the query finds, oldest first, paging
    by key; reads a page only when the caller wants more."""
    seen: set[int] = set()
    after: str | None = None
    total: int | None = None
    while True:
        page, count = client.search_page(query + (f" created:>={after}" if after else ""), sort="created",
                                         order="asc")
        total = count if total is None else total
        fresh = [item for item in page if isinstance(item.get("number"), int) and item["number"] not in seen]
        for item in fresh:
            seen.add(item["number"])
            yield item, total
        last = page[-1].get("created_at") if page else None
        if len(page) < SEARCH_PAGE or not fresh or not isinstance(last, str) or last == after:
            return
        after = last


@dataclass
class Fetched:
    """One issue as read (or found in the cache): the search's copy of the issue and its timeline."""

    issue: dict[str, Any]
    timeline: list[dict[str, Any]]
    cached: bool = False


@dataclass
class IssueCache:
    """`DIR/OWNER/REPO/NUMBER.json` files keyed by the issue's `updated_at` (see the module doc); `root` None: no
    cache. Counts what it served and stored."""

    root: Path | None
    repo: str
    hits: int = 0
    stored: int = 0
    unreadable: list[str] = field(default_factory=list)

    def _path(self, number: int) -> Path:
        owner, name = validate_repo(self.repo)
        return self.root / owner / name / f"{int(number)}.json"  # type: ignore[operator]

    def get(self, issue: dict) -> Fetched | None:
        if self.root is None:
            return None
        path = self._path(issue["number"])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self.unreadable.append(str(path))  # read again from GitHub and written anew
            return None
        if (not isinstance(data, dict) or data.get("version") != CACHE_VERSION
                or data.get("updated_at") != issue.get("updated_at") or not isinstance(data.get("timeline"), list)):
            return None  # the issue changed since (or the file is not ours): read it again
        self.hits += 1
        return Fetched(issue=data["issue"], timeline=data["timeline"], cached=True)

    def put(self, fetched: Fetched) -> None:
        if self.root is None:
            return
        path = self._path(fetched.issue["number"])
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {"version": CACHE_VERSION, "updated_at": fetched.issue.get("updated_at"),
                    "issue": fetched.issue, "timeline": fetched.timeline}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)  # whole or not at all: a run killed here leaves the old file or none
        self.stored += 1


def fetch_issue(client, repo: str, item: dict, cache: IssueCache) -> Fetched:
    """The issue's timeline from the cache when its `updated_at` is unchanged, else from GitHub (then cached)."""
    found = cache.get(item)
    if found is not None:
        return found
    fetched = Fetched(issue=item, timeline=client.list_timeline(repo, item["number"]))
    cache.put(fetched)
    return fetched
