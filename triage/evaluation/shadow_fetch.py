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
  More issues created in the same second than a page holds share one key: the pages after the first are read
  by number, for that key (GitHub serves at most 1,000 results a query, so at most 1,000 issues a second).
- The cache (`--cache DIR`): one file per issue, `DIR/OWNER/REPO/NUMBER.json`, holding the issue as the search
  returned it and its timeline, used while the issue's `updated_at` is unchanged (anything that happens to an
  issue moves it). Each file is written whole (a temporary file renamed), right after its issue is read, so a run
  killed midway keeps what it read and the next run reads only the rest. A cache is a speed-up, never an
  authority: a file that is not exactly what shadow writes (unreadable, too deep, too large, the wrong issue, a
  timeline of the wrong shape) is named in one line and the issue is read again from GitHub.
- What GitHub answers is checked before use (`triage.evaluation.shadow_shapes`): a search result that is not an
  issue, or a timeline of the wrong shape, costs that issue (`Unreadable`, one line naming it), never the run.

May import: the standard library, `triage.github.names`, `triage.evaluation.shadow_shapes`.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from triage.evaluation.shadow_shapes import issue_problem, timeline_problem
from triage.github.names import validate_repo

SEARCH_PAGE = 100  # results per search page (GitHub's maximum)
SEARCH_PAGES = 10  # numbered pages of one query GitHub serves (1,000 results)
CACHE_VERSION = 1
CACHE_BYTES = 64 * 1024 * 1024  # a cache file larger than this is not one shadow wrote for an issue: read again


def window_query(repo: str, queue_label: str, since: str, until: str) -> str:
    return f'repo:{repo} is:issue label:"{queue_label}" updated:>={since} created:<={until}'


class SearchEnded(Exception):
    """The search cannot be paged further (more issues in one second than GitHub serves, a key that went
    backwards): the issues not yet read are left, and this says why."""


@dataclass
class Search:
    """The window's issues, oldest first, paging by key (see the module doc); reads a page only when the caller
    wants more. `total`: GitHub's count for the first page's query; `malformed`: search results that were not
    issues, each in one line."""

    client: Any
    query: str
    total: int | None = None
    malformed: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[dict]:
        seen: set[int] = set()
        after: str | None = None
        number = 1
        while True:
            keyed = self.query + (f" created:>={after}" if after else "")
            page, count = self.client.search_page(keyed, sort="created", order="asc", page=number)
            self.total = count if self.total is None else self.total
            fresh = []
            for index, item in enumerate(page):
                problem = issue_problem(item)
                if problem:
                    self.malformed.append(f"search result {index + 1} of page {number} ({keyed!r}) {problem}: "
                                          "left out")
                elif item["number"] not in seen:
                    seen.add(item["number"])
                    fresh.append(item)
            yield from fresh
            if len(page) < SEARCH_PAGE:
                return
            stamps = [item["created_at"] for item in page if issue_problem(item) is None]
            last = stamps[-1] if stamps else None
            if last is not None and after is not None and last < after:
                raise SearchEnded(f"the search went back in time (a page ends at {last}, after {after})")
            if last is not None and last != after and fresh:
                after, number = last, 1  # the next key: issues created at or after the last one seen
            elif number < SEARCH_PAGES:
                number += 1  # a whole page in one second: no key separates them, so the next numbered page
            else:
                raise SearchEnded(f"more than {SEARCH_PAGE * SEARCH_PAGES} issues were created at {after}: GitHub "
                                  "serves no more of one query")


class Unreadable(Exception):
    """One issue shadow cannot read (its timeline failed or is of the wrong shape): it is skipped, with this."""


@dataclass
class Fetched:
    """One issue as read (or found in the cache): the search's copy of the issue and its timeline."""

    issue: dict[str, Any]
    timeline: list[dict[str, Any]]
    cached: bool = False


@dataclass
class IssueCache:
    """`DIR/OWNER/REPO/NUMBER.json` files keyed by the issue's `updated_at` (see the module doc); `root` None: no
    cache. Counts what it served and stored; `unreadable`: one line per file it could not use."""

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
            if not stat.S_ISREG(path.stat().st_mode):  # a folder, a device, a pipe: never one shadow wrote
                return self._refuse(path, "not a regular file")
            with path.open("rb") as handle:  # at most one byte past the limit, whatever the file claims
                raw = handle.read(CACHE_BYTES + 1)
            if len(raw) > CACHE_BYTES:
                return self._refuse(path, f"larger than {CACHE_BYTES // 2**20} MiB")
            data = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            return None
        except RecursionError:
            return self._refuse(path, "nested too deeply to be a cache file")
        except (OSError, ValueError) as exc:
            return self._refuse(path, f"unreadable ({type(exc).__name__})")
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return self._refuse(path, f"not a shadow cache file of version {CACHE_VERSION}")
        if data.get("updated_at") != issue.get("updated_at"):
            return None  # the issue changed since: read it again
        problem = self._problem(data, issue)
        if problem is not None:
            return self._refuse(path, problem)
        self.hits += 1
        return Fetched(issue=data["issue"], timeline=data["timeline"], cached=True)

    @staticmethod
    def _problem(data: dict, issue: dict) -> str | None:
        """Why a cache file's issue and timeline are not what shadow wrote for this issue, or None."""
        cached = data.get("issue")
        problem = issue_problem(cached)
        if problem is not None:
            return f"its issue {problem}"
        assert isinstance(cached, dict)
        if cached["number"] != issue["number"]:
            return f"it holds issue {cached['number']}"
        if cached.get("updated_at") != issue.get("updated_at"):
            return "it holds the issue as it was at another time"
        problem = timeline_problem(data.get("timeline"))
        return None if problem is None else f"its timeline {problem}"

    def _refuse(self, path: Path, why: str) -> Fetched | None:
        """One line naming the file; None: the issue is read again from GitHub (and the file written anew)."""
        self.unreadable.append(f"cache file {path}: {why}; read again from GitHub")
        return None

    def put(self, fetched: Fetched) -> None:
        if self.root is None:
            return
        path = self._path(fetched.issue["number"])
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():  # said when it was read; a file cannot replace a folder
            return
        document = {"version": CACHE_VERSION, "updated_at": fetched.issue.get("updated_at"),
                    "issue": fetched.issue, "timeline": fetched.timeline}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)  # whole or not at all: a run killed here leaves the old file or none
        self.stored += 1


def fetch_issue(client, repo: str, item: dict, cache: IssueCache) -> Fetched:
    """The issue's timeline from the cache when its `updated_at` is unchanged, else from GitHub (then cached).
    `Unreadable` when GitHub's answer cannot be read as a timeline (it is then not cached); the client's own
    errors pass through (the caller decides which cost the issue and which the run)."""
    found = cache.get(item)
    if found is not None:
        return found
    try:
        timeline = client.list_timeline(repo, item["number"])
    except RecursionError:
        raise Unreadable("its timeline is nested too deeply to be GitHub's") from None
    except ValueError as exc:  # not JSON (a proxy's page); the client's own errors are not ValueErrors
        raise Unreadable(f"its timeline is not JSON ({type(exc).__name__})") from None
    problem = timeline_problem(timeline)
    if problem is not None:
        raise Unreadable(f"its timeline {problem}")
    fetched = Fetched(issue=item, timeline=timeline)
    cache.put(fetched)
    return fetched
