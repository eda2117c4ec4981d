"""The queue simulator: a queue's real life (issues opened and labelled, people commenting and relabelling,
events delivered late with stale payloads, runs overlapping, sweeps, re-runs, GitHub failing, processes killed)
driven through the REAL entrypoint against the GitHub stand-in, with the README's promises checked after every
step (issue 11).

- `world`: the stand-in with wall-clock timestamps that a timeline can age, and what people do to issues.
- `driver`: one run of the Action, in-process (`triage.action.main.main(environ)`) or as a subprocess
  (`entrypoint.py`), with the environment the runner gives it.
- `invariants`: the promises, checked against the stand-in's state and request log.
- `timeline`: the steps of a timeline, the simulator that performs them, and the random timeline generator.

May import: the standard library, `fakegithub`, `actionrun`, `triage` (the package under test).
"""
