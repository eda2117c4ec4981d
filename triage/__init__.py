"""ptd-triage: second-level triage of an `oncall: distributed` issue queue (and of any queue forked from it).

The core is pure: (issue snapshot, configuration) -> a planner's proposal -> the policy -> ordered writes
(`triage.planners.plan_issue`, `triage.core`). GitHub, model providers, files and the environment live at thin
edges (`triage.github`, `triage.llm`, `triage.action`, `triage.cli`); `triage.service` holds "triage one issue"
and "sweep the queue" for both callers. Each sub-package's docstring says what it may import.
"""

# The one place the version is written: pyproject.toml reads it from here (`dynamic = ["version"]`), `ptd-triage
# --version` and the API user agent show it; docs/releasing.md says when to change it.
__version__ = "0.1.0"
