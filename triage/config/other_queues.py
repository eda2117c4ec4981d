"""Does a queue's prompt or a comment template speak of another queue? (issue 40) A fork that copies a queue (the
guide's quickest start is to copy the storage example) and edits its rubric and labels can keep the copied words:
a prompt that still says "the queue of a storage system", a template that still says "the triage bot of the storage
queue". Nothing fails (the text renders), so `validate` warns, at the line.

What names a queue is data, read from the queues themselves: its queue label (`sig: storage`), its command word
(`/storage-retriage`), and its name (`words.queue`, else the queue label's last part) followed by what only a queue's
name is followed by ("storage queue", "storage system", "storage issue", "storage problem"). The other queues are
the bundled ones (read from their files) and the copy-and-edit example (not in the wheel, so its identity is kept
here, and tests/test_other_queues.py keeps it equal to examples/queues/storage/). A queue is never warned about its
own words, nor about a queue whose name or label it shares; Jinja comments (`{# ... #}`) are not read.

May import: the standard library, `triage.config` (bundled, compiled, rubric, source, validate, words).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from triage.config.bundled import bundled_folder, bundled_names
from triage.config.rubric import DEFAULT_COMMAND
from triage.config.validate import Problem, QueueSources
from triage.config.words import canonical, queue_words

WARNING = "warning: "  # what sets a warning apart from a problem (`validate` exits 0 on warnings alone)
_COMMENT = re.compile(r"\{#.*?#\}", re.DOTALL)
_AFTER_NAME = r"\)?\s+(?:queue|system|issues?|problems?|oncall)\b"


@dataclass(frozen=True)
class Identity:
    """What names a queue in text."""

    describe: str  # "the bundled pt2 queue", said in the warning
    queue_label: str
    command: str
    name: str

    def terms(self) -> list[tuple[str, re.Pattern]]:
        """(what is said, its pattern): the label and the command word as written, the name as a queue's name."""
        found = [(self.queue_label, re.compile(re.escape(self.queue_label) + r"(?![\w-])", re.IGNORECASE))]
        if self.command:
            found.append((self.command, re.compile(re.escape(self.command) + r"(?![\w-])", re.IGNORECASE)))
        found.append((self.name, re.compile(r"(?<![\w-])" + re.escape(self.name) + _AFTER_NAME, re.IGNORECASE)))
        return found


# The copy-and-edit example (examples/queues/storage/, outside the package): its identity, as its files say.
EXAMPLES = (Identity("the example storage queue (examples/queues/storage)", "sig: storage", "/storage-retriage",
                     "storage"),)


def identity_of(rubric_data, labels_data, describe: str = "this queue") -> Identity:
    rubric = canonical(rubric_data) if isinstance(rubric_data, dict) else {}
    label = str((labels_data or {}).get("queue_label") or "") if isinstance(labels_data, dict) else ""
    words = rubric.get("words") if isinstance(rubric.get("words"), dict) else None
    return Identity(describe, label, str(rubric.get("command") or DEFAULT_COMMAND), queue_words(words, label).queue)


def known_queues() -> list[Identity]:
    """The bundled queues (from their files) and the example."""
    from triage.config.compiled import load_document

    found = []
    for name in bundled_names():
        folder = bundled_folder(name)
        if folder is None:
            continue
        labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        found.append(identity_of(load_document(folder / "rubric.yaml").data, labels, f"the bundled {name} queue"))
    return found + list(EXAMPLES)


def _same_queue(own: Identity, other: Identity) -> bool:
    if own.queue_label.casefold() == other.queue_label.casefold() or own.name.casefold() == other.name.casefold():
        return True
    return re.search(r"(?<![\w-])" + re.escape(other.name) + r"(?![\w])", own.name, re.IGNORECASE) is not None


def _texts(sources: QueueSources):
    """(what, text, file, the text's first line, whether it is a file of its own) for the prompt and each template."""
    if sources.prompt is not None:
        text, (file, first) = sources.prompt
        yield "prompt", text, file, first, str(file).endswith(".j2")
    for name, text in sorted(sources.templates.items()):
        file, first = sources.template_files.get(name, (f"{sources.templates_dir}/{name}.md.j2", 1))
        yield f"template '{name}'", text, file, first, str(file).endswith(".j2")


def _line(text: str, offset: int, first: int | None, own_file: bool) -> int | None:
    line = text.count("\n", 0, offset) + 1
    if not first:
        return None
    return first + line - 1 if own_file else first + line  # a config's `key: |` block starts on the next line


def other_queue_warnings(sources: QueueSources, known: list[Identity] | None = None) -> list[Problem]:
    """One warning per (text, term): a prompt or template of this queue that says another queue's label, command
    word or name, at the line of its first mention."""
    own = identity_of(sources.rubric.data, sources.labels.data)
    others = [q for q in (known if known is not None else known_queues()) if not _same_queue(own, q)]
    out = []
    for what, text, file, first, own_file in _texts(sources):
        bare = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for other in others:
            for said, pattern in other.terms():
                if said.casefold() in (own.queue_label.casefold(), own.command.casefold()):
                    continue
                match = pattern.search(bare)
                if match is None:
                    continue
                out.append(Problem(file, _line(bare, match.start(), first, own_file),
                                   f"{WARNING}the {what} names another queue: {match.group(0)!r}, a word of "
                                   f"{other.describe}. Copied from it? Say this queue's own ('{own.queue_label}')"))
    return out
