"""The triage service: triage one issue (read -> decide -> execute) and sweep the queue, given a client, a bundle,
a planner and an executor (the one place that writes, and the one place the dry run decides anything); typed
results, no printing, no environment. The Action and the CLI are its two thin callers.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners`, `triage.http`,
`triage.github.names`.
"""
