"""GitHub: naming facts that need no HTTP (`names`), and the REST client (`client`, additive writes only).

May import: the standard library, requests (client only), `triage.http`.
"""
