"""HTTP mechanics shared by every client that talks to a remote API (GitHub now, the LLM providers next).

- `decisions`: pure functions over (status, headers, body): rate limited or not, how long to wait, the next page,
  the error message, the kind of failure, the rate-limit budget a response reports.
- `errors`: typed, token-scrubbed errors (`RateLimited`, `AuthError`, `NotFound`, `Transient`, `BadRequest`,
  `BudgetExhausted`) and `is_fatal_for_run`.
- `retry`: the one retry loop (`call_with_retries`), with injected sleep and clock, a deadline and the "maybe
  processed" hook.
- `pacing`: a sliding-window pacer for content-creating requests.

May import: the standard library only, and each other. No HTTP library (the clients do the I/O), nothing from the
rest of `triage`, so every client can build on it without an import cycle.
"""
