"""Measuring, with nothing about a particular queue written in code: the eval dataset (`dataset`) and its gold
answers (`gold`), answer keys (`answer_key`), planning the rows (`cases`), what the configuration says the figures
count (`scoring`), the figures against gold and against a key (`figures`, `key_figures`, pure), the whole report
(`report`) and its text (`render`), the replay of a live queue's history (`replay`, `history`), and shadow mode:
the queue's last days replayed against its people, read-only (`shadow`, `shadow_fetch`, `shadow_steps`,
`shadow_render`).

May import: the standard library, `triage.config`, `triage.core`, `triage.planners`, `triage.github.names`.
"""
