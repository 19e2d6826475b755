"""Extension ``before_provider_request`` on the wire: what the payload hook returns is the
body each HTTP adapter sends (through the real SDKs, to the replay server)."""

from __future__ import annotations

from typing import Any

from pi_context.model import Model, ModelInfo, ModelRequest, RequestOptions, complete
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.google import GoogleModel
from pi_context.providers.openai import OpenAIChatModel
from pi_context.providers.openai_responses import OpenAIResponsesModel
from tests.providers.adapters import ask, track
from tests.providers.replay_server import ReplayServer, json_reply

REFUSED = json_reply(400, {"error": {"code": 400, "message": "stop here", "type": "invalid"}})


def info(api: str) -> ModelInfo:
    return ModelInfo(
        provider="p", id="m-1", api=api, context_window=200_000, max_tokens=8_000, reasoning=False
    )


async def send(server: ReplayServer, model: Model, seen: list[dict[str, Any]]) -> Any:
    async def hook(payload: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(payload))
        return {**payload, "metadata_x": {"trace": "t1"}, "max_tokens_probe": 7}

    server.add(REFUSED)
    options = RequestOptions(max_tokens=1000, payload_hook=hook)
    return await complete(model, ModelRequest(messages=ask().messages, options=options))


async def test_anthropic_sends_the_hooks_body(server: ReplayServer) -> None:
    seen: list[dict[str, Any]] = []
    m = track(AnthropicModel(info("anthropic-messages"), api_key="k", base_url=server.url))
    await send(server, m, seen)
    body = server.requests[-1].json()
    assert seen[0]["model"] == "m-1"
    assert body == {**seen[0], "metadata_x": {"trace": "t1"}, "max_tokens_probe": 7}


async def test_openai_chat_sends_the_hooks_body(server: ReplayServer) -> None:
    seen: list[dict[str, Any]] = []
    m = track(OpenAIChatModel(info("openai-completions"), api_key="k", base_url=server.url + "/v1"))
    await send(server, m, seen)
    body = server.requests[-1].json()
    assert body == {**seen[0], "metadata_x": {"trace": "t1"}, "max_tokens_probe": 7}


async def test_openai_responses_sends_the_hooks_body(server: ReplayServer) -> None:
    seen: list[dict[str, Any]] = []
    m = track(
        OpenAIResponsesModel(info("openai-responses"), api_key="k", base_url=server.url + "/v1")
    )
    await send(server, m, seen)
    body = server.requests[-1].json()
    assert body["metadata_x"] == {"trace": "t1"}
    assert body["max_tokens_probe"] == 7
    assert body["input"] == seen[0]["input"]


async def test_a_hook_may_change_a_named_field(server: ReplayServer) -> None:
    async def hook(payload: dict[str, Any]) -> dict[str, Any]:
        return {**payload, "max_tokens": 123}

    m = track(AnthropicModel(info("anthropic-messages"), api_key="k", base_url=server.url))
    server.add(REFUSED)
    options = RequestOptions(max_tokens=1000, payload_hook=hook)
    await complete(m, ModelRequest(messages=ask().messages, options=options))
    assert server.requests[-1].json()["max_tokens"] == 123


async def test_gemini_refuses_fields_its_call_does_not_take(server: ReplayServer) -> None:
    seen: list[dict[str, Any]] = []
    m = track(
        GoogleModel(info("google-generative-ai"), api_key="k", base_url=server.url + "/v1beta")
    )
    done = await send(server, m, seen)
    assert set(seen[0]) == {"model", "contents", "config"}
    assert done.error is not None
    assert "before_provider_request" in str(done.error)
    assert "max_tokens_probe, metadata_x" in str(done.error)
    assert server.requests == []


async def _headers_of(server: ReplayServer, model: Model, dropped: str = "x-none") -> Any:
    async def hook(headers: dict[str, str | None]) -> None:
        headers["x-session-id"] = "s-1"
        headers[dropped] = None

    server.add(REFUSED)
    options = RequestOptions(max_tokens=1000, headers_hook=hook)
    await complete(model, ModelRequest(messages=ask().messages, options=options))
    return server.requests[-1].headers


async def test_anthropic_sends_the_hooks_headers(server: ReplayServer) -> None:
    m = track(AnthropicModel(info("anthropic-messages"), api_key="k", base_url=server.url))
    headers = await _headers_of(server, m, "anthropic-version")
    assert headers["x-session-id"] == "s-1"
    assert "anthropic-version" not in headers
    assert headers["x-api-key"] == "k"


async def test_openai_chat_sends_the_hooks_headers(server: ReplayServer) -> None:
    m = track(OpenAIChatModel(info("openai-completions"), api_key="k", base_url=server.url + "/v1"))
    headers = await _headers_of(server, m, "authorization")
    assert headers["x-session-id"] == "s-1"
    assert "authorization" not in headers
    assert headers["content-type"] == "application/json"


async def test_adapters_over_an_sdk_skip_the_headers_hook(server: ReplayServer) -> None:
    m = track(
        OpenAIResponsesModel(info("openai-responses"), api_key="k", base_url=server.url + "/v1")
    )
    headers = await _headers_of(server, m)
    assert "x-session-id" not in headers
