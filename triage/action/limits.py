"""GitHub's size limits on what a step writes, and the caps the Action keeps under them.

The reference data in /work/shared/github-contract (OpenAPI, webhook and SchemaStore schemas) documents no size
limit for either; the github-workflow schema only says that job outputs reach the jobs that need them. The figures
are GitHub Docs':
- "Workflow commands for GitHub Actions", Adding a job summary, Step isolation and limits: "Job summaries are
  isolated between steps and each step is restricted to a maximum size of 1MiB." Over it, the runner drops the
  whole summary of the step (the run shows an error instead of it).
- "Workflow syntax for GitHub Actions", jobs.<job_id>.outputs: "Job outputs are Unicode strings, and can be a
  maximum of 1 MB. The total of all outputs in a workflow run can be a maximum of 50 MB." A composite action's
  output becomes a job output as soon as a workflow maps it to one, so each output is kept under 1 MB (10^6 bytes,
  the smaller reading of "MB").

The caps leave room: scrubbing a secret (`***`) only shortens text, but the runner adds its own lines around a
multi-line output. A run that would exceed a cap writes the whole text to a file beside the run instead
(`summary-file`, `plan-file`; in plan mode the plans file) and says so in the text that was cut.

May import: the standard library.
"""
from __future__ import annotations

SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's limit for one step's summary (1 MiB)
SUMMARY_CAP = 900 * 1024  # what the Action writes at most
OUTPUT_LIMIT = 1_000_000  # bytes: GitHub's limit for one job output (1 MB)
OUTPUT_CAP = 900_000


def nbytes(text: str) -> int:
    """The size GitHub counts: UTF-8 bytes (a lone surrogate, which `safe_text` replaces, counts as U+FFFD)."""
    return len(text.encode("utf-8", "replace"))
