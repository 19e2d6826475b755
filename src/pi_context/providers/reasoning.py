"""Thinking levels onto each API's request fields (pi-ai's per-API mapping).

Each function is pure: given the model, the requested level and the output cap, it returns the
request keys to set (already in the API's wire spelling) and nothing else, so the adapters stay
translations and the mapping is tested on its own as well as on the wire.

A requested ``off`` follows each API's own ``off`` rule; any other level is first clamped to the
model's supported levels (:func:`~pi_context.model.thinking.clamp_thinking_level`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from pi_context.errors import ProviderError
from pi_context.messages import ThinkingLevel
from pi_context.model import ModelInfo
from pi_context.model.thinking import (
    clamp_thinking_level,
    provider_thinking_value,
    supported_thinking_levels,
)
from pi_context.providers.output_cap import clamp_output_to_context

__all__ = [
    "DEFAULT_THINKING_BUDGETS",
    "INTERLEAVED_THINKING_BETA",
    "AnthropicThinking",
    "anthropic_thinking",
    "completions_reasoning",
    "completions_thinking_format",
    "google_thinking_config",
    "request_level",
    "responses_reasoning",
    "thinking_budget",
    "uses_google_thinking_level",
]

DEFAULT_THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"


def request_level(info: ModelInfo, level: ThinkingLevel) -> ThinkingLevel:
    """The level an adapter maps: ``off`` stays ``off``, any other level is clamped."""
    if not info.reasoning:
        return "off"
    return "off" if level == "off" else clamp_thinking_level(info, level)


def thinking_budget(level: ThinkingLevel, budgets: Mapping[str, int] | None = None) -> int:
    """The token budget of ``level`` (``xhigh``/``max`` use ``high``'s); settings override."""
    key = "high" if level in ("xhigh", "max") else level
    if budgets and key in budgets:
        return int(budgets[key])
    return DEFAULT_THINKING_BUDGETS.get(key, DEFAULT_THINKING_BUDGETS["high"])


# anthropic-messages ------------------------------------------------------------------------


class AnthropicThinking(Struct, frozen=True):
    """What thinking adds to a Messages request: body keys, the output cap, beta headers."""

    params: dict[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None
    """Replaces ``max_tokens`` when set (budget thinking grows it to fit the budget)."""
    betas: tuple[str, ...] = ()
    thinking_enabled: bool = False
    """False when thinking is off: ``temperature`` may then be sent."""


def _anthropic_effort(info: ModelInfo, level: ThinkingLevel) -> str:
    mapped = provider_thinking_value(info, level)
    if mapped is not None:
        return mapped
    if level in ("minimal", "low"):
        return "low"
    if level == "medium":
        return "medium"
    return "high"


def anthropic_thinking(
    info: ModelInfo,
    level: ThinkingLevel,
    max_tokens: int,
    budgets: Mapping[str, int] | None = None,
    *,
    input_tokens: int | None = None,
) -> AnthropicThinking:
    """Budget thinking (``thinking.budget_tokens``) or adaptive thinking (``output_config``).

    With ``input_tokens`` the grown output limit is clamped to the window again, as pi does;
    a budget the window cuts is rounded down to 1024 x 8^k (pi: ``max_tokens - 1024``), so
    that it stays the same while the context grows and the prompt cache stays valid.
    """
    if not info.reasoning:
        return AnthropicThinking()
    adaptive = bool(info.compat.get("forceAdaptiveThinking"))
    chosen = level
    if chosen == "off" and "off" not in supported_thinking_levels(info):
        chosen = clamp_thinking_level(info, "off")
    chosen = request_level(info, chosen)
    if chosen == "off":
        return AnthropicThinking({"thinking": {"type": "disabled"}})
    if adaptive:
        return AnthropicThinking(
            {
                "thinking": {"type": "adaptive", "display": "summarized"},
                "output_config": {"effort": _anthropic_effort(info, chosen)},
            },
            thinking_enabled=True,
        )
    budget = thinking_budget(chosen, budgets)
    adjusted = min(max_tokens + budget, info.max_tokens)
    if adjusted <= budget:
        budget = min(budget, max(0, adjusted - 1024))
    unclamped = min(budget, max(0, adjusted - 1024)) or 1024
    if input_tokens is not None:
        adjusted = clamp_output_to_context(info, input_tokens, adjusted)
    budget_tokens = min(budget, max(0, adjusted - 1024)) or 1024
    if budget_tokens < unclamped:
        # The window clamp bit: pi sends room - 1024, a different budget on every request
        # as the context grows, and a changed budget voids Anthropic's cached messages. Step
        # down on a coarse ladder instead (1024 x 8^k: 1024, 8192, 65536), so a context growing
        # toward the window changes the budget once, not at every request (a ladder of powers
        # of two still cost three full rewrites per approach: benchmarks/README.md, finding
        # 12); never below Anthropic's minimum of 1024, with room to answer after it.
        step = 1024
        while step * 8 <= budget_tokens:
            step *= 8
        budget_tokens = step
        adjusted = max(adjusted, budget_tokens + 1024)
    return AnthropicThinking(
        {"thinking": {"type": "enabled", "budget_tokens": budget_tokens, "display": "summarized"}},
        max_tokens=adjusted,
        betas=(INTERLEAVED_THINKING_BETA,),
        thinking_enabled=True,
    )


# openai-completions ------------------------------------------------------------------------

_NO_REASONING_EFFORT = ("xai", "zai", "together", "cloudflare-ai-gateway", "nvidia", "ant-ling")


def completions_thinking_format(info: ModelInfo) -> str:
    """``compat.thinkingFormat``, else detected from the provider and base URL as pi does."""
    declared = info.compat.get("thinkingFormat")
    if isinstance(declared, str) and declared:
        return declared
    provider = info.provider
    if provider == "deepseek" or "deepseek.com" in (info.base_url or ""):
        return "deepseek"
    if provider in ("zai", "together", "ant-ling", "openrouter"):
        return provider
    return "openai"


def _supports_reasoning_effort(info: ModelInfo) -> bool:
    declared = info.compat.get("supportsReasoningEffort")
    if isinstance(declared, bool):
        return declared
    provider = info.provider
    return not (provider in _NO_REASONING_EFFORT or provider.startswith("moonshot"))


def _effort(info: ModelInfo, level: ThinkingLevel) -> str:
    return provider_thinking_value(info, level) or level


def _off_value(info: ModelInfo) -> str | None:
    """``map.off ?? "none"``, or ``None`` when the map forbids ``off`` (``null``)."""
    mapping = info.thinking_level_map
    if "off" in mapping and mapping["off"] is None:
        return None
    return mapping.get("off") or "none"


def completions_reasoning(info: ModelInfo, level: ThinkingLevel) -> dict[str, Any]:
    """Chat Completions keys for ``level``, by the model's thinking format."""
    if not info.reasoning:
        return {}
    fmt = completions_thinking_format(info)
    chosen = request_level(info, level)
    effort_ok = _supports_reasoning_effort(info)
    on = chosen != "off"
    effort: dict[str, Any] = {"reasoning_effort": _effort(info, chosen)} if on and effort_ok else {}
    if fmt == "openai":
        if on:
            return effort
        off = provider_thinking_value(info, "off")
        return {"reasoning_effort": off} if off is not None else {}
    if fmt == "openrouter":
        if on:
            return {"reasoning": {"effort": _effort(info, chosen)}}
        value = _off_value(info)
        return {"reasoning": {"effort": value}} if value is not None else {}
    if fmt == "deepseek":
        if on:
            return {"thinking": {"type": "enabled"}, **effort}
        off_forbidden = "off" in info.thinking_level_map and info.thinking_level_map["off"] is None
        return {} if off_forbidden else {"thinking": {"type": "disabled"}}
    if fmt == "zai":
        if on:
            mapped = provider_thinking_value(info, chosen)
            extra = {"reasoning_effort": mapped} if mapped is not None and effort_ok else {}
            return {"thinking": {"type": "enabled", "clear_thinking": False}, **extra}
        return {"thinking": {"type": "disabled"}}
    if fmt == "qwen":
        return {"enable_thinking": True, **effort} if on else {"enable_thinking": False}
    if fmt == "qwen-chat-template":
        if on:
            return {"chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True}}
        return {"chat_template_kwargs": {"enable_thinking": False}}
    if fmt == "together":
        return {"reasoning": {"enabled": on}, **effort}
    if fmt == "ant-ling":
        mapped = provider_thinking_value(info, chosen) if on else None
        return {"reasoning": {"effort": mapped}} if mapped is not None else {}
    if fmt == "string-thinking":
        if on:
            return {"thinking": _effort(info, chosen)}
        value = _off_value(info)
        return {"thinking": value} if value is not None else {}
    raise ProviderError(
        f'{info.provider}/{info.id}: compat.thinkingFormat "{fmt}" is not supported by pictx'
    )


# openai-responses --------------------------------------------------------------------------


def responses_reasoning(info: ModelInfo, level: ThinkingLevel) -> dict[str, Any]:
    """Responses API ``reasoning`` (+ ``include`` of encrypted reasoning) for ``level``."""
    include = {"include": ["reasoning.encrypted_content"]}
    if not info.reasoning:
        return include if info.provider == "xai" else {}
    chosen = request_level(info, level)
    if chosen != "off":
        return {"reasoning": {"effort": _effort(info, chosen), "summary": "auto"}, **include}
    value = _off_value(info)
    if value is None or info.provider == "github-copilot":
        return include if info.provider == "xai" else {}
    out: dict[str, Any] = {"reasoning": {"effort": value}}
    if info.provider == "xai":
        out.update(include)
    return out


# google-generative-ai ----------------------------------------------------------------------

_GOOGLE_LEVEL_IDS = re.compile(r"gemini-3(\.\d+)?-(pro|flash)|gemini-([4-9]|[1-9]\d)")
_GOOGLE_BUDGETS: tuple[tuple[str, dict[str, int]], ...] = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
_GOOGLE_LEVELS = ("minimal", "low", "medium", "high")


def uses_google_thinking_level(model_id: str) -> bool:
    """True for Gemini 3+ (and Gemma 4) ids, which take ``thinkingLevel`` not a budget."""
    lowered = model_id.lower()
    return (
        _GOOGLE_LEVEL_IDS.search(lowered) is not None
        or lowered in ("gemini-flash-latest", "gemini-flash-lite-latest")
        or "gemma4" in lowered
        or "gemma-4" in lowered
    )


def _google_budget(info: ModelInfo, level: ThinkingLevel, budgets: Mapping[str, int] | None) -> int:
    if budgets and level in budgets:
        return int(budgets[level])
    key = "high" if level in ("xhigh", "max") else level
    for fragment, table in _GOOGLE_BUDGETS:
        if fragment in info.id:
            return table.get(key, table["high"])
    return -1


def google_thinking_config(
    info: ModelInfo, level: ThinkingLevel, budgets: Mapping[str, int] | None = None
) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` for ``level`` (``None``: not a reasoning model)."""
    if not info.reasoning:
        return None
    chosen = request_level(info, level)
    if not uses_google_thinking_level(info.id):
        if chosen == "off":
            return {"thinkingBudget": 0}
        return {"includeThoughts": True, "thinkingBudget": _google_budget(info, chosen, budgets)}
    if chosen == "off":
        if "off" in supported_thinking_levels(info):
            return {"thinkingBudget": 0}
        chosen = clamp_thinking_level(info, "off")
    mapped = provider_thinking_value(info, chosen)
    value = mapped.lower() if mapped is not None else chosen
    if value not in _GOOGLE_LEVELS:
        raise ProviderError(
            f"Unsupported Google thinking level mapping for {info.provider}/{info.id}: "
            f"{chosen} -> {value}"
        )
    return {"includeThoughts": True, "thinkingLevel": value.upper()}
