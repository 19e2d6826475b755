"""The collapse contender switches both HTTP adapters to pi's collapse delivery, and back."""

from __future__ import annotations

from benchmarks.economy.collapse_launcher import install_collapse

from pi_context.model import ModelInfo, system_delivery_of
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.openai import OpenAIChatModel


def test_both_adapters_collapse_while_installed_and_recover_after() -> None:
    anthropic_info = ModelInfo(
        provider="sim", id="m", api="anthropic-messages", context_window=1000, max_tokens=100
    )
    openai_info = ModelInfo(
        provider="sim", id="m", api="openai-completions", context_window=1000, max_tokens=100
    )
    undo = install_collapse()
    try:
        models = [
            AnthropicModel(anthropic_info, api_key="k", base_url="http://127.0.0.1:9"),
            OpenAIChatModel(openai_info, base_url="http://127.0.0.1:9/v1"),
        ]
        assert [system_delivery_of(m) for m in models] == ["collapse", "collapse"]
    finally:
        undo()
    assert (
        system_delivery_of(
            AnthropicModel(anthropic_info, api_key="k", base_url="http://127.0.0.1:9")
        )
        == "user_turn"
    )
    assert (
        system_delivery_of(OpenAIChatModel(openai_info, base_url="http://127.0.0.1:9/v1"))
        == "user_turn"
    )
