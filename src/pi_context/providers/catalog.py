"""Built-in models: context window, output limit and prices of current models.

Prices are dollars per million tokens (``cacheWrite`` is the 5-minute cache write price for
Anthropic; OpenAI does not bill cache writes). A ``models.json`` entry with the same provider
and id replaces a built-in; ``modelOverrides`` change single fields.
"""

from __future__ import annotations

from pi_context.model import ModelCost, ModelInfo

__all__ = [
    "ANTHROPIC_BASE_URL",
    "BUILTIN_MODELS",
    "DEFAULT_MODEL_IDS",
    "LOCAL_MODEL",
    "OPENAI_BASE_URL",
    "PROVIDER_API",
]

OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"

PROVIDER_API = {"openai": "openai-completions", "anthropic": "anthropic-messages"}


def _builtin(
    provider: str, model_id: str, name: str, window: int, out: int, cost: ModelCost, reasoning: bool
) -> ModelInfo:
    return ModelInfo(
        provider=provider,
        id=model_id,
        api=PROVIDER_API[provider],
        name=name,
        base_url=OPENAI_BASE_URL if provider == "openai" else ANTHROPIC_BASE_URL,
        context_window=window,
        max_tokens=out,
        reasoning=reasoning,
        images=True,
        cost=cost,
        system_messages_mid_conversation=provider == "openai",
    )


def _anthropic(
    model_id: str, name: str, window: int, out: int, price: tuple[float, float, float, float]
) -> ModelInfo:
    """Prices: input, output, cache read, cache write (all Claude models reason)."""
    return _builtin("anthropic", model_id, name, window, out, ModelCost(*price), True)


def _openai(
    model_id: str,
    name: str,
    window: int,
    out: int,
    price: tuple[float, float, float],
    *,
    reasoning: bool,
) -> ModelInfo:
    """Prices: input, output, cache read (OpenAI does not bill cache writes)."""
    return _builtin("openai", model_id, name, window, out, ModelCost(*price), reasoning)


BUILTIN_MODELS: tuple[ModelInfo, ...] = (
    _anthropic("claude-opus-4-5", "Claude Opus 4.5", 200_000, 64_000, (5, 25, 0.5, 6.25)),
    _anthropic("claude-sonnet-4-5", "Claude Sonnet 4.5", 200_000, 64_000, (3, 15, 0.3, 3.75)),
    _anthropic("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000, (1, 5, 0.1, 1.25)),
    _anthropic("claude-opus-4-1", "Claude Opus 4.1", 200_000, 32_000, (15, 75, 1.5, 18.75)),
    _anthropic("claude-sonnet-4-0", "Claude Sonnet 4", 200_000, 64_000, (3, 15, 0.3, 3.75)),
    _openai("gpt-5", "GPT-5", 400_000, 128_000, (1.25, 10, 0.125), reasoning=True),
    _openai("gpt-5-mini", "GPT-5 mini", 400_000, 128_000, (0.25, 2, 0.025), reasoning=True),
    _openai("gpt-5-nano", "GPT-5 nano", 400_000, 128_000, (0.05, 0.4, 0.005), reasoning=True),
    _openai("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, (2, 8, 0.5), reasoning=False),
    _openai("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, (0.4, 1.6, 0.1), reasoning=False),
    _openai("gpt-4o", "GPT-4o", 128_000, 16_384, (2.5, 10, 1.25), reasoning=False),
    _openai("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384, (0.15, 0.6, 0.075), reasoning=False),
    _openai("o3", "o3", 200_000, 100_000, (2, 8, 0.5), reasoning=True),
    _openai("o4-mini", "o4-mini", 200_000, 100_000, (1.1, 4.4, 0.275), reasoning=True),
)

LOCAL_MODEL = ModelInfo(
    provider="local",
    id="smollm2-135m-instruct",
    api="llama-cpp",
    name="SmolLM2 135M Instruct (embedded, offline)",
    context_window=8_192,
    max_tokens=512,
    system_messages_mid_conversation=True,
)
"""The embedded offline model (the ``local`` extra): free, small, always available."""

DEFAULT_MODEL_IDS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5"}
"""Each built-in provider's default model, tried in this order when no model is named."""
