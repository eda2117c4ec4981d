"""A cache is a speed-up, never an authority (issue 37): a compiled queue or a kept parse that anyone able to write
the cache folder can forge never changes a plan.

The red team's two forgeries, through the real entrypoint.py against the GitHub stand-in, with the cache folder and
the installation's secret where the test says (PTD_TRIAGE_CACHE, PTD_TRIAGE_CACHE_KEY): the folder is warmed by a
first run, then
- the compiled queue under its own (computable) key, every pattern's literals edited so that no crash pattern can
  match: the crash is still flagged, the plan is the first run's;
- a kept parse of labels.json whose review label reads `High Priority` (the file on disk unchanged), with a compiled
  form that says the forged queue was checked: the bot adds `triage review`, never `High Priority`.
Each forgery is tried unsigned (what anyone can write), and signed with another installation's secret (a cache
restored from elsewhere). The control: the same edit signed with this installation's own secret is taken (it
suppresses the flag), so the test can see a forgery that works; and a secret inside the cache folder is no secret.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from actionrun import QUEUE, REPO, issues_payload, run_action, seed_issue
from test_said_by import CRITERIA, REPORTER

from triage.config import compiled, signing
from triage.config.repo import bundled_sources

CRASH = CRITERIA["crash"]
NEVER = "\u0000never-in-any-issue"


@pytest.fixture
def where(tmp_path):
    cache, key = tmp_path / "cache", tmp_path / "private" / "cache.key"
    return cache, key


def _run(fake, tmp_path, where, number: int, *, ok: bool = True):
    cache, key = where
    env = {compiled.ENVIRONMENT: str(cache), compiled.KEY_ENVIRONMENT: str(key)}
    run = run_action(fake, tmp_path, "issues", issues_payload(fake, number, "labeled", label=QUEUE), env=env)
    assert run.returncode == 0 or not ok, run.stdout + run.stderr
    return run


def _sign(data: bytes, key_path, monkeypatch) -> bytes:
    """`data` signed as the installation whose secret is at `key_path` signs (made if absent)."""
    monkeypatch.setenv(compiled.KEY_ENVIRONMENT, str(key_path))
    signing._SECRETS.clear()
    try:
        signed = signing.signed(data, [])
    finally:
        signing._SECRETS.clear()
    assert signed is not None
    return signed


def _unsigned(path) -> dict:
    """A kept file's JSON without its signature: what a forger starts from."""
    document = json.loads(path.read_bytes())
    document.pop("mac")
    return document


def _bytes(document: dict) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


SIGNERS = {"unsigned": None, "another installation's secret": "other.key"}


@pytest.mark.parametrize("signer", list(SIGNERS))
def test_a_forged_compiled_queue_does_not_suppress_a_crash_flag(fake_github, tmp_path, where, monkeypatch, signer):
    seed_issue(fake_github, 1, CRASH, author=REPORTER)
    seed_issue(fake_github, 2, CRASH, author=REPORTER)
    first = _run(fake_github, tmp_path, where, 1)
    assert first.outputs["outcome"] == "high_priority"
    (queue_file,) = where[0].glob("queue-*.json")
    document = _unsigned(queue_file)
    document["patterns"] = [[source, case, [NEVER]] for source, case, _ in document["patterns"]]
    data = _bytes(document)
    queue_file.write_bytes(data if SIGNERS[signer] is None else _sign(data, tmp_path / SIGNERS[signer], monkeypatch))

    again = _run(fake_github, tmp_path, where, 2)
    assert again.outputs["outcome"] == "high_priority"
    assert "triage review" in fake_github.issue_labels(REPO, 2)
    plan = json.loads(again.outputs["plan"])
    assert plan["reasons"][1:] == json.loads(first.outputs["plan"])["reasons"][1:]  # the same reading as before


def test_control_the_same_edit_signed_by_this_installation_is_taken(fake_github, tmp_path, where, monkeypatch):
    """What makes the two tests above mean something: had the forger this installation's secret, the edit would
    suppress the flag (the cache IS consulted, and its literals decide what is scanned)."""
    seed_issue(fake_github, 1, CRASH, author=REPORTER)
    seed_issue(fake_github, 2, CRASH, author=REPORTER)
    _run(fake_github, tmp_path, where, 1)
    (queue_file,) = where[0].glob("queue-*.json")
    document = _unsigned(queue_file)
    document["patterns"] = [[source, case, [NEVER]] for source, case, _ in document["patterns"]]
    queue_file.write_bytes(_sign(_bytes(document), where[1], monkeypatch))
    assert _run(fake_github, tmp_path, where, 2).outputs["outcome"] != "high_priority"


def _forge_labels(cache, sign) -> None:
    """The kept parse of labels.json with the review label renamed, and a compiled form saying the forged queue
    passed every check (under the key anyone computes for it)."""
    kept = next(p for p in cache.glob("document-*.json") if "queue_label" in _unsigned(p)["data"])
    document = _unsigned(kept)
    review = next(s for s in document["data"]["labels"] if s["role"] == "review")
    review["name"] = "High Priority"
    kept.write_bytes(sign(_bytes(document)))
    sources = bundled_sources("distributed")
    forged = replace(sources, labels=replace(sources.labels, data=document["data"]))
    (real,) = [p for p in cache.glob("queue-*.json")]
    form = _unsigned(real)
    form["key"] = compiled.queue_key(forged)
    (cache / compiled.file_name(form["key"])).write_bytes(sign(_bytes(form)))


@pytest.mark.parametrize("signer", list(SIGNERS))
def test_a_forged_parse_of_labels_json_never_gives_the_bot_high_priority(fake_github, tmp_path, where, monkeypatch,
                                                                         signer):
    seed_issue(fake_github, 1, CRASH, author=REPORTER)
    seed_issue(fake_github, 2, CRASH, author=REPORTER)
    _run(fake_github, tmp_path, where, 1)
    key = None if SIGNERS[signer] is None else tmp_path / SIGNERS[signer]
    _forge_labels(where[0], (lambda data: data) if key is None else (lambda data: _sign(data, key, monkeypatch)))

    run = _run(fake_github, tmp_path, where, 2)
    labels = fake_github.issue_labels(REPO, 2)
    assert "triage review" in labels and all(label.casefold() != "high priority" for label in labels), labels
    assert run.outputs["outcome"] == "high_priority"


def test_even_signed_the_bot_never_writes_high_priority_in_any_spelling(fake_github, tmp_path, where, monkeypatch):
    """Had the forger this installation's secret, the queue would say the review label is `High Priority`: the last
    gate before the network refuses it (the issue fails, one error line, nothing written)."""
    seed_issue(fake_github, 1, CRASH, author=REPORTER)
    seed_issue(fake_github, 2, CRASH, author=REPORTER)
    _run(fake_github, tmp_path, where, 1)
    _forge_labels(where[0], lambda data: _sign(data, where[1], monkeypatch))
    run = _run(fake_github, tmp_path, where, 2, ok=False)
    assert run.returncode == 1 and "refusing to add labels outside the allowlist: ['High Priority']" in run.stdout
    assert not [w for w in run.writes if w.path.endswith("/labels")]
    assert all(label.casefold() != "high priority" for label in fake_github.issue_labels(REPO, 2))


def test_a_secret_inside_the_cache_folder_is_no_secret(fake_github, tmp_path, monkeypatch):
    """A secret kept in the folder it signs would travel with a restored cache: then nothing is cached at all."""
    cache = tmp_path / "cache"
    seed_issue(fake_github, 1, CRASH, author=REPORTER)
    _run(fake_github, tmp_path, (cache, cache / "cache.key"), 1)
    assert not list(cache.glob("*.json")) and not (cache / "cache.key").exists()


def test_a_secret_others_may_read_is_not_used(tmp_path, monkeypatch):
    key = tmp_path / "cache.key"
    key.write_text("ab" * 32 + "\n", encoding="utf-8")
    key.chmod(0o644)
    monkeypatch.setenv(compiled.KEY_ENVIRONMENT, str(key))
    signing._SECRETS.clear()
    assert signing.signed(b"{}", []) is None  # not made anew over it either
    key.chmod(0o600)
    assert signing.signed(b"{}", []) is not None
    signing._SECRETS.clear()
