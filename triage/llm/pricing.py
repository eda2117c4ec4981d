"""Estimated cost of model calls from token counts and optional per-million-token prices. Pure; imports: the
standard library only.

A cost is an estimate shown to people (the step summary, `eval`). It exists only when the input and output prices
are configured; otherwise it is None, never a guess. Input tokens read from a provider's prompt cache are priced
at the cached price, and tokens written to it at the cache-write price: given, or (`with_cache_ratios`) the
provider's published share of the input price. Reasoning and batch tokens are not told apart.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace


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
    """US dollars per million input (prompt) and output (completion) tokens, and per million input tokens read from
    (`cached_input_per_million`) and written to (`cache_write_per_million`) the provider's prompt cache; None when
    not configured (the cache prices then default to the input price, or to the provider's ratio of it once
    `with_cache_ratios` is applied)."""

    input_per_million: float | None = None
    output_per_million: float | None = None
    cached_input_per_million: float | None = None
    cache_write_per_million: float | None = None

    def __post_init__(self) -> None:
        _check_price("input_per_million", self.input_per_million)
        _check_price("output_per_million", self.output_per_million)
        _check_price("cached_input_per_million", self.cached_input_per_million)
        _check_price("cache_write_per_million", self.cache_write_per_million)

    @property
    def configured(self) -> bool:
        return self.input_per_million is not None and self.output_per_million is not None

    def with_cache_ratios(self, read_ratio: float, write_ratio: float) -> "Prices":
        """These prices with the cache prices a provider publishes as shares of its input price, where none was
        given."""
        if self.input_per_million is None:
            return self
        return replace(self, cached_input_per_million=self.input_per_million * read_ratio
                       if self.cached_input_per_million is None else self.cached_input_per_million,
                       cache_write_per_million=self.input_per_million * write_ratio
                       if self.cache_write_per_million is None else self.cache_write_per_million)

    def cost(self, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0,
             cache_write_tokens: int = 0) -> float | None:
        return estimate_cost(input_tokens, output_tokens, input_per_million=self.input_per_million,
                             output_per_million=self.output_per_million, cached_input_tokens=cached_input_tokens,
                             cache_write_tokens=cache_write_tokens,
                             cached_input_per_million=self.cached_input_per_million,
                             cache_write_per_million=self.cache_write_per_million)


def estimate_cost(input_tokens: int, output_tokens: int, *, input_per_million: float | None = None,
                  output_per_million: float | None = None, cached_input_tokens: int = 0,
                  cache_write_tokens: int = 0, cached_input_per_million: float | None = None,
                  cache_write_per_million: float | None = None) -> float | None:
    """US dollars for `input_tokens` (all input, of which `cached_input_tokens` were read from the cache and
    `cache_write_tokens` written to it) and `output_tokens`, per million tokens; None unless the input and output
    prices are given. A cache price not given is the input price."""
    for name, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens),
                        ("cached_input_tokens", cached_input_tokens), ("cache_write_tokens", cache_write_tokens)):
        _check_tokens(name, value)
    inp = _check_price("input_per_million", input_per_million)
    out = _check_price("output_per_million", output_per_million)
    if inp is None or out is None:
        return None
    read = _check_price("cached_input_per_million", cached_input_per_million)
    write = _check_price("cache_write_per_million", cache_write_per_million)
    cached = min(cached_input_tokens, input_tokens)
    written = min(cache_write_tokens, input_tokens - cached)
    plain = input_tokens - cached - written
    return (plain * inp + cached * (inp if read is None else read) + written * (inp if write is None else write)
            + output_tokens * out) / 1_000_000


def format_usd(cost: float | None) -> str:
    """"$0.0123" (4 decimals below a dollar, 2 above); "n/a" for None."""
    if cost is None:
        return "n/a"
    return f"${cost:,.2f}" if cost >= 1 else f"${cost:.4f}"


__all__ = ["Prices", "estimate_cost", "format_usd"]
