"""The `ptd-triage` command line: one module per subcommand behind one error handler (`common.run_command`).

May import: anything below the Action (`triage.service`, `triage.evaluation`, `triage.planners`, `triage.config`,
`triage.core`, `triage.github`); never `triage.action`.
"""
