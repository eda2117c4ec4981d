"""One router per feature of the Action (bedevere's layout): `queue_label` (an issue gets or opens with the queue
label), `command` (the re-triage command in a comment), `sweep` (schedule and workflow_dispatch), `labels_sync`
(the labels-sync task). `triage.action.app` composes them.

May import: the standard library, `triage.action.context`, `triage.action.routing`, `triage.action.settings`,
`triage.action.command`, `triage.action.routers.*`, and inside functions `triage.config`, `triage.http.errors`,
`triage.service`.
"""
