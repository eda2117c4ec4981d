"""Label names: one rule for every place a label name comes from (an Action input, labels.json, a repository
config). Standard library only, so the Action's settings can check an input without loading the configuration.

May import: the standard library.
"""

from __future__ import annotations

import re

# What GitHub accepts (at most 50 characters) and what can be quoted in a search query (`label:"NAME"`, which the
# sweep builds from the queue, marker and review labels): no double quote, no backslash, no control character, no
# space at either end.
LABEL_NAME_PATTERN = r'^(?=\S)[^"\\\x00-\x1f\x7f]{1,50}(?<=\S)$'
_LABEL_NAME = re.compile(LABEL_NAME_PATTERN)

# Labels the procedure reserves for people, in every queue ("Add high priority directly — use triage review and let
# humans decide"). Code, not data: no configuration can let the bot add them. The policy refuses them whatever a
# labels file's `forbidden` says, and validation refuses a configuration that drops them from `forbidden` or
# declares one as a label the bot may add.
RESERVED_LABELS = frozenset({"high priority"})


def label_key(name: str) -> str:
    """A label name as GitHub compares it: without regard to case (`High Priority` IS `high priority` on GitHub,
    which keeps one label per repository whatever the spelling). Every check of a name against another (the floor,
    the forbidden list, the allowlist's duplicates, the opt-out label) compares these."""
    return name.casefold()


RESERVED_KEYS = frozenset(label_key(name) for name in RESERVED_LABELS)


def is_reserved(name: object) -> bool:
    """Whether `name` is a reserved label in any spelling GitHub would take for it."""
    return isinstance(name, str) and label_key(name) in RESERVED_KEYS


def label_name_problem(name: object) -> str | None:
    """Why `name` cannot be a label name (None when it can): the same rule as the configuration schemas'."""
    if not isinstance(name, str) or not _LABEL_NAME.fullmatch(name):
        return ("must be 1-50 characters with no double quote, backslash or control character and no space at "
                "either end (it is quoted in the sweep's search query)")
    return None
