"""GitHub: naming facts that need no HTTP (`names`), and the REST client (`client`, additive writes only, on the
HTTP `transport`).

May import: the standard library, requests (client and transport only), `triage.http`.
"""
