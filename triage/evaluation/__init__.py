"""Measuring, with nothing about a particular queue written in code: the eval dataset (`dataset`) and its gold
answers (`gold`), answer keys (`answer_key`), planning the rows (`cases`), what the configuration says the figures
count (`scoring`), the figures against gold and against a key (`figures`, `key_figures`, pure), the whole report
(`report`) and its text (`render`), and the replay of a live queue's history (`replay`).

May import: the standard library, `triage.config`, `triage.core`, `triage.planners`, `triage.github.names`.
"""
