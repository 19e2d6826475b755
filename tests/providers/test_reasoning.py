"""Thinking levels onto each API's request keys: the pure mapping."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pi_context.errors import ProviderError
from pi_context.messages import ThinkingLevel
from pi_context.model import ModelInfo
from pi_context.providers.reasoning import (
    INTERLEAVED_THINKING_BETA,
    anthropic_thinking,
    completions_reasoning,
    completions_thinking_format,
    google_thinking_config,
    responses_reasoning,
    thinking_budget,
    uses_google_thinking_level,
)


def info(
    provider: str = "p",
    model_id: str = "m",
    *,
    reasoning: bool = True,
    max_tokens: int = 64_000,
    levels: dict[str, str | None] | None = None,
    base_url: str | None = None,
    **compat: Any,
) -> ModelInfo:
    return ModelInfo(
        provider=provider,
        id=model_id,
        api="x",
        context_window=200_000,
        max_tokens=max_tokens,
        reasoning=reasoning,
        base_url=base_url,
        thinking_level_map=levels or {},
        compat=compat,
    )


def test_budgets_default_and_settings() -> None:
    assert [thinking_budget(level) for level in ("minimal", "low", "medium", "high")] == [
        1024,
        2048,
        8192,
        16384,
    ]
    assert thinking_budget("max") == thinking_budget("xhigh") == 16384
    assert thinking_budget("low", {"low": 3000}) == 3000
    assert thinking_budget("xhigh", {"high": 20000}) == 20000


def test_anthropic_budget_fits_the_model_cap() -> None:
    # maxTokens + budget above the model's cap: the cap wins and the budget leaves 1024 to answer
    small = info(max_tokens=4096)
    got = anthropic_thinking(small, "high", 4096)
    assert got.max_tokens == 4096
    assert got.params["thinking"]["budget_tokens"] == 3072
    assert got.betas == (INTERLEAVED_THINKING_BETA,)
    tiny = info(max_tokens=1024)
    assert anthropic_thinking(tiny, "low", 1024).params["thinking"]["budget_tokens"] == 1024
    assert anthropic_thinking(info(reasoning=False), "high", 1000).params == {}
    off = anthropic_thinking(info(), "off", 1000)
    assert off.params == {"thinking": {"type": "disabled"}}
    assert not off.thinking_enabled


def test_anthropic_adaptive_effort_uses_the_map() -> None:
    adaptive = info(forceAdaptiveThinking=True, levels={"max": "max", "high": "xhigh"})
    got = anthropic_thinking(adaptive, "high", 1000)
    assert got.params == {
        "thinking": {"type": "adaptive", "display": "summarized"},
        "output_config": {"effort": "xhigh"},
    }
    assert got.max_tokens is None
    assert not got.betas


@pytest.mark.parametrize(
    ("provider", "base_url", "compat", "expected"),
    [
        ("openai", None, {}, "openai"),
        ("deepseek", None, {}, "deepseek"),
        ("lab", "https://api.deepseek.com/v1", {}, "deepseek"),
        ("zai", None, {}, "zai"),
        ("together", None, {}, "together"),
        ("openrouter", None, {}, "openrouter"),
        ("lab", None, {"thinkingFormat": "qwen"}, "qwen"),
    ],
)
def test_completions_format_detection(
    provider: str, base_url: str | None, compat: dict[str, Any], expected: str
) -> None:
    assert completions_thinking_format(info(provider, base_url=base_url, **compat)) == expected


@pytest.mark.parametrize(
    ("model", "level", "expected"),
    [
        (info("openai"), "low", {"reasoning_effort": "low"}),
        (info("openai"), "off", {}),
        (info("openai", levels={"off": "none"}), "off", {"reasoning_effort": "none"}),
        (info("openai", levels={"high": "max"}), "high", {"reasoning_effort": "max"}),
        (info("openai", reasoning=False), "high", {}),
        (info("openrouter"), "medium", {"reasoning": {"effort": "medium"}}),
        (info("openrouter"), "off", {"reasoning": {"effort": "none"}}),
        (info("openrouter", levels={"off": None}), "off", {}),
        (
            info("deepseek"),
            "high",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
        ),
        (info("deepseek"), "off", {"thinking": {"type": "disabled"}}),
        (info("zai"), "high", {"thinking": {"type": "enabled", "clear_thinking": False}}),
        (info("zai"), "off", {"thinking": {"type": "disabled"}}),
        (info("together"), "low", {"reasoning": {"enabled": True}}),
        (info("together"), "off", {"reasoning": {"enabled": False}}),
        (
            info("q", thinkingFormat="qwen"),
            "low",
            {"enable_thinking": True, "reasoning_effort": "low"},
        ),
        (info("q", thinkingFormat="qwen"), "off", {"enable_thinking": False}),
        (
            info("q", thinkingFormat="qwen-chat-template"),
            "low",
            {"chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True}},
        ),
        (info("ant-ling"), "low", {}),
        (info("ant-ling", levels={"low": "l1"}), "low", {"reasoning": {"effort": "l1"}}),
        (info("s", thinkingFormat="string-thinking"), "high", {"thinking": "high"}),
        (info("s", thinkingFormat="string-thinking"), "off", {"thinking": "none"}),
        (info("openai", supportsReasoningEffort=False), "high", {}),
    ],
)
def test_completions_mapping(model: ModelInfo, level: ThinkingLevel, expected: Any) -> None:
    assert completions_reasoning(model, level) == expected


def test_completions_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(ProviderError, match=r'p/m: compat.thinkingFormat "nope"'):
        completions_reasoning(info(thinkingFormat="nope"), "low")


def test_responses_mapping() -> None:
    include = ["reasoning.encrypted_content"]
    gpt5 = info("openai", levels={"off": None})
    assert responses_reasoning(gpt5, "off") == {}
    assert responses_reasoning(gpt5, "max") == {
        "reasoning": {"effort": "high", "summary": "auto"},
        "include": include,
    }
    assert responses_reasoning(info("openai"), "off") == {"reasoning": {"effort": "none"}}
    assert responses_reasoning(info("openai", levels={"off": "minimal"}), "off") == {
        "reasoning": {"effort": "minimal"}
    }
    assert responses_reasoning(info("github-copilot"), "off") == {}
    assert responses_reasoning(info("xai", reasoning=False), "off") == {"include": include}
    assert responses_reasoning(info("openai", reasoning=False), "high") == {}


def test_google_level_models() -> None:
    assert uses_google_thinking_level("gemini-3-pro-preview")
    assert uses_google_thinking_level("gemini-3.1-flash")
    assert uses_google_thinking_level("Gemini-4-ultra")
    assert uses_google_thinking_level("gemma-4-31b-it")
    assert uses_google_thinking_level("gemini-flash-latest")
    assert not uses_google_thinking_level("gemini-2.5-pro")


def test_google_mapping() -> None:
    flash = info("google", "gemini-2.5-flash-lite")
    assert google_thinking_config(flash, "minimal") == {
        "includeThoughts": True,
        "thinkingBudget": 512,
    }
    assert google_thinking_config(flash, "low", {"low": 999}) == {
        "includeThoughts": True,
        "thinkingBudget": 999,
    }
    assert google_thinking_config(flash, "off") == {"thinkingBudget": 0}
    other = info("google", "gemini-exp")
    assert google_thinking_config(other, "high") == {"includeThoughts": True, "thinkingBudget": -1}
    assert google_thinking_config(info("google", reasoning=False), "high") is None
    gemini3 = info("google", "gemini-3-pro", levels={"off": None, "minimal": None})
    assert google_thinking_config(gemini3, "off") == {
        "includeThoughts": True,
        "thinkingLevel": "LOW",
    }
    mapped = info("google", "gemini-3-pro", levels={"high": "XHIGH"})
    with pytest.raises(
        ProviderError,
        match="Unsupported Google thinking level mapping for google/gemini-3-pro: high -> xhigh",
    ):
        google_thinking_config(mapped, "high")


def test_a_budget_cut_by_the_window_stays_the_same_while_the_context_grows() -> None:
    # a 48k window, high (16,384): pi would send room - 1024, one value per request
    small_window = dataclasses.replace(info(max_tokens=64_000), context_window=48_000)
    budgets = set()
    for input_tokens in range(28_000, 31_000, 250):
        got = anthropic_thinking(small_window, "high", 64_000, input_tokens=input_tokens)
        budget = got.params["thinking"]["budget_tokens"]
        assert got.max_tokens is not None
        assert budget < got.max_tokens
        budgets.add(budget)
    assert budgets == {8192}
    # the last stretch before the window: 1024 with room to answer, not a value per request
    tight = dataclasses.replace(info(max_tokens=8192), context_window=48_000)
    near = [
        anthropic_thinking(tight, "low", 8192, input_tokens=n) for n in range(41_000, 44_001, 500)
    ]
    assert {t.params["thinking"]["budget_tokens"] for t in near} == {1024}
    assert all(t.max_tokens is not None and t.max_tokens >= 2048 for t in near)
    # a budget below 8192 that the window cuts drops once, straight to 1024: the ladder is
    # 1024 x 8^k, so no step on the way (7168 -> 4096 -> 2048 -> 1024 would be three rewrites)
    capped = dataclasses.replace(info(max_tokens=8192), context_window=48_000)
    approach = {
        anthropic_thinking(capped, "medium", 8192, input_tokens=n).params["thinking"][
            "budget_tokens"
        ]
        for n in range(30_000, 44_001, 250)
    }
    assert approach == {7168, 1024}
    # untouched where the window leaves room for the whole budget
    roomy = anthropic_thinking(info(max_tokens=64_000), "high", 64_000, input_tokens=10_000)
    assert roomy.params["thinking"]["budget_tokens"] == 16384
