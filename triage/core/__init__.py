"""The pure core: issue snapshot, the rubric's reading of an issue, the procedure's steps 0-6 (run once per issue),
the plan, the policy (the one gate every plan passes), and the issue's effects (every write it gets, in order).
No I/O, no clock, no environment, and no queue's words: what a queue knows is its data.

May import: the standard library, `triage.text`, `triage.config`, `triage.reading`, `triage.github.names`
(naming facts only).
"""
