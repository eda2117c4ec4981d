"""The triage service: triage one issue and sweep the queue, given a client, a bundle and a planner; typed
results, no printing, no environment. The Action and the CLI are its two thin callers.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners`, `triage.http`,
`triage.github.names`.
"""
