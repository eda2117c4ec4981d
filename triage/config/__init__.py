"""The queue's data, loaded and checked: label allowlist, rubric (and its schema), comment templates, the bundle
that holds them together, the repository's config file, validation, and a queue's compiled form kept between runs
(`compiled`: a queue is checked once, not on every run). Everything a queue knows lives here as
data (in `queues/NAME/`), so a fork changes files, not code.

May import: the standard library, yaml/jsonschema/jinja2, `triage.text`, `triage.reading` (shipped type scorers).
"""
