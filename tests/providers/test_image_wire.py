"""Image blocks on the wire: the exact request part per adapter, with and without image input.

A user prompt with a text and an image (and a tool result with an image) goes through the real
SDK of each adapter to the replay server, which refuses it: only the recorded body matters.
Models without image input get pi's text notes instead.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from pi_context.messages import AssistantMessage, Message, image_block, user_message
from pi_context.model import Model, ModelInfo, ModelRequest, complete
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.google import GoogleModel
from pi_context.providers.openai import OpenAIChatModel
from pi_context.providers.openai_responses import OpenAIResponsesModel
from tests.providers.adapters import track
from tests.providers.replay_server import ReplayServer, json_reply

REFUSED = json_reply(400, {"error": {"code": 400, "message": "stop here", "type": "invalid"}})
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
GIF = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
PNG_URL = f"data:image/png;base64,{PNG}"
GIF_URL = f"data:image/gif;base64,{GIF}"


def urlsafe(data: str) -> str:
    return base64.urlsafe_b64encode(base64.b64decode(data)).decode("ascii")


Factory = Callable[[ReplayServer, bool], Model]


def info(api: str, model_id: str, images: bool) -> ModelInfo:
    return ModelInfo(
        provider="p", id=model_id, api=api, context_window=200_000, max_tokens=4000, images=images
    )


def anthropic(server: ReplayServer, images: bool) -> Model:
    m = info("anthropic-messages", "claude-x", images)
    return track(AnthropicModel(m, api_key="k", base_url=server.url))


def completions(server: ReplayServer, images: bool) -> Model:
    m = info("openai-completions", "gpt-x", images)
    return track(OpenAIChatModel(m, api_key="k", base_url=server.url + "/v1"))


def responses(server: ReplayServer, images: bool) -> Model:
    m = info("openai-responses", "gpt-x", images)
    return track(OpenAIResponsesModel(m, api_key="sk-k", base_url=server.url + "/v1"))


def google(server: ReplayServer, images: bool) -> Model:
    m = info("google-generative-ai", "gemini-3-pro", images)
    return track(GoogleModel(m, api_key="k", base_url=server.url + "/v1beta"))


async def sent_body(server: ReplayServer, model: Model, messages: list[Message]) -> dict[str, Any]:
    server.add(REFUSED)
    done = await complete(model, ModelRequest(messages=messages))
    assert done.error is not None
    body: dict[str, Any] = server.requests[-1].json()
    return body


def prompt() -> list[Message]:
    return [
        user_message(
            "look",
            images=[image_block(PNG, "image/png"), image_block(GIF, "image/gif")],
            timestamp=1,
        )
    ]


def _strip_cache(part: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k != "cache_control"}


async def test_anthropic_user_images(server: ReplayServer) -> None:
    body = await sent_body(server, anthropic(server, True), prompt())
    content = [_strip_cache(p) for p in body["messages"][-1]["content"]]
    assert content == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": GIF}},
    ]


async def test_completions_user_images(server: ReplayServer) -> None:
    body = await sent_body(server, completions(server, True), prompt())
    assert body["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
            {"type": "image_url", "image_url": {"url": GIF_URL}},
        ],
    }


async def test_responses_user_images(server: ReplayServer) -> None:
    body = await sent_body(server, responses(server, True), prompt())
    assert body["input"][-1] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look"},
            {"type": "input_image", "detail": "auto", "image_url": PNG_URL},
            {"type": "input_image", "detail": "auto", "image_url": GIF_URL},
        ],
    }


async def test_google_user_images(server: ReplayServer) -> None:
    body = await sent_body(server, google(server, True), prompt())
    # the google-genai SDK writes the blob as ``mime_type`` and URL-safe base64, both of which
    # the API's protobuf JSON accepts; the bytes are the image's
    assert body["contents"][-1] == {
        "role": "user",
        "parts": [
            {"text": "look"},
            {"inlineData": {"mime_type": "image/png", "data": urlsafe(PNG)}},
            {"inlineData": {"mime_type": "image/gif", "data": urlsafe(GIF)}},
        ],
    }


OMITTED = "(image omitted: model does not support images)"
TOOL_OMITTED = "(tool image omitted: model does not support images)"


def user_texts(body: dict[str, Any], factory: Factory) -> list[str]:
    """The texts of the last user turn, whatever the adapter's shape."""
    if factory is google:
        return [p["text"] for p in body["contents"][-1]["parts"]]
    if factory is responses:
        return [p["text"] for p in body["input"][-1]["content"]]
    last = body["messages"][-1]["content"]
    return [last] if isinstance(last, str) else [p["text"] for p in last]


@pytest.mark.parametrize("factory", [anthropic, completions, responses, google])
async def test_a_model_without_image_input_gets_one_note_per_run_of_images(
    server: ReplayServer, factory: Factory
) -> None:
    body = await sent_body(server, factory(server, False), prompt())
    assert user_texts(body, factory) == ["look", OMITTED]
    assert PNG[:40] not in str(body)
    assert urlsafe(PNG)[:40] not in str(body)


def tool_exchange() -> list[Message]:
    call: AssistantMessage = {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a.png"}}
        ],
        "api": "x",
        "provider": "x",
        "model": "x",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    return [
        user_message("read it", timestamp=1),
        call,
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "Read image file [image/png]"},
                image_block(PNG, "image/png"),
            ],
            "isError": False,
            "timestamp": 3,
        },
    ]


@pytest.mark.parametrize("factory", [anthropic, completions, responses, google])
async def test_tool_result_images_without_image_input(
    server: ReplayServer, factory: Factory
) -> None:
    body = await sent_body(server, factory(server, False), tool_exchange())
    text = str(body)
    assert PNG[:40] not in text
    assert urlsafe(PNG)[:40] not in text
    assert TOOL_OMITTED in text
