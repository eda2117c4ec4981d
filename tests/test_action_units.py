"""Unit tests of the Action's pieces: command parsing, the role check, inputs, the router, plan -> writes, and
the reporting helpers. The end-to-end tests (test_entrypoint_*.py) run the same code in a subprocess."""
from __future__ import annotations

import re

import pytest
from actionrun import parse_output_file

from triage.action.command import DEFAULT_COMMAND, has_command, is_bot, role_allows_retriage
from triage.action.context import Result
from triage.action.routing import Router
from triage.action.settings import ActionError, get_input, parse_bool, parse_count
from triage.core.effects import AddLabels, Effects, PostComment, React, UnsafeWrite, plan_effects
from triage.service.executor import Applied, DryRun, LiveExecutor, executor_for
from triage.service.triager import IssueResult
from triage.core.plan import Plan, PlannedComment
from triage.action.report import Reporter, md_escape
from triage.action.summary import issue_block


@pytest.mark.parametrize("body", [
    "/ptd-retriage",
    "/ptd-retriage\n",
    "Thanks!\r\n/ptd-retriage\r\n",
    "   /ptd-retriage   ",
    "```\ncode\n```\n/ptd-retriage",
    "> quoted\n\n/ptd-retriage",
    "<!-- hidden -->\n/ptd-retriage",
])
def test_command_lines_that_count(body):
    assert has_command(body, DEFAULT_COMMAND)


@pytest.mark.parametrize("body", [
    None, "", "/ptd-retriage please", "please /ptd-retriage", "`/ptd-retriage`", "/ptd-retriage2",
    "```\n/ptd-retriage\n```", "````\n```\n/ptd-retriage\n````", "~~~\n/ptd-retriage\n~~~",
    "```\nunclosed fence\n/ptd-retriage", "> /ptd-retriage", ">/ptd-retriage", "    /ptd-retriage",
    "<!-- /ptd-retriage -->", "<!--\n/ptd-retriage\n-->", "/ptd-retriag", "/Ptd-Retriage",
])
def test_command_lines_that_do_not_count(body):
    assert not has_command(body, DEFAULT_COMMAND)


@pytest.mark.parametrize("permission,allowed", [
    ({"role_name": "admin", "permission": "admin"}, True),
    ({"role_name": "maintain", "permission": "write"}, True),
    ({"role_name": "write", "permission": "write"}, True),
    ({"role_name": "triage", "permission": "read"}, True),
    ({"role_name": "read", "permission": "read"}, False),
    ({"role_name": "none", "permission": "none"}, False),
    ({"role_name": "security-reviewer", "permission": "write"}, True),  # custom role built on write
    ({"role_name": "custom-reader", "permission": "read"}, False),
    ({"permission": "admin"}, True),  # older GHES without role_name
    ({"permission": "read"}, False),
    ({}, False),
])
def test_role_matrix(permission, allowed):
    assert role_allows_retriage(permission)[0] is allowed


@pytest.mark.parametrize("user,bot", [
    ({"login": "github-actions[bot]", "type": "Bot"}, True),
    ({"login": "some-app", "type": "Bot"}, True),
    ({"login": "dependabot[bot]", "type": "User"}, True),
    ({"login": "alice", "type": "User"}, False),
])
def test_bots(user, bot):
    assert is_bot(user) is bot


def test_inputs_accept_both_runner_spellings_and_trim():
    assert get_input({"INPUT_DRY-RUN": " true "}, "dry-run") == "true"
    assert get_input({"INPUT_DRY_RUN": "true"}, "dry-run") == "true"
    assert get_input({}, "dry-run") == ""
    assert parse_bool("dry-run", "") is False and parse_bool("dry-run", "TRUE") is True
    with pytest.raises(ActionError, match="input dry-run must be true or false"):
        parse_bool("dry-run", "yes")
    assert parse_count("max-issues", "", default=50) == 50
    with pytest.raises(ActionError, match="at most 10"):
        parse_count("max-issues", "11", default=1, maximum=10)


def test_router_errors_on_foreign_events_and_ignores_foreign_actions():
    labeled, schedule = Router(), Router()
    labeled.on("issues.labeled")(lambda context: Result("issue"))
    schedule.on("schedule", plans=False)(lambda context: Result("sweep"))
    router = Router(labeled, schedule)  # composed as triage.action.app composes the feature routers
    route = router.route("issues", "labeled")
    assert route.key == "issues.labeled" and route.plans and route.handler(None).kind == "issue"
    assert router.route("schedule", None).plans is False
    ignored = router.route("issues", "closed")
    assert ignored.kind == "ignored" and "issues.closed" in ignored.why
    with pytest.raises(ActionError, match="event 'push' is not handled by ptd-triage; trigger it on: issues, schedule$"):
        router.route("push", None)
    with pytest.raises(ValueError, match="two handlers"):
        Router(labeled, labeled)


def test_the_app_answers_foreign_comments_without_reading_anything(monkeypatch):
    """The command router's cheap check: a comment with no command line never builds the context (no client, no
    configuration read); a comment that may hold one does."""
    from triage.action import app
    from triage.action.settings import Settings

    built = []
    monkeypatch.setattr(app, "build_context", lambda *a, **k: built.append(k) or (_ for _ in ()).throw(
        RuntimeError("context built")))
    settings = Settings(repo="o/r", token="t", api_url="https://api.github.com")
    payload = {"issue": {"number": 3, "title": "t", "body": "", "labels": [], "user": {"login": "a"}},
               "comment": {"id": 1, "body": "thanks, looks good", "user": {"login": "a", "type": "User"}}}
    result, context = app.run_event(settings, None, payload, {}, "issue_comment", "created")
    assert result.kind == "ignored" and "no command line" in result.why and context is None and built == []
    payload["comment"]["body"] = "/ptd-triage"
    # Outside the queue (no config input: the bundled queue's label is known without loading it): still nothing.
    result, context = app.run_event(settings, None, payload, {}, "issue_comment", "created")
    assert result.kind == "ignored" and "queue label" in result.why and context is None and built == []
    payload["issue"]["labels"] = [{"name": "oncall: distributed"}]
    with pytest.raises(RuntimeError, match="context built"):
        app.run_event(settings, None, payload, {}, "issue_comment", "created")
    assert len(built) == 1


# ---- plan -> effects -> the executor -----------------------------------------------------------------------------

ALLOWED = frozenset({"triage review", "ptd-bot-triaged", "module: fsdp"})
COMMENT = PlannedComment("not_distributed", "Hello\n\n<!-- ptd-triage:not_distributed -->\n")


class _Bundle:
    """What `plan_effects` reads of a bundle: the allowlist (and the templates, for twins: none here)."""

    class labels:
        names = ALLOWED

    class templates:
        names: tuple = ()


def _effects(plan: Plan, **kwargs) -> Effects:
    return plan_effects(plan.issue, plan, bundle=_Bundle, **kwargs)  # type: ignore[arg-type]


def test_effects_are_comment_first_then_all_labels_in_one_call():
    plan = Plan(issue=3, add_labels=("triage review", "ptd-bot-triaged"), comment=COMMENT, outcome="not_distributed")
    effects = _effects(plan)
    assert [type(e) for e in effects.items] == [PostComment, AddLabels]
    assert (effects.comment.template, effects.comment.body) == ("not_distributed", COMMENT.body)
    assert effects.labels == ("triage review", "ptd-bot-triaged") and effects.comment.claim_first
    assert effects.comment.marker == "<!-- ptd-triage:not_distributed -->"
    assert all(e.reason for e in effects.items)  # each effect says why


def test_a_commands_reaction_comes_first():
    plan = Plan(issue=3, add_labels=("ptd-bot-triaged",), outcome="classified")
    effects = _effects(plan, acknowledge=React(77, "eyes", "the command"))
    assert [type(e) for e in effects.items] == [React, AddLabels] and effects.items[0].comment_id == 77


def test_an_empty_plan_writes_nothing():
    assert not _effects(Plan(issue=3)) and _effects(Plan(issue=3)).items == ()


def test_a_label_outside_the_allowlist_is_refused_before_any_write():
    with pytest.raises(UnsafeWrite, match="outside the allowlist"):
        _effects(Plan(issue=3, add_labels=("module: fsdp", "high priority"), comment=COMMENT))


class _Recorder:
    """A client for the executor: records calls, fails where told."""

    request_count = 0

    def __init__(self, fail_on: str | None = None):
        self.calls, self.fail_on = [], fail_on

    def room_for(self, requests, writes):
        self.calls.append(("room", requests, writes))

    def claim_issue(self, repo, number, content="eyes"):
        self.calls.append(("claim", number))
        return True, {"id": 1}

    def list_comments(self, repo, number):
        self.calls.append(("read", number))
        return []

    def create_comment(self, repo, number, body, *, own_login=None):
        self.calls.append(("comment", number, own_login))
        if self.fail_on == "comment":
            raise RuntimeError("boom")
        return {"id": 99, "user": {"login": own_login}}

    def add_labels(self, repo, number, labels):
        self.calls.append(("labels", number, tuple(labels)))
        if self.fail_on == "labels":
            raise RuntimeError("boom")
        return []


def test_the_executor_claims_posts_settles_and_records_what_got_through():
    plan = Plan(issue=4, add_labels=("ptd-bot-triaged",), comment=COMMENT)
    client = _Recorder(fail_on="labels")
    applied = Applied()
    with pytest.raises(RuntimeError):
        LiveExecutor(client, "o/r", own_login="bot").execute(_effects(plan, own_login="bot"), applied)
    assert client.calls[0][0] == "room"  # every write of the issue fits, or none is started
    assert [c[0] for c in client.calls[1:]] == ["claim", "comment", "read", "labels"]
    assert ("comment", 4, "bot") in client.calls  # the client takes only our own login's comment as stored
    assert applied.comment_template == "not_distributed" and applied.comment_id == 99 and applied.labels == ()


def test_a_failed_comment_stops_before_the_labels():
    client = _Recorder(fail_on="comment")
    with pytest.raises(RuntimeError):
        LiveExecutor(client, "o/r", own_login="bot").execute(
            _effects(Plan(issue=5, add_labels=("ptd-bot-triaged",), comment=COMMENT)))
    assert [c[0] for c in client.calls] == ["room", "claim", "comment"]


def test_a_dry_run_executor_has_no_client_and_records_only():
    plan = Plan(issue=6, add_labels=("ptd-bot-triaged",), comment=COMMENT)
    applied = executor_for(_Recorder(), "o/r", dry_run=True, own_login="bot").execute(_effects(plan))
    assert applied.dry_run and applied.labels == () and applied.comment_template is None
    assert not hasattr(DryRun(), "client")


# ---- reporting ---------------------------------------------------------------------------------------------------


def test_md_escape_neutralises_links_images_and_html():
    hostile = "![x](https://evil.example/p.png) [click](https://evil.example) <img src=x> **bold** | col\nnext"
    escaped = md_escape(hostile)
    assert "\n" not in escaped
    for char in "![]()<>*|":  # every markdown/HTML metacharacter is backslash-escaped
        assert re.search(r"(?<!\\)" + re.escape(char), escaped) is None, char


def test_summary_escapes_reasons_from_issue_text():
    plan = Plan(issue=1, outcome="classified", confidence="high", reasons=("matched '<script>alert(1)</script>'",))
    report = IssueResult(number=1, plan=plan, applied=Applied(labels=("module: fsdp",)))
    markdown = issue_block(report)
    assert "<script>" not in markdown and "\\<script\\>" in markdown
    assert "| Labels added | Comment posted |" in markdown and "| `module: fsdp` | - |" in markdown


def test_outputs_survive_newlines_and_delimiter_like_text(tmp_path):
    out = tmp_path / "out"
    out.touch()
    reporter = Reporter({"GITHUB_OUTPUT": str(out)})
    value = 'line one\nplan<<EOF\n{"a": 1}\nEOF\n'
    reporter.set_outputs({"plan": value, "outcome": "classified"})
    parsed = parse_output_file(out.read_text(encoding="utf-8"))
    assert parsed == {"plan": value, "outcome": "classified"}


def test_annotations_are_single_workflow_commands(capsys):
    Reporter({}).error("bad\nthing: 100%")
    assert capsys.readouterr().out == "::error::bad%0Athing: 100%25\n"
    Reporter({}, annotations=False).warning("plain\nline")
    assert capsys.readouterr().err == "warning: plain line\n"


def test_an_event_parses_its_payloads_issue_once(monkeypatch):
    """Issue 16: the route's check, its configured check and the handler share one parse of the payload's issue."""
    from memory_github import MemoryGitHub

    import triage.action.context as context_module
    from triage.action.app import run_event
    from triage.action.report import Reporter
    from triage.action.settings import Settings
    from triage.planners import get_planner

    github = MemoryGitHub()
    github.add_issue("o/r", 7, title="FSDP all_gather hangs on 2 nodes", body="It hangs.",
                     labels=["oncall: distributed"])
    payload = {"action": "opened", "issue": github.issue("o/r", 7), "repository": {"full_name": "o/r"}}
    parses = []
    real = context_module.snapshot_from_json
    monkeypatch.setattr(context_module, "snapshot_from_json", lambda data: parses.append(1) or real(data))
    settings = Settings(repo="o/r", token="t", api_url="https://api.github.com", dry_run=True)
    result, context = run_event(settings, Reporter({}), payload, {}, "issues", "opened", client=github,
                                planner=get_planner("rubric"))
    assert context is not None and result.kind == "issue", result
    assert len(parses) == 1


def test_a_spent_model_budget_is_one_warning_and_each_model_failure_one_error(capsys):
    """A sweep of 60 issues with a budget of 50 calls: the 10 issues after it fall back for the same reason. That
    was 10 identical warnings (up to max-issues of them); it is one, naming the issues. Failures stay one each."""
    from triage.action.main import model_fallbacks, report_model_fallbacks

    from triage.core.plan import FallbackKind, ModelFallback

    spent = "LLMBudgetExhausted: the run's budget of 50 model calls is spent"
    budget = ModelFallback(FallbackKind.BUDGET, spent)
    results = [IssueResult(number=n, plan=Plan(issue=n, usage={"fallback": spent}, fallback=budget))
               for n in range(1, 11)]
    timeout = ModelFallback(FallbackKind.FAILURE, "LLMTimeout: no whole answer")
    results.append(IssueResult(number=11, plan=Plan(issue=11, usage={"fallback": timeout.reason}, fallback=timeout)))
    # The kind is the type's, not the words': a failure whose words start like the budget's still fails the run.
    lookalike = ModelFallback(FallbackKind.FAILURE, "LLMBudgetExhausted lookalike: a provider's own error")
    assert model_fallbacks([IssueResult(number=12, plan=Plan(issue=12, fallback=lookalike))])[0][2] is True
    report_model_fallbacks(model_fallbacks(results), Reporter({}, annotations=True))
    lines = capsys.readouterr().out.splitlines()
    warnings = [line for line in lines if line.startswith("::warning")]
    errors = [line for line in lines if line.startswith("::error")]
    assert len(warnings) == 1 and "10 issue(s)" in warnings[0] and "#1, #2" in warnings[0] and spent in warnings[0]
    assert len(errors) == 2 and "#11: " in errors[0] and "LLMTimeout" in errors[0], errors
    assert "the model failed on 1 issue(s) (#11)" in errors[1]


def test_a_sweeps_outputs_count_what_its_summary_counts_and_a_failed_search_is_no_failed_issue():
    from triage.action.report import sweep_outputs
    from triage.service.results import SweepResult
    from triage.service.summary import sweep_counts

    plan = Plan(issue=7, outcome="classified", add_labels=("module: fsdp",))
    sweep = SweepResult(query="q", found=3, left=1, results=[
        IssueResult(number=7, plan=plan, applied=Applied(labels=("module: fsdp",))),
        IssueResult(number=8, error="HTTP 502 from GitHub"),
        IssueResult(number=None, error="search failed: HTTP 500", fatal=True),
    ])
    outputs, _ = sweep_outputs(sweep, [])
    counts = sweep_counts(sweep)
    assert (outputs["triaged"], outputs["failed"], outputs["left"]) == ("1", "1", "1")
    assert [outputs[k] for k in ("triaged", "flagged", "failed", "left")] == [
        str(counts.triaged), str(counts.flagged), str(counts.failed), str(counts.left)]
