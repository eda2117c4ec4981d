"""The GitHub Action: the runner's environment and inputs (`settings`), the command grammar (`command`), the
routing (`routing`) and one router per feature (`routers/`) composed into the app (`app`), what a handler gets
(`context`: the client, the configuration, the run's executor, the planner and the triage service), the plan/apply
split and shadow mode (`planmode`, `shadowmode`), what a run reports (`report`, `summary`, `workflow_commands`,
`redact`, `limits`), and the entry point (`main`).

May import: anything below it (`triage.service`, `triage.planners`, `triage.config`, `triage.core`, `triage.github`,
`triage.text`); nothing imports it.
"""
