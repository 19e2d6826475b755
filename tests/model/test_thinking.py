"""Thinking levels: supported levels per model and clamping (pi's examples)."""

from __future__ import annotations

import pytest

from pi_context.model import ModelInfo
from pi_context.model.thinking import (
    DEFAULT_THINKING_LEVEL,
    THINKING_LEVELS,
    clamp_thinking_level,
    cycle_thinking_level,
    parse_thinking_level,
    provider_thinking_value,
    supported_thinking_levels,
)


def model(reasoning: bool = True, **levels: str | None) -> ModelInfo:
    return ModelInfo(
        provider="p",
        id="m",
        api="openai-responses",
        context_window=100_000,
        max_tokens=10_000,
        reasoning=reasoning,
        thinking_level_map=levels,
    )


GPT_5 = model(off=None, xhigh=None, max=None)
GEMMA_4 = model(off=None, low=None, medium=None)
CLAUDE_MAX = model(off=None, minimal=None, xhigh="xhigh", max="max")


def test_level_order_and_default() -> None:
    assert THINKING_LEVELS == ("off", "minimal", "low", "medium", "high", "xhigh", "max")
    assert DEFAULT_THINKING_LEVEL == "medium"
    assert parse_thinking_level("high") == "high"
    assert parse_thinking_level("HIGH") is None
    assert parse_thinking_level("extreme") is None


def test_supported_levels() -> None:
    assert supported_thinking_levels(model(reasoning=False)) == ("off",)
    # xhigh and max exist only where mapped to a provider value
    assert supported_thinking_levels(model()) == ("off", "minimal", "low", "medium", "high")
    assert supported_thinking_levels(GPT_5) == ("minimal", "low", "medium", "high")
    assert supported_thinking_levels(GEMMA_4) == ("minimal", "high")
    assert supported_thinking_levels(CLAUDE_MAX) == ("low", "medium", "high", "xhigh", "max")


@pytest.mark.parametrize(
    ("info", "requested", "expected"),
    [
        (GPT_5, "medium", "medium"),
        (GPT_5, "off", "minimal"),  # nearest supported above
        (GPT_5, "max", "high"),  # nothing above: nearest below
        (GEMMA_4, "medium", "high"),
        (GEMMA_4, "low", "high"),
        (CLAUDE_MAX, "off", "low"),
        (CLAUDE_MAX, "max", "max"),
        (model(reasoning=False), "high", "off"),
        (GPT_5, "bogus", "minimal"),  # unknown text: first supported level
        (model(), "xhigh", "high"),
    ],
)
def test_clamp(info: ModelInfo, requested: str, expected: str) -> None:
    assert clamp_thinking_level(info, requested) == expected


def test_provider_value() -> None:
    info = model(high="HIGH_EFFORT", low=None)
    assert provider_thinking_value(info, "high") == "HIGH_EFFORT"
    assert provider_thinking_value(info, "low") is None
    assert provider_thinking_value(info, "medium") is None


def test_cycle() -> None:
    assert cycle_thinking_level(model(reasoning=False), "off") is None
    assert cycle_thinking_level(GEMMA_4, "minimal") == "high"
    assert cycle_thinking_level(GEMMA_4, "high") == "minimal"  # wraps
    assert cycle_thinking_level(GEMMA_4, "medium") == "minimal"  # not supported: first
    assert cycle_thinking_level(model(), "high") == "off"
