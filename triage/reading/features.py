"""What step 4's learned scorer reads of an issue (`triage.reading.scorer`): one definition, for training and use.

An issue is read as
- the word unigrams and bigrams of its title, its description's prose and people's comments, each marked with where
  it was said (`t:`, `p:`, `c:`), with identifiers, inline code and numbers masked (`<name>`, `<code>`, `<num>`):
  what one writer calls `fully_shard` another calls `all_reduce`, and the model is to learn how people ask, not what
  they name, so that it carries across writers and queues;
- a few language-neutral facts about the text's shape: a script, a traceback frame, an error line, an environment
  dump, a comment; how long the prose is; a title that is a question;
- the rubric's own step-4 scores (the request check's evidence for and against it, the feature, enhancement and
  performance checks' totals: `triage.core.request_type`), scaled by 1/3 and clipped at +-3, so the rubric's
  phrases stay evidence the model weighs.

The words and shape facts are one vector scaled to unit length (a long issue does not count more than a short one);
the rubric's scores are added as they are. A feature is a string; a model keeps a weight per hashed string
(`bucket`: CRC-32, stable across processes and platforms, unlike `hash()`), so shipped weights hold no issue text.

Cost: a translation and a split of each location's text (linear), at most `MAX_TOKENS` tokens kept per location.

May import: the standard library, `triage.text`.
"""

from __future__ import annotations

import math
import string
import zlib
from collections.abc import Mapping

from triage.text.document import Document

WHERE = (("title", "t:"), ("prose", "p:"), ("comment", "c:"))
SHAPE = ("code", "frame", "error", "environment", "comment")
# The rubric's step-4 scores read: the request check's evidence for and against apart (a tracking list filed with the
# feature template has both, and its "against" is what makes it no request); the request model reads those two, the
# feature-or-enhancement model the other checks' totals too (they are weighed only for an issue found a request).
REQUEST_SCORES = ("request_for", "request_against")
RUBRIC_SCORES = (*REQUEST_SCORES, "feature", "enhancement", "performance")
MAX_TOKENS = 3000  # per location: real issues have a few hundred words; a 64 KB hostile body, tens of thousands
MAX_CODE = 80  # characters: a longer `...` span is not inline code
# Every ASCII character that is no part of a word becomes a space ("?" and "!" stand alone): the text is then split.
_SPLIT = str.maketrans({**{c: " " for c in string.punctuation + string.whitespace if c not in "_.'?!"},
                        "?": " ? ", "!": " ! "})
_WORD_START = frozenset(string.ascii_letters + "_")


def bucket(feature: str, bits: int) -> int:
    return zlib.crc32(feature.encode("utf-8")) & ((1 << bits) - 1)


def tokens(text: str) -> list[str]:
    """The words of a text, lower-cased, with identifiers, inline code and numbers masked; words in other scripts
    are left out (`triage.reading.unread` says so). Linear: a translation and a split, no pattern."""
    out: list[str] = []
    for i, part in enumerate(text.split("`")):
        if i % 2 and len(part) <= MAX_CODE and "\n" not in part:
            out.append("<code>")
            if len(out) >= MAX_TOKENS:
                return out
            continue
        for word in part.translate(_SPLIT).split():
            word = word.strip(".'")
            if not word:
                continue
            if word in ("?", "!"):
                out.append(word)
            elif word[0].isdigit():
                out.append("<num>")
            elif word[0] in _WORD_START:
                masked = "_" in word or "." in word or any(c.isdigit() for c in word) or _camel(word)
                out.append("<name>" if masked else word.lower())
            if len(out) >= MAX_TOKENS:
                return out
    return out


def _camel(word: str) -> bool:
    """An identifier's mixed case (`allReduce`, `FSDPModule`), not a capitalised or all-caps word (`Hello`, `DDP`)."""
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def words(doc: Document) -> dict[str, float]:
    """The n-gram and shape features, scaled to unit length (a long issue does not count more than a short one)."""
    out: dict[str, float] = {}
    for location, prefix in WHERE:
        said = tokens(doc.get(location))
        for i, word in enumerate(said):
            out[prefix + word] = 1.0
            if i + 1 < len(said):
                out[f"{prefix}{word} {said[i + 1]}"] = 1.0
    for location in SHAPE:
        if doc.get(location):
            out["has:" + location] = 1.0
    out["prose_words"] = math.log1p(len(doc.get("prose").split())) / 5
    if doc.get("title").rstrip().endswith("?"):
        out["title_question"] = 1.0
    norm = math.sqrt(sum(v * v for v in out.values())) or 1.0
    return {name: value / norm for name, value in out.items()}


def with_scores(found: Mapping[str, float], rubric_scores: Mapping[str, float],
                names=RUBRIC_SCORES) -> dict[str, float]:
    """The words and the rubric's scores named (scaled by 1/3, clipped at +-3)."""
    out = dict(found)
    for name in names:
        out["rubric:" + name] = max(-3.0, min(3.0, float(rubric_scores.get(name, 0.0)) / 3))
    return out


def type_features(doc: Document, rubric_scores: Mapping[str, float], names=RUBRIC_SCORES) -> dict[str, float]:
    """Every feature of one issue, by name: its words, and the rubric's step-4 scores named."""
    return with_scores(words(doc), rubric_scores, names)


def hashed(features: Mapping[str, float], bits: int,
           known: tuple[Mapping[int, float], ...] | None = None) -> tuple[dict[int, float], dict[int, list[str]]]:
    """Bucket -> summed value, and bucket -> the feature names in it (for the reasons). With `known` (models'
    weights), only the buckets some model weighs are kept: the others add nothing."""
    values: dict[int, float] = {}
    names: dict[int, list[str]] = {}
    mask, crc = (1 << bits) - 1, zlib.crc32
    for name, value in features.items():
        b = crc(name.encode("utf-8")) & mask
        if known is not None and not any(b in weights for weights in known):
            continue
        values[b] = values.get(b, 0.0) + value
        names.setdefault(b, []).append(name)
    return values, names
