"""Built-in models: context window, output limit, prices and thinking levels of current models.

Prices are dollars per million tokens (``cacheWrite`` is the 5-minute cache write price for
Anthropic; OpenAI and Google do not bill cache writes). A ``models.json`` entry with the same
provider and id replaces a built-in; ``modelOverrides`` change single fields.

The APIs are pi's: ``openai`` speaks the Responses API, ``anthropic`` Messages, ``google`` the
Gemini API. Models that cannot turn thinking off say so in ``thinking_level_map`` (``off`` mapped
to ``None``), as pi's catalog does. Other providers of pi's table
(:mod:`pi_context.providers.builtin_providers`) have no catalog here: any model id is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping

from pi_context.model import ModelCost, ModelInfo

__all__ = [
    "ANTHROPIC_BASE_URL",
    "BUILTIN_MODELS",
    "DEFAULT_MODEL_IDS",
    "GOOGLE_BASE_URL",
    "LOCAL_MODEL",
    "OPENAI_BASE_URL",
    "PROVIDER_API",
]

OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"

PROVIDER_API = {
    "openai": "openai-responses",
    "anthropic": "anthropic-messages",
    "google": "google-generative-ai",
}
"""The API of each provider with a catalog here."""

_BASE_URL = {"openai": OPENAI_BASE_URL, "anthropic": ANTHROPIC_BASE_URL, "google": GOOGLE_BASE_URL}
_NO_OFF: Mapping[str, str | None] = {"off": None}


def _builtin(
    provider: str,
    model_id: str,
    name: str,
    window: int,
    out: int,
    cost: ModelCost,
    reasoning: bool,
    levels: Mapping[str, str | None] | None = None,
) -> ModelInfo:
    return ModelInfo(
        provider=provider,
        id=model_id,
        api=PROVIDER_API[provider],
        name=name,
        base_url=_BASE_URL[provider],
        context_window=window,
        max_tokens=out,
        reasoning=reasoning,
        images=True,
        cost=cost,
        system_messages_mid_conversation=provider == "openai",
        thinking_level_map=dict(levels or {}),
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
    """Prices: input, output, cache read (OpenAI does not bill cache writes).

    Reasoning models here cannot turn reasoning off (pi maps their ``off`` to ``None``).
    """
    levels = _NO_OFF if reasoning else None
    return _builtin("openai", model_id, name, window, out, ModelCost(*price), reasoning, levels)


def _google(
    model_id: str,
    name: str,
    price: tuple[float, float, float],
    levels: Mapping[str, str | None] | None = None,
) -> ModelInfo:
    """Prices: input, output, cache read (prompts up to 200k tokens); all reason."""
    cost = ModelCost(*price)
    return _builtin("google", model_id, name, 1_048_576, 65_536, cost, True, levels)


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
    _google("gemini-2.5-pro", "Gemini 2.5 Pro", (1.25, 10, 0.125), _NO_OFF),
    _google("gemini-2.5-flash", "Gemini 2.5 Flash", (0.3, 2.5, 0.03)),
    _google("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", (0.1, 0.4, 0.01)),
    _google(
        "gemini-3-pro-preview",
        "Gemini 3 Pro Preview",
        (2, 12, 0.2),
        {"off": None, "minimal": None, "medium": None},
    ),
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

DEFAULT_MODEL_IDS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5",
    "google": "gemini-2.5-pro",
}
"""Each built-in provider's default model, tried in this order when no model is named."""
