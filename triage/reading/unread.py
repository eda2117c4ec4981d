"""What the rubric could not read in an issue, said as reasons (`Analysis.unread`).

The rubric reads English prose, and code, logs, tracebacks and error lines, which are the same in every language. Where
an issue's own account is beyond that, a decision that found "no request" or "no criterion" found nothing because it
could read nothing, and must say so; the procedure is then conservative (the seed: "when in doubt, add triage review
for human attention"), and a planner that can ask a model asks it. Four cases, each one reason:

- `script`: the prose (title, description, comments) is mostly in a script the rubric does not read (Chinese,
  Japanese, Korean, Cyrillic, Arabic, ...): letters counted by Unicode script, a CJK character as three letters
  (about a word's worth), inline code and links left out;
- `log`: the description is nothing but a pasted log or traceback, with almost no words around it (log lines pasted
  outside a code block count as log, not prose; a script is not a log: it is a reproduction, and the rubric reads
  it);
- `bot`: a bot's or CI template report (an app's `[bot]` login, or two marks of a CI template): its fields are a
  form's, not a person's account of what went wrong;
- `one_line`: the description is one line, which with the title says a dozen words at most, and no comment says
  more ("see title", "same here on 2.5").

Cost: a few RE2 scans of each location (linear in the text); the script count runs only on text that is not ASCII.

May import: the standard library, `re2` (google-re2), `triage.text`.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from triage.text.document import Document
from triage.text.patterns import compile_pattern

SCRIPTS = (  # (name in a reason, RE2 class, weight of one character in letters)
    ("Chinese", r"\p{Han}", 3), ("Japanese", r"\p{Hiragana}|\p{Katakana}", 3), ("Korean", r"\p{Hangul}", 3),
    ("Cyrillic", r"\p{Cyrillic}", 1), ("Arabic", r"\p{Arabic}", 1), ("Hebrew", r"\p{Hebrew}", 1),
    ("Devanagari", r"\p{Devanagari}", 1), ("Thai", r"\p{Thai}", 2), ("Greek", r"\p{Greek}", 1),
)
MIN_SHARE = 0.3  # of the prose's letters (weighted) in scripts the rubric does not read
MIN_FOREIGN = 8  # characters: a name or a quoted word in another script is not the prose
MAX_LOG_WORDS = 10  # words of prose (log lines left out) at most, for an issue that is "nothing but a log"
MIN_LOG_LINES = 4
MAX_ONE_LINE_WORDS = 12  # title and description together: a one-line sentence that says what broke is read
MIN_COMMENT_WORDS = 15  # a comment this long says more than a one-line description

_NOT_ASCII_LETTER = bytes(c for c in range(128) if not chr(c).isalpha())  # deleted: what is left are a-z, A-Z
_FOREIGN = compile_pattern("(?:" + "|".join(cls for _, cls, _ in SCRIPTS) + ")+")
_RUNS = tuple((name, compile_pattern(f"(?:{cls})+"), weight) for name, cls, weight in SCRIPTS)
_NOT_PROSE = compile_pattern(r"`[^`\n]*`|https?://\S+")
_LOG_LINE = compile_pattern(
    r"^\s*(?:\[?rank\s?\d+\]?|\[?\d{4}-\d{2}-\d{2}|\w{3} \d{2} \d{2}:\d{2}:\d{2}|\d{2}:\d{2}:\d{2}|[IWEF]\d{4} "
    r"|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|TRACE)\b|at \S+\(|#\d+ |0x[0-9a-fA-F]{6,}|Traceback \(most recent)"
    r"|\S+\.(?:py|cpp|cc|cu|h|hpp):\d+")
_BOT_LOGIN = compile_pattern(r"\[bot\]$")
_CI_TEMPLATE = tuple(compile_pattern(p, case_sensitive=False) for p in (
    r"^Platforms:\s", r"this test was disabled because", r"determined flaky in \d+ workflow",
    r"debugging instructions", r"do not assume things are okay if the ci is green",
    r"this issue (?:was|has been) (?:automatically )?(?:created|generated|opened|filed) by",
    r"auto-?generated (?:issue|report)", r"^DISABLED \S"))


@dataclass(frozen=True)
class _Prose:
    words: int
    log_lines: int


def unread_reasons(doc: Document, *, author: str = "") -> tuple[str, ...]:
    """Why the rubric's reading of this issue is partial, one reason per case found (empty: it read it all)."""
    reasons = []
    script = foreign_script(doc)
    if script is not None:
        name, share = script
        reasons.append(f"prose mostly in {name} ({share:.0%} of its letters), which the rubric does not read: its "
                       "request and step-5 criteria were judged on the code, logs and errors alone")
    body = _prose(doc.get("prose"))
    code = _prose(doc.get("code"))
    logs = body.log_lines + code.log_lines + sum(len(doc.get(loc).splitlines()) for loc in ("frame", "error"))
    if body.words <= MAX_LOG_WORDS and logs >= MIN_LOG_LINES:
        reasons.append("the description is nothing but a pasted log or traceback: what the reporter saw and wants "
                       "is not said in words")
    if is_bot_report(doc, author):
        reasons.append("a bot's or CI template report: its fields are a form's, not a person's account")
    elif _one_line(doc, body, logs + len(doc.get("code").splitlines())):
        reasons.append("the description is one short line: too little to read a request or a criterion from")
    return tuple(reasons)


def foreign_script(doc: Document) -> tuple[str, float] | None:
    """The script most of the prose is written in, when the rubric does not read it: (name, weighted share)."""
    text = "\n".join(doc.get(loc) for loc in ("title", "prose", "comment"))
    if text.isascii():
        return None
    encoded = _NOT_PROSE.regex.sub(b" ", text.encode("utf-8", "replace"))
    if sum(len(m.group(0)) for m in _FOREIGN.regex.finditer(encoded)) < 2 * MIN_FOREIGN:  # UTF-8: 2+ bytes each
        return None  # accents, emoji, a name: not the prose (the common case, decided in one scan)
    text = encoded.decode("utf-8", "replace")
    latin = len(text.encode("ascii", "ignore").translate(None, _NOT_ASCII_LETTER))
    counted = [(name, sum(len(m.group(0)) for m in run.regex.finditer(text)), weight) for name, run, weight in _RUNS]
    foreign = sum(n * w for _, n, w in counted)
    name = max(counted, key=lambda item: item[1] * item[2])[0]
    if sum(n for _, n, _ in counted) < MIN_FOREIGN or foreign < MIN_SHARE * (foreign + latin):
        return None
    if name == "Chinese" and {n: c for n, c, _ in counted}["Japanese"] > 0:
        name = "Japanese"  # kanji with kana: Japanese
    return name, foreign / (foreign + latin)


def is_bot_report(doc: Document, author: str = "") -> bool:
    if author and _BOT_LOGIN.regex.search(author):
        return True
    text = doc.get("title") + "\n" + doc.get("prose")
    folded = text.casefold()
    return sum(1 for p in _CI_TEMPLATE if p.search(text, folded)) >= 2


def _prose(prose: str) -> _Prose:
    """Words of a text outside log lines, and how many log lines (one RE2 pass over the text)."""
    lines = prose.split("\n")
    encoded = [line.encode("utf-8", "replace") for line in lines]
    starts, at = [], 0
    for line in encoded:
        starts.append(at)
        at += len(line) + 1
    logged = {bisect_right(starts, m.start()) - 1 for m in _LOG_LINE.regex.finditer(b"\n".join(encoded))}
    words = sum(len(line.split()) for i, line in enumerate(lines) if i not in logged)
    return _Prose(words, len(logged))


def _one_line(doc: Document, body: _Prose, logs: int) -> bool:
    lines = [line for line in doc.get("prose").splitlines() if line.strip()] + [""] * logs
    comments = len(doc.get("comment").split())
    said = body.words + len(doc.get("title").split())
    return len(lines) <= 1 and said <= MAX_ONE_LINE_WORDS and comments < MIN_COMMENT_WORDS
