"""The provider registry: the model APIs the client speaks, each declared once in its own module (`PROTOCOL`, a
`triage.llm.common.Provider`: name, key variable, default URL, output modes, request builder and reply parser).

Everything that depends on which provider is used asks here: the client's request and parser
(`triage.llm.client.LLMClient`), the key a configuration reads from the environment and its checks
(`LLMConfig.check`, `config_from_environ`), the CLI's `--llm-provider` choices; action.yml's `llm-provider`
description is checked against `names()` by a test. A new provider is a new module with a `PROTOCOL` and one line
in `_DECLARED`; no name is written anywhere else (tests/test_llm_providers.py fails when one is).

May import: the standard library, `triage.llm` (the provider modules, which import only the standard library and
`triage.llm.common/errors`).
"""
from __future__ import annotations

from triage.llm import anthropic_messages, bedrock_converse, openai_chat
from triage.llm.common import OUTPUT_MODES, Provider, chosen_mode
from triage.llm.errors import LLMConfigError

# In the order they are offered; the first is the default.
_DECLARED: tuple[Provider, ...] = (openai_chat.PROTOCOL, anthropic_messages.PROTOCOL, bedrock_converse.PROTOCOL)
REGISTRY: dict[str, Provider] = {p.name: p for p in _DECLARED}
DEFAULT = _DECLARED[0].name


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get(name: str | None) -> Provider:
    """The provider called `name` (the default for None or ""); LLMConfigError naming the choices otherwise."""
    found = REGISTRY.get(name or DEFAULT)
    if found is None:
        raise LLMConfigError(f"unknown LLM provider {name!r} (--llm-provider / llm-provider); choose one of: "
                             f"{', '.join(names())}")
    return found


def mode_for(provider: Provider, mode: str | None) -> str:
    """The output mode sent to `provider` for a chosen one (`auto`: the provider's first); LLMConfigError, naming
    the providers that offer it, when the provider does not."""
    chosen = chosen_mode(mode)
    if chosen not in OUTPUT_MODES:
        raise LLMConfigError(f"unknown output mode {mode!r} (--llm-output-mode / llm-output-mode); choose one of: "
                             f"{', '.join(OUTPUT_MODES)}")
    sent = provider.output_modes[0] if chosen == "auto" else chosen
    if sent not in provider.output_modes:
        offered = [p.name for p in _DECLARED if sent in p.output_modes]
        raise LLMConfigError(f"output mode {sent!r} (--llm-output-mode / llm-output-mode) is for "
                             f"{' and '.join(offered)}; {provider.name} uses {', '.join(provider.output_modes)}")
    return sent


def secret_variables() -> tuple[str, ...]:
    """Every provider's secret-holding environment variables, kept out of errors whichever provider is used."""
    return tuple(dict.fromkeys(v for p in _DECLARED for v in p.secret_variables))


__all__ = ["DEFAULT", "REGISTRY", "get", "mode_for", "names", "secret_variables"]
