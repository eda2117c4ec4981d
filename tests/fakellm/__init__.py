"""Loopback stand-ins for the LLM providers, contract-checked, with scriptable answers and faults.

- `FakeOpenAI` (OpenAI-compatible Chat Completions), `FakeAnthropic` (Messages), `FakeBedrock` (Converse, SigV4):
  each a ThreadingHTTPServer on 127.0.0.1 started per test, logging every call (`.calls`, `.answered`, `.usage`)
  and recording contract disagreements in `.violations`.
- `Fault`: what a call gets instead of a good answer (rate limits, quota, 5xx/529, slow, malformed JSON,
  schema-invalid plans, refusals, truncation, ...), scripted with `server.script(...)`.
- pytest fixtures in `fakellm.fixtures` (register with `pytest_plugins = ["fakellm.fixtures"]`).

Imports: the standard library and jsonschema; tests/ must be on sys.path (it is, for pytest's rootdir conftest).
"""
from .anthropic_messages import FakeAnthropic
from .base import LoggedCall, StandIn
from .bedrock_converse import FakeBedrock
from .faults import INVALID_PLAN, Fault
from .openai_chat import FakeOpenAI
from .plans import DEFAULT_PLAN, Prompt, default_plan, example_from_schema

STAND_INS = {"openai": FakeOpenAI, "anthropic": FakeAnthropic, "bedrock": FakeBedrock}

__all__ = ["DEFAULT_PLAN", "INVALID_PLAN", "STAND_INS", "FakeAnthropic", "FakeBedrock", "FakeOpenAI", "Fault",
           "LoggedCall", "Prompt", "StandIn", "default_plan", "example_from_schema"]
