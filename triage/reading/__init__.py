"""Shared reading: what every queue's rubric can use, whatever its domain.

- `triage.reading.unread`: what the rubric could not read in an issue (prose in a script it does not read, a pasted
  log with no words around it, a bot's template, a one-line description), said as reasons on the analysis.
- `triage.reading.features` and `triage.reading.scorer`: step 4's learned reading of the request type, a linear
  model over the words an issue is written in (hashed word n-grams, identifiers masked) and the rubric's own step-4
  scores, shipped as data (`types-v1.json`, trained by `scripts/train_type_scorer.py`) and scored in plain Python.

May import: the standard library, `re2` (google-re2), `triage.text`.
"""
