"""Issue 19 item 4: docs/forking.md is a complete, tested guide.

Every YAML and JSON block in it is validated the way its first line says it is read:
- `# rubric.yaml`: a rubric section, layered over the storage example queue and validated as a whole;
- `# .github/ptd-triage.yml`: a repository file, over the bundled queue it extends (or alone, `extends: none`;
  a file that extends another repository gets the storage example as that repository's queue), validated and
  compiled, and its prompt rendered when it has one;
- a JSON block: labels.json entries, added to the storage example's allowlist and validated.
A block of any other kind fails the test, so no example escapes. Every rubric section the schema knows has a
heading of its own.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from triage.config.bundle import compile_sources, read_sources
from triage.config.repo import base_of, parse_repo_config, sources_for
from triage.config.validate import check

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "forking.md"
EXAMPLE = ROOT / "examples" / "queues" / "storage"


def blocks() -> list[tuple[str, int, str]]:
    """(language, line, text) of every fenced block with a language."""
    out = []
    lines = GUIDE.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        found = re.fullmatch(r"```(\w+)", lines[i].strip())
        if found:
            end = lines.index("```", i + 1)
            out.append((found.group(1), i + 2, "\n".join(lines[i + 1:end]) + "\n"))
            i = end
        i += 1
    return out


BLOCKS = [b for b in blocks() if b[0] in ("yaml", "yml", "json")]


def example_sources():
    return read_sources(EXAMPLE / "rubric.yaml", EXAMPLE / "labels.json", EXAMPLE / "templates")


def test_the_guide_has_examples_of_every_kind():
    kinds = [text.splitlines()[0] for lang, _, text in BLOCKS if lang != "json"]
    assert kinds.count("# rubric.yaml") >= 10 and kinds.count("# .github/ptd-triage.yml") >= 4
    assert any(lang == "json" for lang, _, _ in BLOCKS)


@pytest.mark.parametrize("lang,line,text", BLOCKS, ids=[f"line-{b[1]}" for b in BLOCKS])
def test_every_block_in_the_guide_is_valid(lang, line, text):
    where = f"docs/forking.md:{line}"
    if lang == "json":
        doc = json.loads(text)
        config = parse_repo_config(yaml.safe_dump({"labels": {"add": doc["labels"], "forbidden": doc["forbidden"]},
                                                   "queue_label": doc["queue_label"]}), where)
        problems = check(sources_for(config, base=example_sources()))
    elif text.startswith("# rubric.yaml\n"):
        config = parse_repo_config("rubric:\n" + "".join(f"  {l}\n" for l in text.splitlines()), where)
        problems = check(sources_for(config, base=example_sources()))
    elif text.startswith("# .github/ptd-triage.yml\n"):
        config = parse_repo_config(text, where)
        base = example_sources() if base_of(config)[0] == "repo" else None
        sources = sources_for(config, base=base)
        problems = check(sources)
        if not problems:
            bundle = compile_sources(sources)
            if "prompt" in config.data:
                _render_prompt(bundle)
    else:
        pytest.fail(f"{where}: a {lang} block must start with '# rubric.yaml' or '# .github/ptd-triage.yml' "
                    "so that this test knows how to check it")
    assert not problems, [str(p) for p in problems]


def _render_prompt(bundle):
    from triage.core.snapshot import snapshot_from_json
    from triage.planners.model.prompt import render

    snapshot = snapshot_from_json({"number": 1, "title": "cache corrupts data", "body": "", "labels": [],
                                   "user": {"login": "someone", "type": "User"}})
    prompt = render(snapshot, bundle)
    assert prompt.system and prompt.user


def test_every_rubric_section_has_a_heading_of_its_own():
    schema = json.loads((ROOT / "triage" / "config" / "rubric.schema.json").read_text(encoding="utf-8"))
    headings = " ".join(l for l in GUIDE.read_text(encoding="utf-8").splitlines() if l.startswith("#"))
    sections = set(schema["properties"]) - {"version", "description", "not_distributed"} | {"not_in_queue"}
    missing = sorted(s for s in sections if f"`{s}`" not in headings)
    assert not missing, f"docs/forking.md has no heading for rubric section(s) {missing}"
    for part in ("labels.json", "Templates", "prompt"):
        assert part.lower() in headings.lower(), part


def test_a_block_that_breaks_a_rule_is_caught():
    """The check above can fail: the same layering refuses a rubric section that names an unknown route."""
    config = parse_repo_config("rubric:\n  routing:\n    precedence: [block, object, core]\n", "docs/forking.md:1")
    problems = check(sources_for(config, base=example_sources()))
    assert any("route 'filesystem' is missing from routing.precedence" in str(p) for p in problems)


def test_a_problem_caused_by_a_removed_route_says_where_it_was_removed():
    """Issue 19 found the guide's example blamed a bundled file's line; now it also names the user's own line."""
    text = "extends: pt2\nrubric:\n  routing:\n    routes: {_remove: [cpu-inductor]}\n    precedence: [export, core]\n"
    problems = check(sources_for(parse_repo_config(text, ".github/ptd-triage.yml")))
    assert sorted(str(p).split(": ", 1)[1] for p in problems) == [
        "module 'module: cpu inductor' belongs to route 'cpu-inductor', which the rubric does not define "
        "(the route was removed at .github/ptd-triage.yml:4)",
        "topic 'cpu_inductor' points at route 'cpu-inductor', which routing.routes does not define "
        "(the route was removed at .github/ptd-triage.yml:4)"]
