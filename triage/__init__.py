"""ptd-triage: second-level triage of an `oncall: distributed` issue queue.

The core is `triage.planners.rubric.plan_issue`: a pure function from an issue snapshot and a
configuration bundle (rubric, labels, templates) to a plan. Everything that talks to GitHub,
the filesystem or the environment lives at the edges (`triage.github.client`, `triage.action.app`, `triage.cli.main`).
"""

__version__ = "0.1.0"
