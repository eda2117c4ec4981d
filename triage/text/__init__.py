"""Reading issue text: located passages (title, prose, code, frames, errors, comments, environment), one markdown
scanner, and linear-time (RE2) signal matching with the evidence it finds.

The bottom layer. May import: the standard library and `re2`; nothing else of ours.
"""
