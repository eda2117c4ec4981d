"""One provider registry (issue 27): each provider module declares itself once (`PROTOCOL`), one registry lists
them, and everything provider-specific goes through it.

- Every provider module's declaration is in the registry, and a provider's name is written as a literal in
  exactly one place in the package (its declaration), read from the source.
- action.yml's `llm-provider` input and the CLI's `--llm-provider` offer exactly the registry's providers.
- Typed options become the client's configuration through one function that drops nothing: every option arrives,
  and `ptd-triage plan --llm-output-mode tool` reaches the request (through the real CLI, against the Anthropic
  stand-in, which validates what it receives against the published contract).
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from triage.llm import providers
from triage.llm.client import LLMClient, LLMConfig
from triage.llm.options import WRAPPING, ModelOptions, model_client
from triage.llm.pricing import Prices

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "triage"
ISSUE = ROOT / "examples" / "issues" / "fsdp2-dtensor-backward.json"


def test_every_provider_module_declares_itself_and_the_registry_lists_each_once():
    declared = {}
    for path in sorted((PACKAGE / "llm").glob("*.py")):
        module = importlib.import_module(f"triage.llm.{path.stem}")
        protocol = getattr(module, "PROTOCOL", None)
        if protocol is not None:
            declared[protocol.name] = protocol
            assert protocol.name == module.PROVIDER, path  # the errors it raises name the same provider
    assert set(declared) == set(providers.names()) and len(providers.names()) == len(providers.REGISTRY) == 3
    assert all(providers.get(name) is declared[name] for name in declared)
    assert providers.get("") is providers.get(None) is providers.REGISTRY[providers.DEFAULT]
    assert LLMConfig().provider == providers.DEFAULT


def _name_literals(names, files) -> dict[str, list[str]]:
    """name -> the places ("file:line") where a string literal equal to it is written."""
    found: dict[str, list[str]] = {name: [] for name in names}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in found:
                found[node.value].append(f"{path.relative_to(path.parents[2])}:{node.lineno}")
    return found


def test_a_provider_name_is_written_in_exactly_one_place_in_the_package():
    found = _name_literals(providers.names(), sorted(PACKAGE.rglob("*.py")))
    assert all(len(places) == 1 for places in found.values()), found
    assert all("triage/llm/" in places[0] for places in found.values()), found


def test_the_name_check_sees_a_second_copy(tmp_path):
    where = tmp_path / "a" / "b"
    where.mkdir(parents=True)
    sample = where / "sample.py"
    sample.write_text('PROVIDERS = ("openai", "x")\nDEFAULT = "openai"\nTEXT = "openai-compatible"\n')
    assert sorted(_name_literals(["openai"], [sample])["openai"]) == ["a/b/sample.py:1", "a/b/sample.py:2"]


def test_action_yml_offers_exactly_the_registrys_providers():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    provider = action["inputs"]["llm-provider"]
    assert provider["default"] == providers.DEFAULT
    # The description lists the providers, each followed by what it is: "openai (...), anthropic, or bedrock (...)".
    listed = re.findall(r"(?:^|, (?:or )?)([a-z][a-z0-9_-]*)", re.sub(r"\([^)]*\)", "", provider["description"]))
    assert tuple(listed) == providers.names(), provider["description"]
    # The step that names the environment installs botocore for the provider that signs with it.
    steps = {step.get("id"): step for step in action["runs"]["steps"]}
    named = re.findall(r'"\$LLM_PROVIDER" = "([^"]+)"', steps["venv"]["run"])
    assert named and all(name in providers.names() for name in named)


def test_the_cli_offers_exactly_the_registrys_providers():
    from triage.cli.main import build_parser

    parser = build_parser()
    for command in ("plan", "eval", "sweep"):
        sub = parser._subparsers._group_actions[0].choices[command]
        option = next(a for a in sub._actions if "--llm-provider" in a.option_strings)
        assert tuple(option.choices) == providers.names(), command
        assert providers.DEFAULT in option.choices and "nope" not in option.choices
        mode = next(a for a in sub._actions if "--llm-output-mode" in a.option_strings)
        assert tuple(mode.choices) == ("auto", "json_schema", "tool")


def test_naming_no_provider_imports_no_provider_module():
    """The CLI reads its choices from the registry only when a provider is named (or --help is asked)."""
    code = ("import sys; from triage.cli.main import build_parser; "
            "build_parser().parse_args(['plan', 'x.json']); "
            "print(sorted(m for m in sys.modules if m.startswith('triage.llm')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_action_scrubs_every_providers_secret_variables():
    from triage.action.redact import SECRET_VARIABLES

    for provider in providers.REGISTRY.values():
        wanted = ([provider.key_variable] if provider.key_variable else []) + list(provider.secret_variables)
        assert set(wanted) <= set(SECRET_VARIABLES), provider.name


def test_every_typed_option_reaches_the_client_configuration(tmp_path):
    """No list of keys between the options and the configuration: each option, set to a value of its own, is in
    the client's configuration (what the old whitelist did to `output_mode`)."""
    config_fields = {f.name for f in dataclasses.fields(LLMConfig)}
    option_fields = [f.name for f in dataclasses.fields(ModelOptions) if f.name not in WRAPPING]
    assert set(option_fields) <= config_fields
    given = ModelOptions(provider="anthropic", model="claude-x", base_url="http://127.0.0.1:9", api_key="k-123",
                         max_calls=7, timeout=3.5, output_mode="tool", prices=Prices(1.0, 2.0, 0.3, 2.5),
                         prompt_cache=False)
    client = model_client(given, {})
    assert isinstance(client, LLMClient)
    assert {name: getattr(client.config, name) for name in option_fields} == given.config_options()
    assert client.config.mode == "tool" and client.budget.max_calls == 7
    recorded = model_client(dataclasses.replace(given, record=str(tmp_path / "rec")), {})
    assert recorded.config == client.config and (tmp_path / "rec").is_dir()
    replayed = model_client(dataclasses.replace(given, replay=str(tmp_path / "rec")), {})
    assert replayed.config.provider == "anthropic" and replayed.config.prices == Prices(1.0, 2.0, 0.3, 2.5)
    # Cache prices not given are the provider's published ratios of the input price.
    assert model_client(dataclasses.replace(given, prices=Prices(1.0, 2.0)), {}).config.prices == Prices(
        1.0, 2.0, 0.1, 1.25)
    assert replayed.budget.max_calls is None  # a replay spends nothing


def test_the_key_comes_from_the_providers_own_variable():
    for provider in providers.REGISTRY.values():
        if provider.key_variable:
            client = model_client(ModelOptions(provider=provider.name, model="m"), {provider.key_variable: "sk-z"})
            assert client.config.api_key == "sk-z"


def _plan(*args: str, env: dict) -> subprocess.CompletedProcess:
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    return subprocess.run([sys.executable, "-m", "triage", "plan", str(ISSUE), *args], capture_output=True,
                          text=True, timeout=120, env={**base, **env}, cwd=ROOT)


@pytest.mark.parametrize("mode, sent", [("tool", "tools"), (None, "output_config")])
def test_the_output_mode_given_to_the_cli_reaches_the_request(fake_anthropic, mode, sent):
    args = ["--planner", "llm", "--llm-provider", "anthropic", "--llm-model", "claude-test",
            "--llm-base-url", fake_anthropic.url] + (["--llm-output-mode", mode] if mode else [])
    done = _plan(*args, env={"ANTHROPIC_API_KEY": fake_anthropic.api_key})
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout.splitlines()[0])
    assert plan["planner"] == "llm" and plan["usage"]["provider"] == "anthropic"
    assert [c.status for c in fake_anthropic.calls] == [200]
    body = fake_anthropic.calls[0].body
    assert sent in body and ({"tools", "tool_choice"} & set(body) == set() if mode is None else
                             body["tool_choice"] == {"type": "tool", "name": "ptd_triage_plan"})
    assert mode is None or "output_config" not in body


def test_an_output_mode_the_provider_does_not_offer_is_one_line_before_any_call(fake_openai):
    done = _plan("--planner", "llm", "--llm-model", "m", "--llm-base-url", fake_openai.url, "--llm-output-mode",
                 "tool", env={"OPENAI_API_KEY": fake_openai.api_key})
    assert done.returncode == 2 and not fake_openai.calls and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "output mode 'tool'" in done.stderr and "openai uses json_schema" in \
        done.stderr
