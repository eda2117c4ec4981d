"""Estimated cost of model calls from token counts and optional per-million-token prices. Pure; imports: the
standard library only.

A cost is an estimate shown to people (the step summary, `eval`): providers bill cached, reasoning and batch tokens
differently. It exists only when both prices are configured; otherwise it is None, never a guess.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


def _check_price(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite, non-negative number of US dollars per million tokens")
    return float(value)


def _check_tokens(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer")
    return value


@dataclass(frozen=True)
class Prices:
    """US dollars per million input (prompt) and output (completion) tokens; None when not configured."""

    input_per_million: float | None = None
    output_per_million: float | None = None

    def __post_init__(self) -> None:
        _check_price("input_per_million", self.input_per_million)
        _check_price("output_per_million", self.output_per_million)

    @property
    def configured(self) -> bool:
        return self.input_per_million is not None and self.output_per_million is not None

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        return estimate_cost(input_tokens, output_tokens, input_per_million=self.input_per_million,
                             output_per_million=self.output_per_million)


def estimate_cost(input_tokens: int, output_tokens: int, *, input_per_million: float | None = None,
                  output_per_million: float | None = None) -> float | None:
    """input_tokens * input price + output_tokens * output price, per million tokens, in US dollars; None unless
    both prices are given."""
    _check_tokens("input_tokens", input_tokens)
    _check_tokens("output_tokens", output_tokens)
    inp = _check_price("input_per_million", input_per_million)
    out = _check_price("output_per_million", output_per_million)
    if inp is None or out is None:
        return None
    return (input_tokens * inp + output_tokens * out) / 1_000_000


def format_usd(cost: float | None) -> str:
    """"$0.0123" (4 decimals below a dollar, 2 above); "n/a" for None."""
    if cost is None:
        return "n/a"
    return f"${cost:,.2f}" if cost >= 1 else f"${cost:.4f}"


__all__ = ["Prices", "estimate_cost", "format_usd"]
