"""Compile every bundled queue now: `python -m triage.config.precompile`, run by action.yml when it builds the
environment (and by the Dockerfile), so that the compiled forms (triage.config.compiled) travel with it and the
first run on a fresh runner loads its queue warm. Prints one line per queue: where its compiled form is.

May import: the standard library, `triage.config.bundle`, `triage.config.compiled`, `triage.config.repo`.
"""

from __future__ import annotations

import sys

from triage.config.bundle import bundled_queues, compile_sources
from triage.config.compiled import ENVIRONMENT, places, where
from triage.config.repo import bundled_sources


def main() -> int:
    if not places():
        print(f"ptd-triage: {ENVIRONMENT} is off: no compiled queue written")
        return 0
    for name in bundled_queues():
        sources = bundled_sources(name)
        compile_sources(sources)
        path = where(sources)
        print(f"ptd-triage: the bundled queue '{name}' compiled: {path or 'not written (no writable place)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
