"""The thinking level on the wire: the exact request field per adapter and level.

Every request goes through the real SDK to the replay server (which refuses it: only the body
matters), and the recorded body's thinking field is compared with pi's mapping.
"""

from __future__ import annotations

from typing import Any

import pytest

from pi_context.messages import ThinkingLevel
from pi_context.model import Model, ModelInfo, ModelRequest, RequestOptions, complete
from pi_context.model.thinking import THINKING_LEVELS
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.google import GoogleModel
from pi_context.providers.openai import OpenAIChatModel
from pi_context.providers.openai_responses import OpenAIResponsesModel
from tests.providers.adapters import ask, track
from tests.providers.replay_server import ReplayServer, json_reply

REFUSED = json_reply(400, {"error": {"code": 400, "message": "stop here", "type": "invalid"}})


def info(api: str, model_id: str, **kw: Any) -> ModelInfo:
    return ModelInfo(
        provider=kw.pop("provider", "p"),
        id=model_id,
        api=api,
        context_window=200_000,
        max_tokens=kw.pop("max_tokens", 64_000),
        reasoning=True,
        **kw,
    )


async def sent_body(server: ReplayServer, model: Model, level: ThinkingLevel) -> dict[str, Any]:
    server.add(REFUSED)
    options = RequestOptions(thinking_level=level, max_tokens=4000)
    done = await complete(model, ModelRequest(messages=ask().messages, options=options))
    assert done.error is not None
    body: dict[str, Any] = server.requests[-1].json()
    return body


def anthropic_budget(budget: int) -> dict[str, Any]:
    thinking = {"type": "enabled", "budget_tokens": budget, "display": "summarized"}
    return {"thinking": thinking, "max_tokens": 4000 + budget}


ANTHROPIC_BUDGET = {
    "off": {"thinking": {"type": "disabled"}, "max_tokens": 4000},
    "minimal": anthropic_budget(1024),
    "low": anthropic_budget(2048),
    "medium": anthropic_budget(8192),
    "high": anthropic_budget(16384),
    "xhigh": anthropic_budget(16384),  # not mapped for this model: clamped to high
    "max": anthropic_budget(16384),
}


@pytest.mark.parametrize("level", THINKING_LEVELS)
async def test_anthropic_budget_models(server: ReplayServer, level: ThinkingLevel) -> None:
    m = track(
        AnthropicModel(
            info("anthropic-messages", "claude-budget-model"), api_key="k", base_url=server.url
        )
    )
    body = await sent_body(server, m, level)
    assert {"thinking": body["thinking"], "max_tokens": body["max_tokens"]} == ANTHROPIC_BUDGET[
        level
    ]
    assert "output_config" not in body
    beta = server.requests[-1].headers.get("anthropic-beta")
    assert beta == (None if level == "off" else "interleaved-thinking-2025-05-14")


ADAPTIVE_EFFORT = {
    "off": "low",  # off is not supported by this model: clamped up
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}


@pytest.mark.parametrize("level", THINKING_LEVELS)
async def test_anthropic_adaptive_models(server: ReplayServer, level: ThinkingLevel) -> None:
    model_info = info(
        "anthropic-messages",
        "claude-opus-5-5",
        compat={"forceAdaptiveThinking": True},
        thinking_level_map={"off": None, "minimal": None, "xhigh": "xhigh", "max": "max"},
    )
    m = track(AnthropicModel(model_info, api_key="k", base_url=server.url))
    body = await sent_body(server, m, level)
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": ADAPTIVE_EFFORT[level]}
    assert body["max_tokens"] == 4000


COMPLETIONS_EFFORT = {
    "off": None,
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


@pytest.mark.parametrize("level", THINKING_LEVELS)
async def test_openai_completions(server: ReplayServer, level: ThinkingLevel) -> None:
    model_info = info("openai-completions", "o4-mini", provider="openai")
    m = track(OpenAIChatModel(model_info, api_key="k", base_url=server.url + "/v1"))
    body = await sent_body(server, m, level)
    assert body.get("reasoning_effort") == COMPLETIONS_EFFORT[level]


RESPONSES_EFFORT = {
    "off": None,  # gpt-5 maps off to null: no reasoning field at all
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


@pytest.mark.parametrize("level", THINKING_LEVELS)
async def test_openai_responses(server: ReplayServer, level: ThinkingLevel) -> None:
    model_info = info(
        "openai-responses", "gpt-5", provider="openai", thinking_level_map={"off": None}
    )
    m = track(OpenAIResponsesModel(model_info, api_key="k", base_url=server.url + "/v1"))
    body = await sent_body(server, m, level)
    effort = RESPONSES_EFFORT[level]
    if effort is None:
        assert "reasoning" not in body
        assert "include" not in body
    else:
        assert body["reasoning"] == {"effort": effort, "summary": "auto"}
        assert body["include"] == ["reasoning.encrypted_content"]


async def test_openai_responses_off_when_allowed(server: ReplayServer) -> None:
    model_info = info("openai-responses", "gpt-5.1", provider="openai")
    m = track(OpenAIResponsesModel(model_info, api_key="k", base_url=server.url + "/v1"))
    body = await sent_body(server, m, "off")
    assert body["reasoning"] == {"effort": "none"}
    assert "include" not in body


GEMINI_25_FLASH = {
    "off": {"thinking_budget": 0},
    "minimal": {"include_thoughts": True, "thinking_budget": 128},
    "low": {"include_thoughts": True, "thinking_budget": 2048},
    "medium": {"include_thoughts": True, "thinking_budget": 8192},
    "high": {"include_thoughts": True, "thinking_budget": 24576},
    "xhigh": {"include_thoughts": True, "thinking_budget": 24576},
    "max": {"include_thoughts": True, "thinking_budget": 24576},
}


@pytest.mark.parametrize("level", THINKING_LEVELS)
async def test_google_budget_models(server: ReplayServer, level: ThinkingLevel) -> None:
    model_info = info("google-generative-ai", "gemini-2.5-flash", provider="google")
    m = track(GoogleModel(model_info, api_key="k", base_url=server.url + "/v1beta"))
    body = await sent_body(server, m, level)
    assert body["generationConfig"]["thinkingConfig"] == GEMINI_25_FLASH[level]


GEMINI_3_PRO = {
    "off": "LOW",  # off is not supported: the clamped level is sent
    "minimal": "LOW",
    "low": "LOW",
    "medium": "HIGH",
    "high": "HIGH",
    "xhigh": "HIGH",
    "max": "HIGH",
}


@pytest.mark.parametrize("level", THINKING_LEVELS)
async def test_google_level_models(server: ReplayServer, level: ThinkingLevel) -> None:
    model_info = info(
        "google-generative-ai",
        "gemini-3-pro-preview",
        provider="google",
        thinking_level_map={"off": None, "minimal": None, "medium": None},
    )
    m = track(GoogleModel(model_info, api_key="k", base_url=server.url + "/v1beta"))
    body = await sent_body(server, m, level)
    assert body["generationConfig"]["thinkingConfig"] == {
        "include_thoughts": True,
        "thinking_level": GEMINI_3_PRO[level],
    }
