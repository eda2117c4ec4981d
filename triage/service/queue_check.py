"""Is the queue label one of the repository's labels? A misspelt queue label is otherwise silent: GitHub's search
for a label nobody has finds no issue, so a sweep or a shadow run reports "0 issues" and exits 0 (issue 40).

Asked only when a run's search found nothing, so a run that finds its queue pays nothing for it: one request
(`get_label`, which GitHub answers whatever the case of the name), and when the label is not there one more, the
first page of the repository's labels (up to 100), to name the closest ones. Events need no request at all: the
label an event names, and the labels an issue carries, are the repository's own, so a queue label that only nearly
matches one of them (another case, another spacing, a letter off) is said from the payload (`near_miss`).

May import: the standard library, `triage.http.errors`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from triage.http.errors import HTTPError

SHOWN = 30  # labels named in the line, at most


@dataclass(frozen=True)
class QueueLabelProblem:
    message: str
    # True: no such label (the run can find nothing: an error); False: only its case differs (a warning).
    missing: bool


def _squashed(name: str) -> str:
    return re.sub(r"[\s:_-]+", "", name.casefold())


def near_miss(queue_label: str, names) -> str | None:
    """The first of `names` (the repository's labels an event or an issue carries) that nearly is the queue label
    but not exactly: the same but for case, spacing or punctuation, or a letter off in a long name. None when none
    is."""
    if not queue_label:
        return None
    for name in names:
        if not isinstance(name, str) or name == queue_label:
            continue
        if _squashed(name) == _squashed(queue_label):
            return name
        if difflib.SequenceMatcher(None, name.casefold(), queue_label.casefold()).ratio() >= 0.93:
            return name
    return None


def near_miss_line(queue_label: str, name: str, where: str) -> str:
    """`where`: what has the label, e.g. "this event added the label", "issue #12 carries the label"."""
    return (f"{where} '{name}', which is nearly the queue label '{queue_label}': is the configuration's "
            "queue_label (or the queue-label input) misspelt? The queue label must match exactly, case and "
            "spacing too")


CONFIGURED = "the configuration's queue_label"


def check_queue_label(client, repo: str, queue_label: str, *,
                      named_by: str = CONFIGURED) -> QueueLabelProblem | None:
    """None when `queue_label` is a label of `repo` as written; else what is wrong, in one line (`named_by`: where
    the label was set, said in it). A read that fails says nothing (None): this check must never fail a run that
    would otherwise have succeeded."""
    try:
        found = client.get_label(repo, queue_label)
        if isinstance(found, dict) and isinstance(found.get("name"), str):
            if found["name"] == queue_label:
                return None
            return QueueLabelProblem(
                f"the queue label '{queue_label}' is '{found['name']}' on {repo}: GitHub's search finds it either "
                f"way, but an event names it '{found['name']}' and is compared exactly; write it so in the "
                "configuration's queue_label (or the queue-label input)", missing=False)
        labels, more = client.labels_page(repo)
    except HTTPError:
        return None
    names = [item["name"] for item in labels if isinstance(item, dict) and isinstance(item.get("name"), str)]
    return QueueLabelProblem(_missing_line(repo, queue_label, names, more, named_by), missing=True)


def _missing_line(repo: str, queue_label: str, names: list[str], more: bool, named_by: str) -> str:
    close = difflib.get_close_matches(queue_label, names, n=1, cutoff=0.6) or [
        n for n in names if _squashed(n) == _squashed(queue_label)][:1]
    guess = f"; the closest is '{close[0]}'" if close else ""
    if not names:
        listed = f"{repo} has no labels at all"
    else:
        shown = ", ".join(f"'{n}'" for n in names[:SHOWN]) + (", ..." if len(names) > SHOWN else "")
        counted = f"the first {len(names)} of more" if more else f"all {len(names)}"
        listed = f"its labels ({counted}): {shown}"
    return (f"the queue label '{queue_label}' is not a label of {repo}, so no issue can be in the queue{guess}. "
            f"Set {named_by} to the label that puts an issue in the queue; {listed}")


__all__ = ["CONFIGURED", "QueueLabelProblem", "check_queue_label", "near_miss", "near_miss_line"]
