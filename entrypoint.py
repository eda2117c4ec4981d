"""Entrypoint of the ptd-triage Action (composite action.yml and the Dockerfile both run this file).

It stays tiny and imports only `triage.action.main`, which (with `triage.action.app` and the routers) defers
everything heavy until an event needs it: a run on an event that is not for us (another label, a comment without
the command) must start and exit fast.
"""

import sys

from triage.action.main import main

if __name__ == "__main__":
    sys.exit(main())
