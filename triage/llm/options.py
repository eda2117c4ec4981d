"""Typed model options -> the model client: the one way the CLI's `--llm-*` options and the Action's `llm-*`
inputs become a client (`model_client`), with `--record` / `--replay` wrapping it.

Every option that is not about wrapping (`record`, `replay`) is a field of `triage.llm.client.LLMConfig` under the
same name and is handed over whole: nothing lists which options to pass, so none can be dropped on the way (a
field `LLMConfig` does not have is a TypeError; tests/test_llm_providers.py checks every field arrives).

May import: the standard library, `triage.llm`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

WRAPPING = ("record", "replay")


@dataclass(frozen=True)
class ModelOptions:
    """What a user chose for the model (None or "": not chosen, the default applies). `prices` is a
    `triage.llm.pricing.Prices`; `prompt_cache` marks the system prompt as the provider's cache point (default on);
    `record` / `replay` name a directory of recorded replies."""

    provider: str = ""
    model: str = ""
    base_url: str | None = None
    api_key: str = field(default="", repr=False)
    max_calls: int | None = None
    timeout: float | None = None
    output_mode: str = ""
    prices: Any = None
    prompt_cache: bool | None = None
    record: str | None = None
    replay: str | None = None

    def config_options(self) -> dict[str, Any]:
        """The options that configure the client itself (all but `record` / `replay`), by `LLMConfig` field name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in WRAPPING}


def model_client(options: ModelOptions, environ: Mapping[str, str]):
    """The client the options describe: answers replayed from `replay` (offline, no key, no budget), or a live
    `LLMClient` over `environ` (the provider's key variable, AWS's), wrapped to record into `record` when asked.
    LLMError (one line) when the options make no usable client; OSError when `record` cannot be made."""
    from triage.llm.client import Budget, LLMClient, config_from_environ

    if options.replay:
        from triage.llm.recording import ReplayClient

        chosen = dict(options.config_options(), model=options.model or "replay", api_key="replay")
        return ReplayClient(options.replay, config=config_from_environ({}, **chosen), budget=Budget(max_calls=None))
    client = LLMClient(config_from_environ(environ, **options.config_options()), environ=environ)
    if options.record:
        from triage.llm.recording import RecordingClient

        return RecordingClient(client, options.record)
    return client


__all__ = ["ModelOptions", "WRAPPING", "model_client"]
