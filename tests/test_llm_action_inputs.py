"""The model inputs of the Action (issue 18): llm-output-mode and the llm-price-* pair are read, checked in one
line, and reach the model client; the scrubber at the Action's edge removes runs of 8 characters of a secret."""
from __future__ import annotations

import pytest

from triage.action.redact import MIN_RUN, Redactor, redactor_from_environ
from triage.action.settings import ActionError, llm_settings


def _env(**inputs):
    return {f"INPUT_{k.upper()}": v for k, v in inputs.items()}


def test_output_mode_and_prices_are_read():
    got = llm_settings(_env(llm_provider="anthropic", llm_output_mode="tool", llm_price_input="3",
                            llm_price_output="15"))
    assert got["llm_output_mode"] == "tool" and got["llm_prices"] == (3.0, 15.0)
    default = llm_settings({})
    assert default["llm_output_mode"] == "" and default["llm_prices"] is None  # "": auto, the provider's default


@pytest.mark.parametrize("inputs, words", [
    (dict(llm_price_input="3"), "go together"),
    (dict(llm_price_input="-1", llm_price_output="2"), "llm-price-input"),
    (dict(llm_price_input="nan", llm_price_output="2"), "llm-price-input"),
])
def test_bad_model_inputs_fail_in_one_line(inputs, words):
    with pytest.raises(ActionError, match=words) as caught:
        llm_settings(_env(**inputs))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("inputs, words", [
    (dict(llm_output_mode="xml"), "llm-output-mode"),
    (dict(llm_output_mode="tool"), "openai uses json_schema"),  # openai has no tool mode
    (dict(llm_provider="nope"), "llm-provider.*openai, anthropic, bedrock"),
])
def test_bad_model_choices_fail_in_one_line_when_a_model_planner_is_built(inputs, words):
    """The provider and the output mode are checked against the provider registry by the one function that makes
    a client, for the Action as for the CLI."""
    from dataclasses import replace

    from triage.action.context import planner_for_settings
    from triage.action.settings import Settings

    given = {f"llm_{k.removeprefix('llm_')}": v for k, v in inputs.items()}
    settings = replace(Settings(repo="o/r", token="t", api_url="https://api.github.com"), planner="llm",
                       llm_model="m", llm_api_key="k", **given)
    with pytest.raises(ActionError, match=words) as caught:
        planner_for_settings(settings, {})
    assert "\n" not in str(caught.value) and "input planner llm" in str(caught.value)


def test_the_planner_gets_the_mode_and_prices():
    from dataclasses import replace

    from triage.action.context import planner_for_settings
    from triage.action.settings import Settings

    settings = replace(Settings(repo="o/r", token="t", api_url="https://api.github.com"), planner="llm", llm_provider="anthropic", llm_model="m",
                       llm_api_key="k", llm_output_mode="tool", llm_prices=(1.0, 2.0))
    planner = planner_for_settings(settings, {})
    config = planner.consultant.client.config
    assert planner.needs_prompt and planner.usage_totals()["issues_asked"] == 0
    assert config.prices.input_per_million == 1.0 and config.prices.output_per_million == 2.0
    assert config.mode == "tool"


def test_runs_of_a_secret_are_removed_and_ordinary_text_is_kept():
    key = "sk-proj-Q8vN2mX7kL4pR9tW1zY6bC3dF5gH0jK"
    redact = Redactor([key])
    assert redact.scrub(f"the key {key} here") == "the key *** here"
    assert redact.scrub(f"a piece {key[10:10 + MIN_RUN]} and {key[20:33]}") == "a piece *** and ***"
    assert key[10:10 + MIN_RUN - 1] in redact.scrub(f"short {key[10:10 + MIN_RUN - 1]}")  # 7 characters stay
    text = "FSDP2 fully_shard hangs in all_gather on 2 nodes\nsecond line"
    assert redact.scrub(text) == text  # layout kept, nothing masked
    assert redact.scrub(key.replace("_", "\\_")) == "***"  # as markdown escaped it
    env = {"INPUT_LLM_API_KEY": key, "GITHUB_TOKEN": "ghs_abcdefghijklmnopqrstuvwxyz012345"}
    # Issue 30: its common transforms too, whole or in pieces, in the redactor and in every HTTP error's message.
    import base64

    from triage.http.errors import scrub

    for echoed in (key[::-1], "".join(f"%{b:02x}" for b in key.encode()), base64.b64encode(key.encode()).decode(),
                   base64.b64encode(b"user:" + key.encode()).decode(), key[::-1][3:12]):
        for masked in (redact.scrub(f"401: {echoed}."), scrub(f"401: {echoed}.", [key])):
            assert not any(echoed[i:i + MIN_RUN] in masked for i in range(len(echoed) - MIN_RUN + 1)), masked
    assert scrub("the same text, nothing of the key", [key]) == "the same text, nothing of the key"
    assert "abcdefghij" not in redactor_from_environ(env).scrub("token ghs_abcdefghijklmnopqrstuvwxyz012345")
    assert "abc" not in repr(redactor_from_environ(env))
