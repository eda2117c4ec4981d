"""A queue compiled once (issue 27): the first load writes down what checking and compiling it learned
(triage.config.compiled), and a later load of the same sources under the same code reads it back instead of
checking the queue again and re-parsing its patterns. What must hold: a warm load calls neither the checks nor
Python's regex parser nor RE2's compiler, and plans exactly as a cold load does; anything wrong with the file
(corrupt, another key, another version, a changed queue, changed code) is ignored and rebuilt, never trusted; an
invalid queue is never written down. (How long a load takes is measured in bench/startup.py, not here.)"""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from actionrun import FSDP_WITH_REPRO, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE

import triage.config.bundle as bundle
from triage.config import compiled
from triage.config.bundle import ConfigError, bundled_queue, load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue
from triage.text import patterns

ROOT = Path(__file__).resolve().parents[1]
CRASH = ("NCCL all_reduce hangs forever on 8 nodes",
         "After upgrading to 2.5 the job hangs in all_reduce on rank 3; it worked in 2.4.\n```\nTraceback (most recent "
         "call last):\n  File \"train.py\", line 3, in <module>\nRuntimeError: NCCL error: unhandled system error\n```")


def forget() -> None:
    """A fresh process's caches: nothing loaded, compiled or known."""
    bundle._load.cache_clear()
    patterns._compiled.cache_clear()
    patterns._KNOWN.clear()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    where = tmp_path / "compiled"
    monkeypatch.setenv(compiled.ENVIRONMENT, str(where))
    forget()
    yield where
    forget()


class Counter:
    """Counts the calls of what it wraps."""

    def __init__(self, wrapped) -> None:
        self.wrapped, self.calls = wrapped, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.wrapped(*args, **kwargs)


@pytest.fixture
def spies(monkeypatch):
    parser = Counter(patterns._sre_parse.parse)
    monkeypatch.setattr(patterns, "_sre_parse", SimpleNamespace(parse=parser))
    re2_compile = Counter(patterns._re2)
    monkeypatch.setattr(patterns, "_re2", re2_compile)
    checks = Counter(bundle.check)
    monkeypatch.setattr(bundle, "check", checks)
    return SimpleNamespace(parser=parser, re2=re2_compile, checks=checks)


def plans(loaded) -> list[dict]:
    out = []
    for number, (title, body) in enumerate((FSDP_WITH_REPRO, NEEDS_REPRO, NOT_DISTRIBUTED, CRASH), 1):
        issue = {"number": number, "title": title, "body": body, "labels": [{"name": QUEUE}], "state": "open",
                 "user": {"login": "reporter", "type": "User"}, "comments": 0}
        plan = plan_issue(snapshot_from_json(issue), loaded).to_dict()
        out.append({**plan, "elapsed_ms": 0})
    return out


def files(where: Path) -> list[Path]:
    return sorted(where.glob("queue-*.json"))


def test_a_warm_load_skips_the_checks_and_the_regex_parser_and_plans_the_same(cache, spies):
    cold = load_bundle()
    assert spies.checks.calls == 1 and spies.parser.calls > 100 and spies.re2.calls > 100
    assert len(files(cache)) == 1
    cold_plans = plans(cold)

    forget()
    spies.parser.calls = spies.re2.calls = spies.checks.calls = 0
    warm = load_bundle()
    assert (spies.checks.calls, spies.parser.calls, spies.re2.calls) == (0, 0, 0)
    assert warm is not cold and plans(warm) == cold_plans
    assert 0 < spies.re2.calls < 150  # RE2 compiled only the patterns the plans used, on first use
    assert spies.parser.calls == 0


def test_a_warm_load_needs_no_jsonschema(cache):
    load_bundle()
    code = ("import sys; from triage.config.bundle import load_bundle; load_bundle(); "
            "print('jsonschema' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**_env(), compiled.ENVIRONMENT: str(cache)}, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "False", run.stdout + run.stderr


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != compiled.ENVIRONMENT}


BROKEN = {
    "not JSON": lambda doc: "{not json",
    "empty": lambda doc: "",
    "truncated": lambda doc: json.dumps(doc)[: len(json.dumps(doc)) // 2],
    "another key": lambda doc: json.dumps({**doc, "key": "0" * 64}),
    "another version": lambda doc: json.dumps({**doc, "version": compiled.VERSION + 1}),
    "another format": lambda doc: json.dumps({**doc, "format": "something else"}),
    "not checked": lambda doc: json.dumps({**doc, "checked": False}),
    "an extra field": lambda doc: json.dumps({**doc, "trusted": True}),
    "a pattern that is not a triple": lambda doc: json.dumps({**doc, "patterns": doc["patterns"] + [["x", True]]}),
    "a case that is not a boolean": lambda doc: json.dumps({**doc, "patterns": [["x", 1, None]]}),
    "an empty literal": lambda doc: json.dumps({**doc, "patterns": [["x", True, [""]]]}),
    "an empty literal set": lambda doc: json.dumps({**doc, "patterns": [["x", True, []]]}),
    "a list for a document": lambda doc: json.dumps([doc]),
    "too deep": lambda doc: "[" * 100 + "]" * 100,
}


@pytest.mark.parametrize("damage", list(BROKEN))
def test_a_damaged_compiled_form_is_ignored_and_rebuilt(cache, spies, damage):
    load_bundle()
    (path,) = files(cache)
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(BROKEN[damage](document), encoding="utf-8")

    forget()
    spies.parser.calls = spies.checks.calls = 0
    load_bundle()
    assert spies.checks.calls == 1 and spies.parser.calls > 100  # checked and compiled again: not trusted
    assert json.loads(path.read_text(encoding="utf-8")) == document  # and written again, whole


def test_a_changed_queue_gets_its_own_compiled_form(cache, tmp_path, spies):
    folder = tmp_path / "queue"
    shutil.copytree(bundled_queue("distributed"), folder)
    load_bundle(queue=folder)
    assert len(files(cache)) == 1
    template = sorted((folder / "templates").glob("*.md.j2"))[0]
    template.write_text(template.read_text(encoding="utf-8") + "\nThanks!\n", encoding="utf-8")

    forget()
    spies.checks.calls = 0
    load_bundle(queue=folder)
    assert spies.checks.calls == 1 and len(files(cache)) == 2  # not the old one's answers


def test_the_key_is_the_content_not_the_file_names(cache, tmp_path, spies):
    """The same queue in another folder is the same queue: warm."""
    load_bundle()
    folder = tmp_path / "elsewhere"
    shutil.copytree(bundled_queue("distributed"), folder)
    forget()
    spies.checks.calls = spies.parser.calls = 0
    load_bundle(queue=folder)
    assert (spies.checks.calls, spies.parser.calls) == (0, 0) and len(files(cache)) == 1


def test_every_field_of_the_sources_counts_but_where_they_came_from(tmp_path):
    from triage.config.repo import bundled_sources

    base = bundled_sources("distributed")
    key = compiled.queue_key(base)
    moved = replace(base, templates_dir=str(tmp_path), template_files={"x": ("elsewhere.yml", 3)},
                    prompt=(base.prompt[0], ("elsewhere.yml", 9)))
    assert compiled.queue_key(moved) == key
    assert compiled.queue_key(replace(base, prompt=(base.prompt[0] + "!", base.prompt[1]))) != key
    assert compiled.queue_key(replace(base, templates={**base.templates, "new": "Hi"})) != key
    labels = replace(base.labels, data={**base.labels.data, "queue_label": "oncall: other"})
    assert compiled.queue_key(replace(base, labels=labels)) != key


def test_changed_code_is_a_different_key(cache, monkeypatch, spies):
    load_bundle()
    forget()
    monkeypatch.setattr(compiled, "code_version", lambda: "another version of the code")
    spies.checks.calls = 0
    load_bundle()
    assert spies.checks.calls == 1 and len(files(cache)) == 2


def test_the_code_version_covers_the_checking_code_and_the_dependencies():
    compiled.code_version.cache_clear()
    try:
        assert compiled.code_version() == compiled.code_version()
        real_read = Path.read_bytes

        def edited(path):
            data = real_read(path)
            return data + b"# edited" if path.name == "frames.py" else data

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Path, "read_bytes", edited)
            compiled.code_version.cache_clear()
            changed = compiled.code_version()
        compiled.code_version.cache_clear()
        assert changed != compiled.code_version()
    finally:
        compiled.code_version.cache_clear()


def test_an_invalid_queue_is_never_written_down(cache, tmp_path):
    folder = tmp_path / "queue"
    shutil.copytree(bundled_queue("distributed"), folder)
    rubric = folder / "rubric.yaml"
    rubric.write_text(rubric.read_text(encoding="utf-8").replace("min_score:", "min_score: [", 1), encoding="utf-8")
    with pytest.raises(ConfigError):
        load_bundle(queue=folder)
    assert files(cache) == []


def test_sources_that_are_not_plain_json_are_not_cached():
    from triage.config.source import Located
    from triage.config.validate import QueueSources

    def sources(rubric):
        return QueueSources(Located(rubric, "r.yaml"), Located({}, "l.json"), {}, "templates", {})

    assert compiled.queue_key(sources({"a": 1})) is not None
    assert compiled.queue_key(sources({1: "a"})) is None  # JSON would read it as "1"
    assert compiled.queue_key(sources({"when": __import__("datetime").date(2024, 1, 1)})) is None
    assert compiled.queue_key(sources({"a": float("nan")})) is None
    assert compiled.queue_key(sources({"a": 1})) != compiled.queue_key(sources({"a": 1.0}))
    assert compiled.queue_key(sources({"a": 1})) != compiled.queue_key(sources({"a": True}))


def test_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(compiled.ENVIRONMENT, "off")
    forget()
    try:
        assert load_bundle().rubric.topics and compiled.places() == []
    finally:
        forget()


def test_an_unwritable_place_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(compiled.ENVIRONMENT, str(blocker / "cache"))  # cannot be a directory
    forget()
    try:
        assert load_bundle().rubric.topics
    finally:
        forget()


def test_the_install_step_compiles_every_bundled_queue(tmp_path):
    """What action.yml runs after installing: afterwards a fresh process loads each bundled queue warm."""
    where = tmp_path / "compiled"
    env = {**_env(), compiled.ENVIRONMENT: str(where)}
    built = subprocess.run([sys.executable, "-m", "triage.config.precompile"], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    assert built.stdout.count("compiled:") == len(bundle.bundled_queues()) == len(files(where))
    probe = ("import types; import triage.text.patterns as p; "
             "from triage.config.bundle import bundled_queues, load_bundle; "
             "p._sre_parse = types.SimpleNamespace(parse=lambda *a: (_ for _ in ()).throw(SystemExit('parsed'))); "
             "[load_bundle(queue=name) for name in bundled_queues()]; print('warm')")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "warm", run.stdout + run.stderr


def test_action_yml_compiles_the_queues_when_it_builds_the_environment():
    import yaml

    steps = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["runs"]["steps"]
    build = next(step for step in steps if step.get("id") == "install")
    assert "-m triage.config.precompile" in build["run"]
    assert build["run"].index("pip install") < build["run"].index("-m triage.config.precompile") \
        < build["run"].index(".ptd-triage-key")  # after the install, before the environment is marked complete


def test_a_failed_write_leaves_no_temporary_file(cache, monkeypatch):
    def refuse(*args):
        raise PermissionError("read-only")

    monkeypatch.setattr(compiled.os, "replace", refuse)
    assert compiled.write("0" * 64, {("a", True)}) is None
    assert list(cache.iterdir()) == []


def test_compile_patterns_compiles_every_pattern_a_plan_may_run(cache):
    """eval compiles the queue's patterns before it times the planner (triage.config.bundle.compile_patterns): a
    warm load leaves each to its first use, and the first issues planned would pay for the whole queue's compile."""
    from dataclasses import fields, is_dataclass

    from triage.config.bundle import compile_patterns
    from triage.text.patterns import Pattern

    load_bundle()  # cold: compiles, and writes the compiled form
    forget()
    bundle = load_bundle()  # warm: RE2 compiles each pattern on its first use
    found, stack, seen = [], [bundle.rubric], set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Pattern):
            found.append(item)
        elif is_dataclass(item):
            stack.extend(getattr(item, f.name) for f in fields(item))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    assert found and any(p.compiled is None for p in found)
    assert compile_patterns(bundle) == len(found)
    assert all(p.compiled is not None for p in found)


def test_a_warm_load_reads_the_kept_parse_of_its_documents_not_yaml(cache, monkeypatch):
    """rubric.yaml is a few thousand lines: parsing it with PyYAML (and checking it within safe_yaml's bounds) was
    most of a warm load. A document whose text was parsed before, under the same code, is read back from its kept
    parse: the same data and the same line of every key path."""
    from triage.config import source

    cold = source.load_document(bundled_queue("distributed") / "rubric.yaml")
    parses = Counter(source.parse_document)
    monkeypatch.setattr(source, "parse_document", parses)
    first = compiled.load_document(bundled_queue("distributed") / "rubric.yaml")
    assert parses.calls == 1 and sorted(cache.glob("document-*.json"))
    again = compiled.load_document(bundled_queue("distributed") / "rubric.yaml")
    assert parses.calls == 1  # the kept parse, not YAML
    assert (again.data, again.marks, again.file) == (first.data, first.marks, first.file) == (
        cold.data, cold.marks, cold.file)


def test_a_damaged_kept_document_is_parsed_again_and_rewritten(cache, tmp_path, monkeypatch):
    from triage.config import source

    folder = tmp_path / "q"
    shutil.copytree(bundled_queue("distributed"), folder)
    compiled.load_document(folder / "labels.json")
    (kept,) = cache.glob("document-*.json")
    kept.write_text('{"format": "ptd-triage compiled queue", "version": 1, "key": "x", "data": {}, "marks": []}')
    parses = Counter(source.parse_document)
    monkeypatch.setattr(source, "parse_document", parses)
    got = compiled.load_document(folder / "labels.json")
    assert parses.calls == 1 and got.data["queue_label"] == "oncall: distributed"
    assert json.loads(kept.read_text())["key"] != "x"  # written again, whole


def test_an_edited_document_is_parsed_again(cache, tmp_path, monkeypatch):
    from triage.config import source

    folder = tmp_path / "q"
    shutil.copytree(bundled_queue("distributed"), folder)
    compiled.load_document(folder / "labels.json")
    path = folder / "labels.json"
    path.write_text(path.read_text(encoding="utf-8").replace("oncall: distributed", "oncall: storage", 1),
                    encoding="utf-8")
    assert compiled.load_document(path).data["queue_label"] == "oncall: storage"
