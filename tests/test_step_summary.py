"""The step summary a maintainer acts on (issue 21), looked at rendered: the markdown the real entrypoint writes,
turned into HTML by markdown-it-py (tests/summaryhtml.py) and checked for what a person sees: the dry run in the
headline and in every count, what needs a person first with its reason, the comment column, the marker named once,
hostile titles shown as text, cut at a word; and the size limits GitHub puts on a step's summary and outputs."""
from __future__ import annotations

import json
import re

import pytest

from actionrun import (FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, dispatch_payload,
                       parse_output_file, run_action, schedule_payload, seed_issue)
from summaryhtml import read
from sim.timeline import TEXTS

HOSTILE = ("FSDP | crash `rm -rf /` <script>alert(1)</script> **bold** [x](https://evil.example) <img src=x> "
           "supercalifragilistic words to make this title much longer than seventy characters")
SCENARIOS = [TEXTS["hp_no_repro"], NOT_DISTRIBUTED, FSDP_WITH_REPRO, NEEDS_REPRO, TEXTS["infra"], TEXTS["vague"],
             (HOSTILE, FSDP_WITH_REPRO[1])]


def _seed_twenty(fake) -> None:
    for n in range(1, 21):
        seed_issue(fake, n, SCENARIOS[n % len(SCENARIOS)])


def _tables(blocks):
    return [b for b in blocks if b.tag == "table"]


def _before_details(blocks):
    """What a person reads before the notes about the run (the search query names the marker) and the details."""
    end = next((i for i, b in enumerate(blocks) if b.tag == "details" and b.text.startswith("Steps and evidence")
                or b.text == "This run"), len(blocks))
    return blocks[:end]


def _assert_no_empty_header(blocks):
    for table in _tables(blocks):
        assert table.header and all(cell for cell in table.header), table.header


@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "live"])
def test_a_twenty_issue_sweep_reads_in_the_order_a_maintainer_acts(fake_github, tmp_path, dry):
    _seed_twenty(fake_github)
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(),
                     inputs={"dry-run": "true" if dry else "false", "max-issues": "20"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert (run.writes == []) is dry
    blocks, tags = read(run.summary)
    headline = blocks[0]
    assert headline.tag == "h2" and ("dry run" in headline.text) is dry

    # First, what a person must do, what the bot says in public (issue 31): two lines under the headline.
    need, said = blocks[1], blocks[2]
    assert need.tag == said.tag == "li"
    waiting = re.fullmatch(r"(\d+) of 20 (would need|needs|need) a person: (.+)", need.text)
    assert waiting and waiting.group(2) == ("would need" if dry else "need"), need.text
    assert "possibly high priority" in waiting.group(3) and "not distributed" in waiting.group(3)
    commented = re.fullmatch(r"(\d+) comments (would be|were) posted, listed below", said.text)
    assert commented and commented.group(2) == ("would be" if dry else "were"), said.text

    # Every count says what the run did, or would have done: a dry run never says "triaged 20".
    counts = next(b.text for b in blocks if b.text.startswith("Found 20"))
    if dry:
        assert "would triage 20" in counts and "Nothing was written" in counts
        assert not re.search(r"(?<!would )\btriaged \d", run.summary) and "found 20, would triage 20" in run.stdout
    else:
        assert "triaged 20" in counts and "would" not in counts

    # What needs a person first, with its reason and what the bot adds and posts; then the comments; then every
    # issue with its comment.
    sections = [b for b in _before_details(blocks) if b.tag == "h3"]
    assert re.fullmatch(r"(Would need|Needs) a person \(\d+\)", sections[0].text), sections
    assert sections[0].text.endswith(f"({waiting.group(1)})")
    assert sections[1].text == (f"Would post ({commented.group(1)} comments)" if dry else
                                f"Posted ({commented.group(1)} comments)")
    assert sections[2].text == ("Would triage (20)" if dry else "Triaged (20)")
    person, comments, every = _tables(blocks)[:3]
    labels_head = "Would add" if dry else "Labels added"
    comment_head = "Would post" if dry else "Comment posted"
    assert person.header == ["Issue", "Why", labels_head, comment_head]
    assert len(person.rows) == int(waiting.group(1))
    reasons = [row[1] for row in person.rows]
    assert any(r.startswith("possibly high priority: ") for r in reasons)
    assert any(r.startswith("not distributed: not in the queue") for r in reasons)
    assert all(r for r in reasons) and all(row[2] != "-" for row in person.rows)
    # The rubric's description of a criterion, never its id; the hold explained once, above the table.
    assert not any(re.search(r"\b[a-z]+_[a-z_]+\b", r) for r in reasons if "high priority" in r), reasons
    assert any("crash, segfault or illegal memory access" in r for r in reasons), reasons
    assert "no marker until a person looks" not in run.summary
    hold = [b.text for b in blocks if "get the review label and no marker" in b.text or
            "gets the review label and no marker" in b.text]
    assert len(hold) == 1
    assert comments.header == ["Issue", "Comment", "What it says"]
    assert len(comments.rows) == int(commented.group(1))
    assert {row[2] for row in comments.rows} == {"asks the reporter for a reproduction",
                                                 "that it looks not distributed; a maintainer moves it"}
    assert every.header == ["Issue", "Outcome", labels_head, comment_head]
    assert len(every.rows) == 20 and all(len(row) == 4 for row in every.rows)  # a title's pipe splits no row
    posted = {row[3] for row in every.rows}
    assert "not_distributed" in posted and "needs_distributed_reproduction" in posted and "-" in posted
    flagged = sum(1 for row in every.rows if row[1] == "high_priority")
    assert f"(not to the {flagged} flagged as possibly high priority)" in run.summary

    # Each sentence once: no paragraph, list item or cell text is repeated outside the tables' own columns.
    paragraphs = [b.text for b in _before_details(blocks) if b.tag in ("p", "li")]
    assert len(paragraphs) == len(set(paragraphs)), paragraphs

    # The marker is named once, above the table, not in each row.
    shown = [b for b in _before_details(blocks) if MARKER in (b.text + " ".join(sum(b.rows, [])))
             and "ptd-bot-skip" not in b.text]
    assert len(shown) == 1 and shown[0].tag == "p" and "left out of the table" in shown[0].text

    # A hostile title is text: no element of its own, cut at a word boundary with an ellipsis.
    assert "script" not in tags and "img" not in tags
    hostile = [row[0] for row in every.rows if "FSDP | crash" in row[0]]
    assert hostile and all(cell.endswith("…") for cell in hostile)
    shown_title = hostile[0].split(" ", 1)[1][:-1]
    assert HOSTILE.startswith(shown_title) and HOSTILE[len(shown_title)] == " "
    _assert_no_empty_header(blocks)
    assert "do not add up" not in run.stdout + run.summary


def test_the_hostile_title_links_nowhere(fake_github, tmp_path):
    seed_issue(fake_github, 1, (HOSTILE, FSDP_WITH_REPRO[1]))
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"dry-run": "true"})
    from summaryhtml import to_html

    html = to_html(run.summary)
    assert "evil.example" not in re.findall(r'href="([^"]*)"', html).__str__()
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html


def test_the_single_issue_view(fake_github, tmp_path):
    seed_issue(fake_github, 7, NEEDS_REPRO)
    run = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                     inputs={"issue-number": "7", "dry-run": "true"})
    assert run.returncode == 0, run.stdout + run.stderr
    blocks, _ = read(run.summary)
    assert blocks[0].tag == "h2" and "dry run" in blocks[0].text
    assert [b.text for b in blocks[1:3]] == ["No person needed.",
                                             "1 comment would be posted: needs_distributed_reproduction"]
    assert blocks[3].tag == "h3" and blocks[3].text.startswith("#7 ")
    (table,) = _tables(blocks)
    assert table.header == ["Sub-oncall", "Modules", "Confidence", "Would add", "Would post"]
    assert len(table.rows) == 1 and table.rows[0][4] == "needs_distributed_reproduction"
    _assert_no_empty_header(blocks)
    assert "Forced re-triage" not in run.summary

    seed_issue(fake_github, 8, TEXTS["vague"])
    vague = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                       inputs={"issue-number": "8", "dry-run": "true"})
    assert read(vague.summary)[0][1].text == "Would need a person: module unclear: add the module label"
    assert vague.summary.count("module unclear: add the module label") == 1  # in the first lines only

    forced = run_action(fake_github, tmp_path, "workflow_dispatch", dispatch_payload(),
                        inputs={"issue-number": "7", "dry-run": "true", "force": "true"})
    assert "Forced re-triage: a person asked for it." in forced.summary


def test_counts_that_do_not_add_up_are_a_warning(fake_github, tmp_path):
    """GitHub's search said 5, two came back: a person must not read 'left 0' as the whole queue done."""
    seed_issue(fake_github, 1, FSDP_WITH_REPRO)
    seed_issue(fake_github, 2, NEEDS_REPRO)
    items = [dict(fake_github.issue(REPO, n), score=1.0) for n in (1, 2)]
    fake_github.inject("GET", "/search/issues", 200, body={"total_count": 5, "incomplete_results": False,
                                                           "search_type": "lexical", "items": items})
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs={"dry-run": "true"})
    assert run.returncode == 0, run.stdout
    warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning::")]
    assert any("counts do not add up: found 5, but triaged 2 + failed 0 + skipped 0 + left 0 = 2" in w
               for w in warnings), warnings
    blocks, _ = read(run.summary)
    assert any(b.tag == "p" and b.text.startswith("[!WARNING] The counts do not add up: found 5") for b in blocks)


# ---- a large sweep stays under GitHub's limits ----------------------------------------------------------------------


def _big_sweep(fake, count: int):
    from actionrun import expected_plan
    from triage.config.bundle import load_bundle
    from triage.config.words import queue_words
    from triage.service.triager import IssueResult, SweepResult

    bundle = load_bundle()
    words = queue_words(bundle.rubric.words, QUEUE)
    plans = []
    for n, scenario in enumerate(SCENARIOS, 1):
        seed_issue(fake, n, scenario)
        plans.append(expected_plan(fake, n))
    results = [IssueResult(number=n, title=f"{HOSTILE} {n}", url=f"https://github.com/{REPO}/issues/{n}",
                           plan=plans[n % len(plans)].with_(issue=n), dry_run=True, words=words, marker=MARKER)
               for n in range(1, count + 1)]
    return SweepResult(query="q", found=count, results=results, dry_run=True, marker=MARKER)


def test_a_thousand_issue_sweep_stays_under_githubs_limits(fake_github, tmp_path):
    from triage.action.context import Result
    from triage.action.limits import OUTPUT_LIMIT, SUMMARY_LIMIT
    from triage.action.main import report_result
    from triage.action.report import Reporter
    from triage.action.summary import summary_markdown

    sweep = _big_sweep(fake_github, 1000)
    whole = summary_markdown("schedule", sweep.results, sweep=sweep, cap=None)
    assert len(whole.encode()) > SUMMARY_LIMIT  # without the cap it would be refused: the cap is what is tested
    out, summary = tmp_path / "out", tmp_path / "summary.md"
    out.touch()
    summary.touch()
    reporter = Reporter({"GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(tmp_path)})

    assert report_result(Result("sweep", sweep=sweep), reporter, "schedule") == 0

    written = summary.read_text(encoding="utf-8")
    assert len(written.encode()) < 900 * 1024 < SUMMARY_LIMIT
    outputs = parse_output_file(out.read_text(encoding="utf-8"))
    assert all(len(value.encode()) < OUTPUT_LIMIT for value in outputs.values())
    # The rest is somewhere a person can get it, and the cut summary says where and how much.
    assert (tmp_path / "ptd-triage-summary.md").read_text(encoding="utf-8") == whole
    assert outputs["summary-file"] == str(tmp_path / "ptd-triage-summary.md")
    assert re.search(r"_\d+ of 1000 (rows of the table|issues' steps and evidence) left out here", written)
    assert str(tmp_path / "ptd-triage-summary.md") in written
    listed = json.loads(outputs["plan"])
    assert 0 < len(listed) < 1000
    assert [p["issue"] for p in json.loads((tmp_path / "ptd-triage-plan.json").read_text())] == list(range(1, 1001))
    assert outputs["plan-file"] == str(tmp_path / "ptd-triage-plan.json")
    # Cut, it still reads in the same order: what needs a person first.
    blocks, _ = read(written)
    assert [b for b in blocks if b.tag == "h3"][0].text.startswith("Would need a person")
    _assert_no_empty_header(blocks)


def test_the_plans_output_is_cut_to_whole_plans_and_says_where_the_rest_is():
    from triage.action.limits import OUTPUT_CAP
    from triage.action.report import capped_document

    document = {"version": 1, "repo": REPO, "plans": [{"issue": n, "reasons": ["x" * 2000]} for n in range(1000)]}
    text, kept = capped_document(document, rest_in="/tmp/plans.json")
    parsed = json.loads(text)
    assert len(text.encode()) <= OUTPUT_CAP and kept == len(parsed["plans"]) < 1000
    assert parsed["omitted"] == 1000 - kept and parsed["plans_file"] == "/tmp/plans.json"
    small = {"version": 1, "repo": REPO, "plans": [{"issue": 1}]}
    assert json.loads(capped_document(small)[0]) == small


# ---- the pieces ---------------------------------------------------------------------------------------------------


def test_titles_are_cut_at_a_word_boundary():
    from triage.action.summary import cut

    assert cut("short title", 70) == "short title"
    assert cut("one two three four", 12) == "one two…"
    assert cut("x" * 100, 10) == "x" * 10 + "…"  # one long word: cut inside it rather than show nothing
    assert cut("a\nb\tc", 10) == "a b c"


def test_a_storage_queue_says_its_own_words():
    from triage.config.words import queue_words
    from triage.core.plan import Plan
    from triage.service.triager import IssueResult
    from triage.action.summary import attention

    words = queue_words({"queue": "storage"}, "oncall: storage")
    result = IssueResult(number=3, plan=Plan(issue=3, outcome="not_distributed"), words=words)
    why = attention(result)
    assert why.startswith("not storage: not in the queue") and "distributed" not in why


@pytest.mark.parametrize("kinds, expected", [
    (("review_no_sub_oncall",), "no team found: choose one"),
    (("review_no_module",), "no module label: add one"),
    (("review_no_sub_oncall", "review_no_module"), "no team found: choose one; no module label: add one"),
])
def test_why_a_person_is_needed_comes_from_the_policys_records(kinds, expected):
    """The reason reads the policy's drop records (their kind), not the words they render to."""
    from triage.action.summary import attention
    from triage.core.drops import Drop, DropKind
    from triage.core.plan import Plan
    from triage.service.triager import IssueResult

    plan = Plan(issue=4, outcome="needs_review", add_labels=("triage review",),
                drops=tuple(Drop(DropKind(kind)) for kind in kinds))
    assert attention(IssueResult(number=4, plan=plan)) == expected


def test_a_flag_names_its_criteria_from_the_step_not_from_the_wording_of_its_reason():
    from triage.action.summary import attention
    from triage.config.bundle import load_bundle
    from triage.core.plan import Plan
    from triage.core.steps import StepResult
    from triage.service.results import IssueResult

    def why(step5: StepResult) -> str:
        plan = Plan(issue=1, outcome="high_priority", add_labels=("triage review",), steps=(step5,))
        return attention(IssueResult(number=1, plan=plan))

    # The model's reason is free text: a word like "score" or "criteria:" in it decides nothing. A criterion is
    # shown as the rubric describes it (IssueResult.criteria), an unknown one by its id in words.
    model = StepResult(5, "flag", ("triage review",), by="llm", criteria=("regression", "many_users"),
                       reason="step 5 (llm): flag — worked in 2.4 (score of users: criteria: none)")
    assert why(model) == "possibly high priority: regression; many users"
    criteria = load_bundle().rubric.criteria_descriptions
    plan = Plan(issue=1, outcome="high_priority", add_labels=("triage review",), steps=(model,))
    assert attention(IssueResult(number=1, plan=plan, criteria=criteria)) == (
        "possibly high priority: a regression from a prior version (worked in 2.x, broken in 2.y, or broken in the "
        "nightly); many users affected, or a core distributed component broken")
    rubric = StepResult(5, "flag", ("triage review",), criteria=("multinode_hang",),
                        reason="step 5: possibly high priority — multinode_hang (score 4; ...) — a human must look first")
    plan = Plan(issue=1, outcome="high_priority", add_labels=("triage review",), steps=(rubric,))
    assert attention(IssueResult(number=1, plan=plan, criteria=criteria)) == (
        "possibly high priority: a hang affecting multi-node training (NCCL timeout, deadlock in collectives)")
    # A description says what the criterion is, then (after ": ") how to read it: a report shows what it is.
    assert ": " in criteria["multinode_hang"] and "personal machine" not in attention(
        IssueResult(number=1, plan=plan, criteria=criteria))
    # Without criteria (an older plan), the reason is shown instead.
    bare = StepResult(5, "flag", ("triage review",), reason="step 5: flagged by hand")
    assert why(bare) == "possibly high priority: flagged by hand"
