"""Models and thinking levels as the RPC protocol reports them.

A model record is pi's model object: ``id, name, api, provider, baseUrl, reasoning, input,
cost, contextWindow, maxTokens`` plus ``thinkingLevelMap`` and ``compat`` when the model has
them. Levels, support and clamping are :mod:`pi_context.model.thinking`'s; a missing model
counts as one without reasoning (only ``off``).
"""

from __future__ import annotations

from typing import Any

from pi_context.model import ModelInfo
from pi_context.model.thinking import (
    clamp_thinking_level,
    cycle_thinking_level,
    supported_thinking_levels,
)

__all__ = ["clamp_level", "model_record", "next_level", "supported_levels"]


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
    if info.thinking_level_map:
        record["thinkingLevelMap"] = dict(info.thinking_level_map)
    if info.compat:
        record["compat"] = dict(info.compat)
    return record


def supported_levels(info: ModelInfo | None) -> list[str]:
    """``["off"]`` without a model or reasoning, else the model's supported levels."""
    return list(supported_thinking_levels(info)) if info is not None else ["off"]


def clamp_level(info: ModelInfo | None, level: str) -> str:
    """pi's clamp: supported → itself; unknown → the first supported; else nearest above/below."""
    return clamp_thinking_level(info, level) if info is not None else "off"


def next_level(info: ModelInfo | None, current: str) -> str | None:
    """The level after ``current`` (wrapping); ``None`` for a model without reasoning."""
    return cycle_thinking_level(info, current) if info is not None else None
