"""The GitHub Action: the runner's environment and inputs (`settings`), the command grammar (`command`), the
router and one handler per event (`handlers`), what a run reports (`report`), and the entry point (`main`).

May import: anything below it (`triage.service`, `triage.planners`, `triage.config`, `triage.core`, `triage.github`,
`triage.text`); nothing imports it.
"""
