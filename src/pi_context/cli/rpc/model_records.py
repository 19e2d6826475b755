"""Models as the RPC protocol reports them.

A model record is pi's model object: ``id, name, api, provider, baseUrl, reasoning, input,
cost, contextWindow, maxTokens`` plus ``thinkingLevelMap`` and ``compat`` when the model has
them. Thinking levels, their support and clamping are :mod:`pi_context.model.thinking`'s.
"""

from __future__ import annotations

from typing import Any

from pi_context.model import ModelInfo

__all__ = ["model_record"]


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
