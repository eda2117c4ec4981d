"""One module per `ptd-triage` subcommand; each exposes `register(subparsers)`."""
