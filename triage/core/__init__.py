"""The pure core: issue snapshot, the procedure's steps 0-6, the plan, the policy (the one gate every plan
passes), and the ordered writes a plan needs. No I/O, no clock, no environment.

May import: the standard library, `triage.text`, `triage.config`, `triage.reading`, `triage.github.names` (naming facts
only).
"""
