"""Models and thinking levels as the RPC protocol reports them (spec §1.4, §3.1).

A model record is pi's complete model object: ``id, name, api, provider, baseUrl, reasoning,
input, cost, contextWindow, maxTokens``. Thinking levels are pi's ordered list; a model
without reasoning supports only ``off``; clamping picks the nearest supported level above,
else below.
"""

from __future__ import annotations

from typing import Any

from pi_context.model import ModelInfo

__all__ = [
    "THINKING_LEVELS",
    "clamp_level",
    "model_record",
    "next_level",
    "supported_levels",
]

THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
_DEFAULT_REASONING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high")


def model_record(info: ModelInfo) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": info.id,
        "name": info.name or info.id,
        "api": info.api,
        "provider": info.provider,
    }
    if info.base_url is not None:
        record["baseUrl"] = info.base_url
    record["reasoning"] = info.reasoning
    record["input"] = ["text", "image"] if info.images else ["text"]
    record["cost"] = {
        "input": info.cost.input,
        "output": info.cost.output,
        "cacheRead": info.cost.cache_read,
        "cacheWrite": info.cost.cache_write,
    }
    record["contextWindow"] = info.context_window
    record["maxTokens"] = info.max_tokens
    return record


def supported_levels(info: ModelInfo | None) -> list[str]:
    """``["off"]`` without reasoning, else pi's levels up to ``high``."""
    if info is None or not info.reasoning:
        return ["off"]
    return list(_DEFAULT_REASONING_LEVELS)


def clamp_level(info: ModelInfo | None, level: str) -> str:
    """A supported level: itself; an unknown string → the first supported; else the nearest
    supported level above, else below."""
    supported = supported_levels(info)
    if level in supported:
        return level
    if level not in THINKING_LEVELS:
        return supported[0]
    at = THINKING_LEVELS.index(level)
    above = [lv for lv in supported if THINKING_LEVELS.index(lv) > at]
    below = [lv for lv in supported if THINKING_LEVELS.index(lv) < at]
    if above:
        return above[0]
    return below[-1] if below else "off"


def next_level(info: ModelInfo | None, current: str) -> str | None:
    """The level after ``current`` (wrapping); ``None`` for a model without reasoning."""
    if info is None or not info.reasoning:
        return None
    supported = supported_levels(info)
    if current not in supported:
        return supported[0]
    return supported[(supported.index(current) + 1) % len(supported)]
