"""Measure a model once, then compare rubric changes against it for free: `eval --planner hybrid --record DIR`
against a stand-in model over real HTTP, then `eval --replay DIR` offline (no key, no server) gives the same plans
and the same figures, and reports the model calls, tokens and cost."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "tests" / "data" / "eval_small.jsonl"


def _eval(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "triage", "eval", str(SMALL), "--format", "json", *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_record_then_replay_offline_gives_the_same_figures(fake_openai, tmp_path):
    record = tmp_path / "replies"
    live = _eval("--planner", "llm", "--llm-provider", "openai", "--llm-model", "m", "--llm-base-url", fake_openai.url,
                 "--record", str(record), "--llm-price", "1", "2",
                 env_extra={"OPENAI_API_KEY": fake_openai.api_key})
    assert live.returncode == 0, live.stderr
    asked = len(fake_openai.calls)
    assert asked > 0 and any(record.iterdir())
    offline = _eval("--planner", "llm", "--replay", str(record), "--llm-price", "1", "2")  # no key, no URL: offline
    assert offline.returncode == 0, offline.stderr
    assert len(fake_openai.calls) == asked  # the replay asked nobody
    first, second = json.loads(live.stdout), json.loads(offline.stdout)
    assert _figures(first) == _figures(second)
    assert first["routing"]["scored"] > 0
    assert "api_key" not in live.stdout and fake_openai.api_key not in live.stdout + live.stderr
    # Per run and per issue: the input tokens, the cached ones among them (the stand-in caches the system prompt
    # as OpenAI does, from the second call on), priced at the cached price; recorded and replayed alike.
    model = first["model"]
    per_issue = model["per_issue"]
    assert len(per_issue) == model["issues_asked"] == asked and per_issue[0]["cached_input_tokens"] == 0
    assert all(i["cached_input_tokens"] > 0 for i in per_issue[1:])
    assert model["cached_input_tokens"] == sum(i["cached_input_tokens"] for i in per_issue) > 0
    assert per_issue[1]["cost_usd"] < per_issue[0]["cost_usd"]
    text = _eval("--planner", "llm", "--replay", str(record), "--llm-price", "1", "2", "--format", "text")
    assert f"({model['cached_input_tokens']} cached, 0 written to the cache)" in text.stdout
    assert "Per issue asked:" in text.stdout and "cached) on average, cost $" in text.stdout


def _figures(report):
    """Everything but what a re-run changes by itself: times and the model's latency."""
    if isinstance(report, dict):
        return {k: _figures(v) for k, v in report.items() if "timing" not in k and "latency" not in k}
    if isinstance(report, list):
        return [_figures(v) for v in report]
    return report
