"""The google-generative-ai adapter against the replay server over real HTTP (spec §6.6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_context.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    ToolDeclaration,
    empty_usage,
    tool_result_message,
    user_message,
)
from pi_context.model import (
    ModelCost,
    ModelInfo,
    ModelRequest,
    RequestOptions,
    StreamDone,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolCallStart,
    complete,
)
from pi_context.providers.google import GoogleModel, split_base_url
from tests.providers.adapters import ask, assert_pi_usage_keys, track
from tests.providers.replay_server import ReplayServer, Reply, google_sse, json_reply, stream

READ: ToolDeclaration = {
    "name": "read",
    "description": "Read a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"const": "text"}},
    },
}
PNG = "iVBORw0KGgo="
# The google-genai SDK writes some nested keys in proto field spelling (``mime_type``,
# ``parameters_json_schema``, ``thinking_budget``); the Gemini API accepts both spellings.
SIG = "c2lnbmF0dXJlLTE="  # valid base64 without URL-unsafe characters


def info(**kw: Any) -> ModelInfo:
    base: dict[str, Any] = {
        "provider": "google",
        "id": "gemini-2.5-flash",
        "api": "google-generative-ai",
        "context_window": 1_048_576,
        "max_tokens": 65_536,
        "reasoning": True,
        "images": True,
        "cost": ModelCost(input=0.3, output=2.5, cache_read=0.03),
    }
    base.update(kw)
    return ModelInfo(**base)


def model(server: ReplayServer, **kw: Any) -> GoogleModel:
    return track(
        GoogleModel(info(**kw), api_key="g-key", base_url=server.url + "/v1beta", clock=lambda: 42)
    )


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "responseId": "resp-g1", **extra}


def usage(prompt: int, candidates: int, cached: int = 0, thoughts: int = 0) -> dict[str, Any]:
    return {
        "usageMetadata": {
            "promptTokenCount": prompt,
            "cachedContentTokenCount": cached,
            "candidatesTokenCount": candidates,
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + candidates + thoughts,
        }
    }


def reply(*chunks: dict[str, Any]) -> Reply:
    return stream(google_sse(list(chunks)))


async def run(m: GoogleModel, request: ModelRequest) -> list[StreamEvent]:
    return [e async for e in m.stream(request)]


def test_base_url_split() -> None:
    assert split_base_url("https://generativelanguage.googleapis.com/v1beta") == (
        "https://generativelanguage.googleapis.com",
        "v1beta",
    )
    assert split_base_url("https://opencode.ai/inference/google/v1beta/") == (
        "https://opencode.ai/inference/google",
        "v1beta",
    )
    assert split_base_url("http://127.0.0.1:9000") == ("http://127.0.0.1:9000", "v1beta")


async def test_thinking_text_implicit_cache_usage_and_exact_request(server: ReplayServer) -> None:
    server.add(
        reply(
            chunk({"text": "Plan", "thought": True}),
            chunk({"text": " more.", "thought": True, "thoughtSignature": SIG}),
            chunk({"text": "Hel"}),
            chunk({"text": "lo"}, finish="STOP", **usage(1000, 20, cached=700, thoughts=30)),
        )
    )
    request = ModelRequest(
        messages=[user_message("hi", timestamp=1)],
        system_prompt="Be brief.",
        tools=[READ],
        options=RequestOptions(thinking_level="low", max_tokens=4000, temperature=0.5),
    )
    events = await run(model(server), request)
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Plan", " more."]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.error is None
    msg = done.message
    assert msg["content"] == [
        {"type": "thinking", "thinking": "Plan more.", "thinkingSignature": SIG},
        {"type": "text", "text": "Hello"},
    ]
    assert (msg["stopReason"], msg.get("responseId")) == ("stop", "resp-g1")
    got = msg["usage"]
    assert_pi_usage_keys(got)
    assert (got["input"], got["output"], got["cacheRead"], got["cacheWrite"]) == (300, 50, 700, 0)
    assert (got.get("reasoning"), got["totalTokens"]) == (30, 1050)
    assert got["cost"]["cacheRead"] == pytest.approx(700 * 0.03 / 1e6)
    sent = server.requests[0]
    assert sent.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert sent.headers["x-goog-api-key"] == "g-key"
    assert sent.json() == {
        "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
        "systemInstruction": {"parts": [{"text": "Be brief."}], "role": "user"},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "description": "Read a file",
                        "name": "read",
                        "parameters_json_schema": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}, "mode": {"enum": ["text"]}},
                        },
                    }
                ]
            }
        ],
        "generationConfig": {
            "temperature": 0.5,
            "maxOutputTokens": 4000,
            "thinkingConfig": {"include_thoughts": True, "thinking_budget": 2048},
        },
    }


async def test_tool_call_signatures_and_results_are_carried(server: ReplayServer) -> None:
    server.add(
        reply(
            chunk(
                {
                    "functionCall": {"name": "read", "args": {"path": "a.py"}},
                    "thoughtSignature": SIG,
                },
                finish="STOP",
                **usage(10, 5),
            )
        ),
        reply(chunk({"text": "Done."}, finish="STOP", **usage(20, 2))),
    )
    m = model(server)
    first = ModelRequest(messages=[user_message("read a.py", timestamp=1)], tools=[READ])
    events = await run(m, first)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name) for s in starts] == [("read_42_1", "read")]
    assert [e.arguments_json for e in events if isinstance(e, ToolCallDelta)] == ['{"path":"a.py"}']
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.message["stopReason"] == "toolUse"
    assert done.message["content"] == [
        {
            "type": "toolCall",
            "id": "read_42_1",
            "name": "read",
            "arguments": {"path": "a.py"},
            "thoughtSignature": SIG,
        }
    ]
    result = tool_result_message(
        "read_42_1", "read", [{"type": "text", "text": "print(1)"}], timestamp=3
    )
    second = ModelRequest(messages=[*first.messages, done.message, result], tools=[READ])
    assert (await complete(m, second)).error is None
    assert server.requests[1].json()["contents"] == [
        {"parts": [{"text": "read a.py"}], "role": "user"},
        {
            "parts": [
                {
                    "functionCall": {"args": {"path": "a.py"}, "name": "read"},
                    "thoughtSignature": SIG,
                }
            ],
            "role": "model",
        },
        {
            "parts": [{"functionResponse": {"name": "read", "response": {"output": "print(1)"}}}],
            "role": "user",
        },
    ]


def foreign_assistant() -> AssistantMessage:
    return {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": SIG},
            {"type": "text", "text": "Looking.", "textSignature": SIG},
            {"type": "toolCall", "id": "call|fc.1", "name": "read", "arguments": {"path": "p"}},
        ],
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-5",
        "usage": empty_usage(),
        "stopReason": "toolUse",
        "timestamp": 2,
    }


async def test_gemini_3_ids_images_and_other_models_history(server: ReplayServer) -> None:
    server.add(reply(chunk({"text": "ok"}, finish="STOP")))
    image: ImageContent = {"type": "image", "data": PNG, "mimeType": "image/png"}
    messages: list[Message] = [
        user_message("see", images=[image], timestamp=1),
        foreign_assistant(),
        tool_result_message("call|fc.1", "read", [image], is_error=True, timestamp=3),
    ]
    gemini3 = model(server, id="gemini-3-pro-preview", thinking_level_map={"off": None})
    assert (await complete(gemini3, ModelRequest(messages=messages))).error is None
    inline = {"inlineData": {"data": PNG, "mime_type": "image/png"}}
    assert server.requests[0].json()["contents"] == [
        {"parts": [{"text": "see"}, inline], "role": "user"},
        {
            # another model's thinking is dropped and its signatures are not sent
            "parts": [
                {"text": "Looking."},
                {"functionCall": {"args": {"path": "p"}, "id": "call_fc_1", "name": "read"}},
            ],
            "role": "model",
        },
        {
            "parts": [
                {
                    "functionResponse": {
                        "id": "call_fc_1",
                        "name": "read",
                        "parts": [{"inline_data": {"mime_type": "image/png", "data": PNG}}],
                        "response": {"error": "(see attached image)"},
                    }
                }
            ],
            "role": "user",
        },
    ]


async def test_older_gemini_gets_tool_images_in_a_following_turn(server: ReplayServer) -> None:
    server.add(reply(chunk({"text": "ok"}, finish="STOP")))
    image: ImageContent = {"type": "image", "data": PNG, "mimeType": "image/png"}
    messages: list[Message] = [
        user_message("go", timestamp=1),
        foreign_assistant(),
        tool_result_message("call|fc.1", "read", [image], timestamp=3),
    ]
    assert (await complete(model(server), ModelRequest(messages=messages))).error is None
    contents = server.requests[0].json()["contents"]
    assert contents[-2] == {
        "parts": [
            {"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}}
        ],
        "role": "user",
    }
    assert contents[-1] == {
        "parts": [
            {"text": "Tool result image:"},
            {"inlineData": {"data": PNG, "mime_type": "image/png"}},
        ],
        "role": "user",
    }


@pytest.mark.parametrize(
    ("finish", "stop", "message"),
    [
        ("MAX_TOKENS", "length", None),
        ("SAFETY", "error", "Provider stopped with: SAFETY"),
        (None, "error", "stream ended before the response was complete"),
    ],
)
async def test_stream_endings(
    server: ReplayServer, finish: str | None, stop: str, message: str | None
) -> None:
    server.add(reply(chunk({"text": "partial"}, finish=finish, **usage(5, 1))))
    done = await complete(model(server), ask())
    assert done.message["stopReason"] == stop
    if message is None:
        assert done.error is None
        return
    assert done.error is not None
    assert str(done.error).startswith(message)
    assert str(done.error).endswith(f"(google/gemini-2.5-flash at {server.url}/v1beta)")


async def test_strict_tools_on_gemini_3_use_validated_calling(server: ReplayServer) -> None:
    strict: ToolDeclaration = {
        **READ,
        "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
    }
    server.add(
        reply(chunk({"text": "a"}, finish="STOP")), reply(chunk({"text": "b"}, finish="STOP"))
    )
    request = ModelRequest(messages=ask().messages, tools=[strict])
    await complete(model(server, id="gemini-3-pro-preview"), request)
    await complete(model(server), request)  # Gemini 2.5: no calling mode
    assert server.requests[0].json()["toolConfig"] == {
        "functionCallingConfig": {"mode": "VALIDATED"}
    }
    assert "toolConfig" not in server.requests[1].json()
    assert "constrainedSampling" not in json.dumps(server.requests[0].json())


async def test_a_blocked_prompt_is_an_error(server: ReplayServer) -> None:
    server.add(reply({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, **usage(5, 0)}))
    done = await complete(model(server), ask())
    assert done.message["stopReason"] == "error"
    assert done.error is not None
    assert str(done.error).startswith("Provider stopped with: PROHIBITED_CONTENT")


async def test_http_errors_are_classified(server: ReplayServer) -> None:
    server.add(
        json_reply(
            429,
            {
                "error": {
                    "code": 429,
                    "message": "Resource has been exhausted",
                    "status": "RESOURCE_EXHAUSTED",
                }
            },
            {"retry-after": "3"},
        ),
        json_reply(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                    "status": "INVALID_ARGUMENT",
                }
            },
        ),
        json_reply(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "API key not valid. Please pass a valid API key.",
                    "status": "INVALID_ARGUMENT",
                }
            },
        ),
    )
    m = model(server)
    limited = await complete(m, ask())
    assert limited.error is not None
    assert (limited.error.kind, limited.error.status, limited.error.retry_after) == (
        "transient",
        429,
        3.0,
    )
    overflow = await complete(m, ask())
    assert overflow.error is not None
    assert overflow.error.kind == "context_overflow"
    bad_key = await complete(m, ask())
    assert bad_key.error is not None
    assert str(bad_key.error).startswith("400 API key not valid")


async def test_unsupported_level_mapping_fails_the_request_clearly(server: ReplayServer) -> None:
    m = model(server, id="gemini-3-pro", thinking_level_map={"high": "xhigh"})
    request = ModelRequest(messages=ask().messages, options=RequestOptions(thinking_level="high"))
    done = await complete(m, request)
    assert done.error is not None
    assert str(done.error).startswith(
        "Unsupported Google thinking level mapping for google/gemini-3-pro: high -> xhigh"
    )
    assert server.requests == []
