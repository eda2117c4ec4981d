"""The shadow report guides (issue 40): on a queue's own history, its first screen gives per step the verdict, the
precision and recall with the counts under them, the labels the bot would add against how often people give them
(with the line that disables one they almost never give), and step 5's threshold table with the line to set; and
the lines it gives do what it says when applied, measured again from the cache without reading an issue.

The history is written into the GitHub stand-in from dataset rows (tests/shadow_history.py: each issue as it
entered the queue, then each of its people's labels as a person's label event). The shipped test uses an invented
set (examples/invented-sets/set7) whose people, like this queue's, never give `enhancement` or
`module: performance`; the counts it checks are taken from the rows, not from the report. The dev sets' test
(real issues and their people's real labels) needs ../shared/eval and skips without it: their text is not in the
repository.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakegithub import FakeGitHub
from shadow_history import QUEUE, read_rows, write_history
from shadow_world import shadow_cli

from triage.evaluation.shadow_markdown import md_escape

ROOT = Path(__file__).resolve().parents[1]
REPO = "acme/widgets"
INVENTED = ROOT / "examples" / "invented-sets" / "set7" / "issues.jsonl"
DEV_SETS = [ROOT.parent / "shared" / "eval" / name for name in ("dev.jsonl", "dev2.jsonl")]
NEVER = ("enhancement", "module: performance")  # what this queue's people do not use
SHORT = {"routing": "routing", "modules": "modules", "type": "type", "flag": "high priority",
         "reproduction": "reproduction"}


def _num(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _first_screen(markdown: str) -> str:
    return markdown.split("\n### Routing", 1)[0]


def _triaged(rows: list[dict]) -> list[dict]:
    """The rows a person triaged: an allowlisted label other than the marker among people's labels."""
    from triage.config.bundle import load_bundle

    labels = load_bundle().labels
    return [row for row in rows if any(name in labels.names and name != labels.marker
                                       for name in row["gold"]["labels"] if name != QUEUE)]


def _check_first_screen(report: dict, screen: str) -> None:
    """Per step: its verdict, precision and recall with the counts; the labels table; step 5's table."""
    for step, figures in report["steps"].items():
        verdict = report["verdicts"][step]
        assert f"| {SHORT[step]} | **{verdict['words']}**<br>" in screen, step
        assert (f"| {_num(figures['precision'])} | {_num(figures['recall'])} | {figures['caught']} / "
                f"{figures['missed']} / {figures['extra']} |") in screen, step
        assert verdict["verdict"] in ("ready", "change", "dry_run", "too_few")
        assert verdict["verdict"] != "ready" or figures["caught"] + figures["extra"] >= 5  # never on no evidence
    assert "| label | the bot would add | your people gave | both | to stop the bot adding it |" in screen
    assert "| threshold | people's caught | missed | extra holds |" in screen and " (now)**" in screen
    assert f"**Next:** {md_escape(report['next'])}" in screen


def test_the_first_screen_says_what_to_change_and_its_lines_do_it(tmp_path):
    rows = read_rows(INVENTED)
    for row in rows:
        row["gold"]["labels"] = [name for name in row["gold"]["labels"] if name not in NEVER]
    triaged = _triaged(rows)
    with FakeGitHub() as gh:
        since, until = write_history(gh, rows, repo=REPO)
        window = ("--since", since, "--until", until, "--cache", str(tmp_path / "cache"))
        first = shadow_cli(gh, *window, "--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md"))
        assert first.returncode == 0, first.stderr
        report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        screen = _first_screen((tmp_path / "r.md").read_text(encoding="utf-8"))
        _check_first_screen(report, screen)
        assert report["triaged_by_people"] == len(triaged) >= 40

        # how often people give each label, counted from the rows
        for row in report["labels"]:
            assert row["people_apply"] == sum(row["label"] in r["gold"]["labels"] for r in triaged), row["label"]
        enhancement = next(row for row in report["labels"] if row["label"] == "enhancement")
        assert enhancement["people_apply"] == 0 and enhancement["bot_adds"] > 0
        disable = report["disable_line"]
        assert "enhancement" in disable["labels"]
        assert f"| enhancement | {enhancement['bot_adds']} | 0 | 0 | people never give it: `labels.json: " \
               f"{disable['labels_json']}` |" in screen
        hp = report["high_priority_table"]
        assert hp["people_flagged"] == sum("high priority" in r["gold"]["labels"] for r in triaged) > 0
        suggested = hp["suggested"]
        if suggested is not None and suggested != hp["threshold"]:
            assert f"`rubric.yaml: high_priority: threshold: {suggested:g}`" in screen
        # the table says what any threshold does: try one other than today's (the suggested one if it differs)
        now = next(r for r in hp["rows"] if r["current"])
        other = suggested if suggested != hp["threshold"] else next(
            r["threshold"] for r in hp["rows"] if (r["caught"], r["extra"]) != (now["caught"], now["extra"]))

        # the two lines, as a repository's configuration file; measured again from the cache: no issue read
        config = tmp_path / "ptd-triage.yml"
        config.write_text(f"extends: distributed\nlabels:\n  disabled: {json.dumps(sorted(disable['labels']))}\n"
                          f"rubric:\n  high_priority:\n    threshold: {other:g}\n", encoding="utf-8")
        start = len(gh.requests)
        second = shadow_cli(gh, *window, "--config", str(config), "--json", str(tmp_path / "after.json"))
        assert second.returncode == 0, second.stderr
        assert {r.path for r in gh.requests[start:]} == {"/search/issues"}
        after = json.loads((tmp_path / "after.json").read_text(encoding="utf-8"))
        assert not any(row["label"] in disable["labels"] and row["bot_adds"] for row in after["labels"])
        type_before, type_after = report["steps"]["type"], after["steps"]["type"]
        assert type_after["extra"] == type_before["extra"] - enhancement["bot_adds"]
        assert type_after["caught"] == type_before["caught"]
        row = next(r for r in hp["rows"] if r["threshold"] == other)
        flag = after["steps"]["flag"]
        assert (flag["caught"], flag["missed"], flag["extra"]) == (row["caught"], row["missed"], row["extra"])
        assert gh.writes() == [] and not gh.violations


@pytest.mark.skipif(not all(path.is_file() for path in DEV_SETS), reason="the dev sets live in ../shared/eval")
def test_on_the_dev_sets_history_the_first_screen_names_the_labels_people_do_not_use(tmp_path):
    rows = [row for path in DEV_SETS for row in read_rows(path)]
    with FakeGitHub() as gh:
        since, until = write_history(gh, rows, repo=REPO)
        run = shadow_cli(gh, "--since", since, "--until", until, "--json", str(tmp_path / "r.json"), "--markdown",
                         str(tmp_path / "r.md"))
        assert run.returncode == 0, run.stderr
        report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        screen = _first_screen((tmp_path / "r.md").read_text(encoding="utf-8"))
        _check_first_screen(report, screen)
        assert report["triaged_by_people"] == len(_triaged(rows)) >= 40
        # the queue's people almost never give `enhancement`: the report says so, with the line that stops it
        enhancement = next(row for row in report["labels"] if row["label"] == "enhancement")
        assert enhancement["rarely_used"] and enhancement["bot_adds"] >= 3 * max(enhancement["people_apply"], 1)
        assert "enhancement" in report["disable_line"]["labels"]
        assert report["disable_line"]["labels_json"] in screen
        assert report["verdicts"]["routing"]["verdict"] == "ready"  # 212 of 216 on this history
        assert gh.writes() == [] and not gh.violations
