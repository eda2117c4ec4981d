"""The sweep's bounds, shared by the service, the Action's inputs and the CLI's options.

Standard library only: the Action reads it on its cold path, before anything heavy is imported.
"""

MAX_SWEEP = 1000  # most issues one sweep triages (the `max-issues` input / `--max-issues` option)
SWEEP_API_RESERVE = 50  # requests a sweep leaves unused in the hourly budget, for the event runs that follow it
