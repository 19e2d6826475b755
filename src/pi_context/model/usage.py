"""Usage records with cache fields, and their cost from the model's prices.

Every adapter reports usage the same way: ``input`` counts prompt tokens that were neither
read from nor written to the prompt cache, ``cacheRead`` and ``cacheWrite`` the ones that were,
``output`` the generated tokens (reasoning included).
"""

from __future__ import annotations

from typing import Any, cast

from pi_context.messages import Usage
from pi_context.model.protocol import ModelCost

__all__ = ["make_usage", "price_usage"]


def price_usage(usage: Usage, cost: ModelCost) -> Usage:
    """Fill ``usage["cost"]`` from prices in dollars per million tokens; returns ``usage``."""
    per = 1_000_000.0
    parts = {
        "input": usage["input"] * cost.input / per,
        "output": usage["output"] * cost.output / per,
        "cacheRead": usage["cacheRead"] * cost.cache_read / per,
        "cacheWrite": usage["cacheWrite"] * cost.cache_write / per,
    }
    usage["cost"] = {
        "input": parts["input"],
        "output": parts["output"],
        "cacheRead": parts["cacheRead"],
        "cacheWrite": parts["cacheWrite"],
        "total": sum(parts.values()),
        "totalFromProvider": False,
    }
    return usage


def make_usage(
    *,
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    reasoning: int = 0,
    total: int | None = None,
    cost: ModelCost | None = None,
) -> Usage:
    """A usage record in pi's key order, priced when ``cost`` is given.

    ``total`` is the provider's own total when it reports one, else the sum of the four counts;
    ``reasoning`` (thinking tokens, already inside ``output``) is always written, 0 when the
    provider reports none, and ``cost.totalFromProvider`` is false (the cost is computed from
    the model's prices), as pi-ai writes every adapter's usage.
    """
    counts = max(0, input) + max(0, output) + max(0, cache_read) + max(0, cache_write)
    record: dict[str, Any] = {
        "input": max(0, input),
        "output": max(0, output),
        "cacheRead": max(0, cache_read),
        "cacheWrite": max(0, cache_write),
    }
    record["reasoning"] = max(0, reasoning)
    record["totalTokens"] = max(0, total) if total is not None else counts
    record["cost"] = {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "total": 0,
        "totalFromProvider": False,
    }
    usage = cast(Usage, record)
    return price_usage(usage, cost) if cost is not None else usage
