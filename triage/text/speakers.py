"""Who said each passage of an issue: the reporter, a maintainer, or another user.

Issue text is hostile, and not all of it is the reporter's: anyone can comment on a public issue. What lowers or
clears a criterion ("my bad", "works now", "it is my own kernel", the reporter's own setup) means something only
when the reporter or a maintainer says it; a stranger's "+1, same here. Sorry." is evidence that many users hit it,
never a retraction. So every passage of the located text (`triage.text.document`) carries its `Speaker`, and the
rubric says, as data, whose words a signal, a slot or a modifier's `anywhere` cue reads (`said_by`).

Roles (the vocabulary of `said_by`):
- `reporter`: the issue's author: the title, the description, and their own comments;
- `maintainer`: a comment whose author GitHub calls OWNER, MEMBER or COLLABORATOR of the repository
  (`triage.core.authors` maps GitHub's `author_association`);
- `other`: anyone else, and anyone whose association is not known.

A passage inlined in a text as "login · comment · date" (thread excerpts, `text.comment_separator`) is said by that
login, never with more standing than the text it is inlined in: the login of the text's own author keeps that
author; any other login is `other` (a line of the description cannot make its words a maintainer's, and a comment
cannot make its words the reporter's by naming them).

May import: the standard library.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

REPORTER, MAINTAINER, OTHER = "reporter", "maintainer", "other"
ROLES = (REPORTER, MAINTAINER, OTHER)
# Whose words may lower a criterion or reach another person's words: what `said_by` means when a modifier's
# `anywhere` cue does not say (the rubric can widen it, to every role, only by saying so).
TRUSTED = frozenset({REPORTER, MAINTAINER})


@dataclass(frozen=True)
class Speaker:
    """Who said a passage: `role` (one of ROLES) and `who`, a key that is the same for every passage one person
    wrote (a login, case-folded) and never the same for two people (an unknown author gets a key of their own)."""

    role: str
    who: str = ""


THE_REPORTER = Speaker(REPORTER)  # a text whose author is not known is the reporter's (a bare title and body)


def inlined(container: Speaker, login: str) -> Speaker:
    """The speaker of a passage inlined as "login · comment · date" in text said by `container` (see above)."""
    login = login.casefold()
    if login and login == container.who:
        return container
    return Speaker(OTHER, f"{container.who}/{login}")  # not the real `login`'s key: a name typed is not its owner


def separator_login(line: str, found) -> str:
    """The login of a comment-separator line: the pattern's first capturing group when it has one that took part,
    else the line's first word ("alice · comment · 2024-01-02")."""
    if found is not None and found.re.groups and found.start(1) >= 0:
        value = found.group(1)
        return (value.decode("utf-8", "replace") if isinstance(value, bytes) else value).strip()
    words = line.split()
    return words[0] if words else ""


class Runs:
    """The speakers of one location's text: each run's first byte and its speaker, in order."""

    __slots__ = ("starts", "speakers")

    def __init__(self, starts: list[int], speakers: list[Speaker]):
        self.starts, self.speakers = starts, speakers

    def at(self, offset: int, default: Speaker) -> Speaker:
        index = bisect_right(self.starts, offset) - 1
        return self.speakers[index] if index >= 0 else default


__all__ = ["MAINTAINER", "OTHER", "REPORTER", "ROLES", "Runs", "Speaker", "THE_REPORTER", "TRUSTED", "inlined",
           "separator_login"]
