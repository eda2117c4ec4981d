"""Measuring: eval datasets and answer keys, figures (pure), and the replay of a live queue's history.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners`, `triage.github.names`.
"""
