"""A hostile or broken model through the REAL entrypoint.py (a subprocess with the runner's environment) against
the GitHub stand-in and the Anthropic stand-in (issue 18's acceptance): a reply nested 100,000 deep, a 50 MB
reply, a reply that drips one byte a second, a reply that echoes the model's key, a refusal, a context-window stop
— each ends in the rubric's plan for the issue with a reason naming what happened, and the run fails (exit 1, one
`::error::` naming the issue); the key (and the GitHub token), whole or in 8-character pieces, appears nowhere in
what the run wrote (stdout, stderr, GITHUB_OUTPUT, the step summary, the plans file, every write sent to GitHub).
Deadlines are short (llm-timeout 2 s) so the whole file runs in seconds.
"""
from __future__ import annotations

import json
import time

import pytest
from fakellm import FakeAnthropic, Fault
from llm_helpers import good_answer

from actionrun import FSDP_WITH_REPRO, MARKER, QUEUE, expected_plan, issues_payload, run_action, seed_issue

# Shaped like a real key on purpose (the token-shape scrubber alone would catch "sk-ant-..."): the 8-character
# rule must be what removes its pieces.
KEY = "Zq7rT2vXk9LmW4pN8sB3hJ6dF1gY5cQ0aE7uR2tK9wM4nV8xZ3"


@pytest.fixture
def model():
    with FakeAnthropic(api_key=KEY) as server:
        yield server
        server.take_violations()  # off-contract replies are the point of some scenarios


def _run(fake_github, model, tmp_path, *, plans: bool = False):
    payload = issues_payload(fake_github, 21, "labeled", label=QUEUE)
    inputs = {"planner": "llm", "llm-provider": "anthropic", "llm-model": "claude-test", "llm-base-url": model.url,
              "llm-api-key": KEY, "llm-timeout": "2", "issue-timeout": "30"}
    if plans:
        inputs.update({"mode": "plan", "plans-file": str(tmp_path / "plans.json")})
    started = time.monotonic()
    run = run_action(fake_github, tmp_path, "issues", payload, inputs=inputs, timeout=60)
    run.seconds = time.monotonic() - started
    return run


def _everything_written(run, tmp_path, fake_github) -> str:
    """stdout, stderr, the outputs, the step summary, the plans file, and every write sent to GitHub (comments,
    labels, reactions: path and body)."""
    plans = tmp_path / "plans.json"
    writes = [f"{w.method} {w.path} {json.dumps(w.body, ensure_ascii=False)}" for w in fake_github.writes()]
    return "\n".join([run.stdout, run.stderr, json.dumps(run.outputs), run.summary,
                      plans.read_text(encoding="utf-8") if plans.exists() else "", *writes])


def _assert_no_secret(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text
        pieces = [secret[i:i + 8] for i in range(len(secret) - 7)]
        leaked = [p for p in pieces if p in text]
        assert not leaked, f"{len(leaked)} 8-character pieces of a secret were written, e.g. {leaked[0]!r}"


def _assert_structured_output_without_a_forced_tool(model) -> None:
    """What the real Action sent with its default llm-output-mode: Anthropic's output_config json_schema, never a
    forced tool (current models answer a forced tool_choice with HTTP 400)."""
    bodies = [call.body for call in model.calls if call.method == "POST"]
    assert bodies and all(isinstance(b, dict) for b in bodies)
    assert all("tool_choice" not in b and "tools" not in b for b in bodies)
    assert all(b["output_config"]["format"]["type"] == "json_schema" for b in bodies)


SCENARIOS = {
    "nested 100,000 deep": (Fault.raw_output("[" * 100_000 + "]" * 100_000), "LLMOversized", "levels deep"),
    "50 MB": (Fault.raw(200, b'{"type": "message", "content": "' + b"x" * (50 * 1024 * 1024) + b'"}'),
              "LLMOversized", "bytes"),
    "drips a byte a second": (Fault.slow(0.0).dripping(1.0), "LLMTimeout", "within 2 s"),
    "refusal": (Fault.refusal("I can't help with that."), "LLMRefused", "refused"),
    "context window": (Fault.stopped("model_context_window_exceeded"), "LLMContextExceeded", "context window"),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_failing_model_ends_in_the_rubrics_plan_and_a_failed_run(name, fake_github, model, tmp_path):
    fault, error, words = SCENARIOS[name]
    model.script(fault)
    seed_issue(fake_github, 21, FSDP_WITH_REPRO)
    rubric = expected_plan(fake_github, 21).to_dict()
    run = _run(fake_github, model, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr  # the run says the model failed
    assert "RecursionError" not in run.stdout + run.stderr and "internal error" not in run.stdout
    assert "::error::#21: the model's plan was not used" in run.stdout and error in run.stdout
    assert words in run.stdout, run.stdout
    plan = json.loads(run.outputs["plan"])
    assert plan["add_labels"] == rubric["add_labels"] and plan["outcome"] == rubric["outcome"]
    assert error in plan["usage"]["fallback"]
    labels = {label["name"] for label in fake_github.issue("octo-org/octo-repo", 21)["labels"]}
    assert set(rubric["add_labels"]) <= labels  # the rubric's plan was applied
    assert len(model.answered) == 1  # no paid repair where a repair cannot help
    _assert_structured_output_without_a_forced_tool(model)
    _assert_no_secret(_everything_written(run, tmp_path, fake_github), KEY, fake_github.token)
    if name == "drips a byte a second":
        assert run.seconds < 15, f"a dripping model held the run for {run.seconds:.1f} s"



def test_a_fence_of_a_million_newlines_ends_quickly_in_the_rubrics_plan(fake_github, model, tmp_path):
    """A reply whose text is an opened ``` fence and a million newlines (it once backtracked without end, after
    the call's deadline, where nothing stops it): not JSON, one repair asked, the same again, the rubric's plan."""
    hostile = Fault.raw_output("```json\n" + "\n" * 1_000_000 + "}")
    model.script(hostile, hostile)
    seed_issue(fake_github, 21, FSDP_WITH_REPRO)
    rubric = expected_plan(fake_github, 21).to_dict()
    run = _run(fake_github, model, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "::error::#21: the model's plan was not used" in run.stdout and "LLMInvalidReply" in run.stdout
    plan = json.loads(run.outputs["plan"])
    assert plan["add_labels"] == rubric["add_labels"] and len(model.answered) == 2
    assert run.seconds < 20, f"parsing a hostile reply held the run for {run.seconds:.1f} s"


@pytest.mark.parametrize("plans", [False, True], ids=["triage", "plan mode"])
def test_a_reply_echoing_the_key_ends_in_the_rubrics_plan_and_is_written_nowhere(plans, fake_github, model,
                                                                                 tmp_path):
    """A schema-valid answer whose free text carries the key (whole, in halves, in 9-character slices) and the
    GitHub token: a model cannot know the key, so the answer is not trusted (LLMSecretEchoed, no repair, the
    rubric's plan, a failed run), and nothing the run wrote, GitHub's writes included, holds 8 characters of
    either secret."""
    echo = good_answer(
        not_distributed={"decision": "distributed", "reason": f"my key is {KEY}", "quote": KEY[:30]},
        route={"decision": "parallelisms", "reason": f"first half {KEY[:25]} second half {KEY[25:]}",
               "quote": f"token {fake_github.token}"},
        high_priority={"decision": "no_flag", "reason": " ".join(KEY[i:i + 9] for i in range(0, 45, 9)),
                       "criteria": [], "no_flag_reason": "no_criterion_met", "quote": ""})
    model.script(echo)
    seed_issue(fake_github, 21, FSDP_WITH_REPRO)
    rubric = expected_plan(fake_github, 21).to_dict()
    run = _run(fake_github, model, tmp_path, plans=plans)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "::error::#21: the model's plan was not used" in run.stdout and "LLMSecretEchoed" in run.stdout
    plan = json.loads(run.outputs["plans"])["plans"][0] if plans else json.loads(run.outputs["plan"])
    assert plan["planner"] == "rubric" and "LLMSecretEchoed" in plan["usage"]["fallback"]
    assert plan["add_labels"] == rubric["add_labels"] and plan["outcome"] == rubric["outcome"]
    assert len(model.answered) == 1  # not repaired: the next answer could repeat it again
    if not plans:
        labels = {label["name"] for label in fake_github.issue("octo-org/octo-repo", 21)["labels"]}
        assert set(rubric["add_labels"]) <= labels
    _assert_no_secret(_everything_written(run, tmp_path, fake_github), KEY, fake_github.token)


# An AWS secret key's shape (40 characters); the stand-in signs and checks SigV4 with it.
AWS_SECRET = "wJ7rXUtnF3MI8K7MDENG2bPxRfiCY4EXAMPLEKEY"


@pytest.mark.parametrize("provider", ["openai", "bedrock"])
def test_the_other_providers_replies_echoing_their_secret_end_in_the_rubrics_plan(provider, fake_github, tmp_path):
    """The same through OpenAI's stand-in (the API key) and Bedrock's (the AWS secret key and session token, from
    the environment configure-aws-credentials exports): not trusted, the rubric's plan, written nowhere."""
    from fakellm import FakeBedrock, FakeOpenAI

    server = FakeOpenAI(api_key=KEY) if provider == "openai" else FakeBedrock(secret_key=AWS_SECRET)
    with server:
        secrets = [KEY] if provider == "openai" else [AWS_SECRET, server.session_token]
        echo = good_answer(route={"decision": "parallelisms", "quote": "",
                                  "reason": " / ".join(secret[:20] for secret in secrets)})
        server.script(echo)
        seed_issue(fake_github, 21, FSDP_WITH_REPRO)
        rubric = expected_plan(fake_github, 21).to_dict()
        payload = issues_payload(fake_github, 21, "labeled", label=QUEUE)
        inputs = {"planner": "llm", "llm-provider": provider, "llm-model": "test-model", "llm-base-url": server.url,
                  "llm-timeout": "5"}
        env = {}
        if provider == "openai":
            inputs["llm-api-key"] = KEY
        else:
            env = {k: v for k, v in server.credentials.items() if v}
        run = run_action(fake_github, tmp_path, "issues", payload, inputs=inputs, env=env, timeout=60)
        assert run.returncode == 1, run.stdout + run.stderr
        assert "::error::#21: the model's plan was not used" in run.stdout and "LLMSecretEchoed" in run.stdout
        plan = json.loads(run.outputs["plan"])
        assert plan["planner"] == "rubric" and plan["add_labels"] == rubric["add_labels"]
        assert len(server.answered) == 1
        _assert_no_secret(_everything_written(run, tmp_path, fake_github), *secrets, fake_github.token)


def test_a_reply_repeating_eight_characters_of_the_key_is_refused_and_seven_are_not():
    from triage.llm.common import repeats_secret

    assert repeats_secret(["the reason: " + KEY[10:18] + "."], [KEY])
    assert repeats_secret(['{"quote": "' + KEY + '"}'], ["", KEY, "short"])
    assert not repeats_secret(["the reason: " + KEY[10:17] + " and " + KEY[17:24]], [KEY])
    # A local server's placeholder key is no credential, and "none" is in every answer (no_flag_reason: none).
    assert not repeats_secret(['{"no_flag_reason": "none"}', "EMPTY", "ollama"], ["none", "EMPTY", "ollama"])
    assert not repeats_secret(["anything"], [])


@pytest.mark.parametrize("prefix", ["sk-proj-", "sk-ant-api03-", "sk-", "AKIA"])
def test_a_providers_public_key_prefix_quoted_in_a_reply_is_no_leak(prefix):
    """Every key of a provider starts with the same letters: a reply quoting an issue's "sk-proj-..." (a reporter's
    auth error) must not be refused as a leak, while 8 characters of what follows the prefix still are."""
    from triage.llm.common import repeats_secret

    key = prefix + KEY
    assert not repeats_secret([f"the issue shows an {prefix}... key in its log", prefix + "XXXXXXXX"], [key])
    assert repeats_secret(["quoted: " + KEY[:8]], [key])
    assert repeats_secret(["quoted: " + key[len(prefix) - 2:len(prefix) + 8]], [key])


class _StallingPlanner:
    """A planner that outlives the issue's time budget (what a model that drips its answer did before every call
    had a total deadline), then answers with the rubric's plan."""

    name = "llm"

    def propose(self, snapshot, bundle, *, force=False):
        from triage.planners import rubric as rubric_planner

        time.sleep(1.2)
        return rubric_planner.propose(snapshot, bundle, force=force)


def test_a_stalled_planner_is_a_failed_issue_not_a_spent_api_budget(fake_github, github_client):
    from triage.config.bundle import load_bundle
    from triage.service.triager import Triager

    for number in (31, 32):
        seed_issue(fake_github, number, FSDP_WITH_REPRO)
    triager = Triager(github_client, load_bundle(), repo="octo-org/octo-repo", planner=_StallingPlanner(),
                      issue_seconds=1.0, recent_seconds=0)
    sweep = triager.sweep(10)
    assert [r.number for r in sweep.failed] == [31, 32], [(r.number, r.error, r.out_of_budget) for r in sweep.results]
    assert all("issue-timeout" in r.error and not r.out_of_budget for r in sweep.failed)
    assert not (sweep.stopped or "").startswith("the API budget ran out")


# ---- a sweep (schedule) against a model that stalls or fails: a failure with the issues named, never "budget" ----

def _sweep(fake_github, model, tmp_path, *, llm_timeout: str, issue_timeout: str):
    from actionrun import schedule_payload

    inputs = {"planner": "llm", "llm-provider": "anthropic", "llm-model": "claude-test", "llm-base-url": model.url,
              "llm-api-key": KEY, "llm-timeout": llm_timeout, "issue-timeout": issue_timeout}
    started = time.monotonic()
    run = run_action(fake_github, tmp_path, "schedule", schedule_payload(), inputs=inputs, timeout=60)
    run.seconds = time.monotonic() - started
    return run


def test_a_sweep_against_a_dripping_model_fails_and_names_every_issue(fake_github, model, tmp_path):
    """Each call ends at its total deadline (llm-timeout 1 s), the rubric's plan is applied to every issue, and
    the run fails naming them all: a model that stalls is a failure, not a spent budget and not a green run."""
    for _ in range(3):
        model.script(Fault.slow(0.0).dripping(1.0))
    for number in (41, 42, 43):
        seed_issue(fake_github, number, FSDP_WITH_REPRO)
    rubric = {n: expected_plan(fake_github, n).to_dict() for n in (41, 42, 43)}
    run = _sweep(fake_github, model, tmp_path, llm_timeout="1", issue_timeout="30")
    everything = run.stdout + run.stderr
    assert run.returncode == 1, everything
    assert "the model failed on 3 issue(s) (#41, #42, #43)" in run.stdout, run.stdout
    for number in (41, 42, 43):
        assert f"::error::#{number}: the model's plan was not used" in run.stdout
        labels = {label["name"] for label in fake_github.issue("octo-org/octo-repo", number)["labels"]}
        assert set(rubric[number]["add_labels"]) <= labels  # the rubric's plan was applied
    assert "budget ran out" not in everything and "budget ran out" not in run.summary
    assert "the model failed on 3 issue(s) (#41, #42, #43)" in run.summary.replace("\\", "")  # not only annotations
    assert run.outputs["triaged"] == "3" and run.seconds < 20
    _assert_no_secret(_everything_written(run, tmp_path, fake_github), KEY, fake_github.token)


def test_a_model_outliving_the_issue_deadline_fails_the_issue_and_the_sweep_goes_on(fake_github, model, tmp_path):
    """A model call allowed longer than the issue's own time (llm-timeout 2 s > issue-timeout 1 s): the issue fails
    with issue-timeout (nothing written, so the next sweep takes it again), the sweep goes on to the next issue and
    the run fails naming both; the stall is never mistaken for the API budget running out."""
    for _ in range(2):
        model.script(Fault.slow(0.0).dripping(1.0))
    for number in (51, 52):
        seed_issue(fake_github, number, FSDP_WITH_REPRO)
    run = _sweep(fake_github, model, tmp_path, llm_timeout="2", issue_timeout="1")
    everything = run.stdout + run.stderr
    assert run.returncode == 1, everything
    for number in (51, 52):
        assert f"::error::#{number}: the issue took longer than its 1 s (issue-timeout)" in run.stdout, run.stdout
        assert MARKER not in {label["name"] for label in fake_github.issue("octo-org/octo-repo", number)["labels"]}
    assert "::error::sweep: 2 of 2 issue(s) failed" in run.stdout
    assert "budget ran out" not in everything and "budget ran out" not in run.summary
    assert run.outputs["failed"] == "2"
    _assert_no_secret(_everything_written(run, tmp_path, fake_github), KEY, fake_github.token)


def test_a_debug_traceback_is_scrubbed_too(monkeypatch, capsys, tmp_path):
    """With RUNNER_DEBUG=1 an internal error prints its traceback: through the scrubber, like every other line."""
    from triage.action import main as action_main

    def boom(environ):
        raise RuntimeError(f"something carried the key {KEY} into an exception")

    monkeypatch.setattr(action_main, "settings_from_environ", boom)
    env = {"GITHUB_EVENT_NAME": "schedule", "RUNNER_DEBUG": "1", "INPUT_LLM_API_KEY": KEY,
           "GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    assert action_main.main(env) == 1
    written = capsys.readouterr()
    assert "Traceback" in written.err and "RuntimeError" in written.out + written.err
    _assert_no_secret(written.out + written.err + (tmp_path / "out").read_text(encoding="utf-8"), KEY)


def test_a_placeholder_key_does_not_refuse_ordinary_answers():
    """A local OpenAI-compatible server's placeholder key ("none") appears in every answer (no_flag_reason: none):
    the answer is used, not refused as an echo."""
    from fakellm import FakeOpenAI
    from llm_helpers import client_for, issue

    from triage.config.bundle import load_bundle
    from triage.planners import plan_issue
    from triage.planners.llm import LLMPlanner

    with FakeOpenAI(api_key="none") as server:
        server.script(good_answer())
        plan = plan_issue(issue(), load_bundle(), planner=LLMPlanner(client_for(server)))
    assert plan.planner == "llm" and not plan.usage.get("fallback"), plan.usage


def _transforms(secret: str) -> dict[str, str]:
    import base64

    return {"reversed": secret[::-1], "url-encoded": "".join(f"%{b:02X}" for b in secret.encode()),
            "base64": base64.b64encode(secret.encode()).decode(),
            "base64 of user:key": base64.b64encode(b"api:" + secret.encode()).decode(),
            "base64, URL-safe": base64.urlsafe_b64encode(b"xy" + secret.encode()).decode(),
            "reversed, in pieces": " ".join(secret[::-1][i:i + 9] for i in range(0, 45, 9))}


@pytest.mark.parametrize("form", list(_transforms(KEY)))
def test_a_401_body_echoing_the_key_transformed_is_written_nowhere(form, fake_github, model, tmp_path):
    """Issue 30: a model endpoint's 401 whose body echoes the key reversed (it reached the log), URL-encoded or in
    base64 (alone, or inside an encoded `user:key`): the run reports the failure, and no 8 characters of the key
    in any of those forms appear in anything it wrote."""
    echoed = _transforms(KEY)[form]
    body = {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {echoed}"}}
    model.script(Fault.raw(401, json.dumps(body).encode()))
    seed_issue(fake_github, 21, FSDP_WITH_REPRO)
    run = _run(fake_github, model, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "401" in run.stdout and "internal error" not in run.stdout, run.stdout
    written = _everything_written(run, tmp_path, fake_github)
    _assert_no_secret(written, KEY, fake_github.token, echoed.replace(" ", ""))
    for piece in echoed.split(" "):
        _assert_no_secret(written, piece)
