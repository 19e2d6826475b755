"""The OpenAI-compatible adapter against the replay server over real HTTP."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from pi_context.messages import Message, empty_usage, tool_result_message, user_message
from pi_context.model import (
    ModelCost,
    ModelInfo,
    ModelRequest,
    RequestOptions,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
    complete,
)
from pi_context.model.classify import is_context_overflow
from pi_context.providers.openai import OpenAIChatModel
from pi_context.providers.openai_wire import ChatCompletionsClient
from tests.providers.adapters import ask, assert_pi_usage_keys, track
from tests.providers.replay_server import ReplayServer, json_reply, openai_sse, stream


def info(**kw: Any) -> ModelInfo:
    base: dict[str, Any] = {
        "provider": "local-vllm",
        "id": "test-model",
        "api": "openai-completions",
        "context_window": 32_000,
        "max_tokens": 4_000,
        "cost": ModelCost(input=2.0, output=8.0, cache_read=0.5),
    }
    base.update(kw)
    return ModelInfo(**base)


def model(server: ReplayServer, **kw: Any) -> OpenAIChatModel:
    return track(OpenAIChatModel(info(**kw), api_key="sk-test", base_url=server.url + "/v1"))


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def usage_chunk(prompt: int, completion: int, cached: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "test-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


async def events_of(m: OpenAIChatModel, request: ModelRequest) -> list[Any]:
    return [e async for e in m.stream(request)]


async def test_text_thinking_and_usage_with_cache(server: ReplayServer) -> None:
    server.add(
        stream(
            openai_sse(
                [
                    chunk({"role": "assistant", "reasoning_content": "Let me think."}),
                    chunk({"content": "Hello"}),
                    chunk({"content": " world"}),
                    chunk({}, "stop"),
                    usage_chunk(1000, 20, 600),
                ]
            )
        )
    )
    events = await events_of(model(server), ask())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", " world"]
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Let me think."]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.error is None
    msg = done.message
    assert msg["stopReason"] == "stop"
    assert msg["content"] == [
        {"type": "thinking", "thinking": "Let me think."},
        {"type": "text", "text": "Hello world"},
    ]
    usage = msg["usage"]
    assert_pi_usage_keys(usage)
    assert usage["reasoning"] == 0  # the provider reported none
    assert (usage["input"], usage["cacheRead"], usage["output"]) == (400, 600, 20)
    assert usage["totalTokens"] == 1020
    assert usage["cost"]["input"] == pytest.approx(400 * 2.0 / 1e6)
    assert usage["cost"]["cacheRead"] == pytest.approx(600 * 0.5 / 1e6)
    assert usage["cost"]["total"] == pytest.approx((800 + 160 + 300) / 1e6)
    body = server.requests[0].json()
    assert server.requests[0].path == "/v1/chat/completions"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_tool_calls_stream_in_pieces(server: ReplayServer) -> None:
    server.add(
        stream(
            openai_sse(
                [
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "call_a",
                                    "type": "function",
                                    "function": {"name": "read", "arguments": '{"pa'},
                                }
                            ]
                        }
                    ),
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th":"a.py"}'}}]}),
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 1,
                                    "id": "call_b",
                                    "type": "function",
                                    "function": {"name": "bash", "arguments": "{bad"},
                                }
                            ]
                        }
                    ),
                    chunk({}, "tool_calls"),
                ]
            )
        )
    )
    request = ModelRequest(
        messages=[user_message("read a.py", timestamp=1)],
        tools=[{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}],
    )
    events = await events_of(model(server), request)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name) for s in starts] == [("call_a", "read"), ("call_b", "bash")]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.message["stopReason"] == "toolUse"
    first, second = done.message["content"]
    assert first == {
        "type": "toolCall",
        "id": "call_a",
        "name": "read",
        "arguments": {"path": "a.py"},
    }
    assert second["type"] == "toolCall"
    assert second["arguments"] == {}
    assert "invalid JSON" in second.get("argumentsError", "")
    body = server.requests[0].json()
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object"},
            },
        }
    ]


async def test_transcript_with_tool_round_trip_is_serialized(server: ReplayServer) -> None:
    server.add(stream(openai_sse([chunk({"content": "ok"}, "stop")])))
    call_msg: Message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading."},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x", "n": 1.5}},
        ],
        "api": "openai-completions",
        "provider": "p",
        "model": "m",
        "usage": empty_usage(),
        "stopReason": "toolUse",
        "timestamp": 2,
    }
    messages: list[Message] = [
        user_message("go", timestamp=1),
        call_msg,
        tool_result_message("c1", "read", [{"type": "text", "text": "content"}], timestamp=3),
    ]
    await complete(model(server), ModelRequest(messages=messages, system_prompt="Be brief."))
    body = server.requests[0].json()
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"x","n":1.5}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "content"},
    ]


async def test_overflow_error_is_classified(server: ReplayServer) -> None:
    server.add(
        json_reply(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, "
                    "your messages resulted in 9000 tokens.",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        )
    )
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "context_overflow"
    assert done.error.status == 400
    assert done.message["stopReason"] == "error"
    assert "maximum context length" in done.message.get("errorMessage", "")
    assert is_context_overflow(done.message)  # the location suffix keeps it recognizable


async def test_429_then_success(server: ReplayServer) -> None:
    server.add(
        json_reply(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "7"}),
        stream(openai_sse([chunk({"content": "fine"}, "stop")])),
    )
    m = model(server)
    first = await complete(m, ask())
    assert first.error is not None
    assert first.error.kind == "transient"
    assert first.error.retry_after == 7.0
    second = await complete(m, ask())
    assert second.error is None
    assert second.message["content"] == [{"type": "text", "text": "fine"}]
    assert len(server.requests) == 2


async def test_sdk_retries_honor_retry_after_when_enabled(server: ReplayServer) -> None:
    server.add(
        json_reply(503, {"error": {"message": "overloaded"}}, {"retry-after-ms": "1"}),
        stream(openai_sse([chunk({"content": "back"}, "stop")])),
    )
    m = track(OpenAIChatModel(info(), api_key="k", base_url=server.url + "/v1", max_retries=1))
    done = await complete(m, ask())
    assert done.error is None
    assert len(server.requests) == 2


async def test_stream_cut_midway_is_transient_and_keeps_partial_text(
    server: ReplayServer,
) -> None:
    server.add(stream(openai_sse([chunk({"content": "partial"})], done=False), cut=True))
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "transient"
    assert done.message["stopReason"] == "error"
    assert done.message["content"] == [{"type": "text", "text": "partial"}]


async def test_stream_ending_without_finish_reason_is_transient(server: ReplayServer) -> None:
    server.add(stream(openai_sse([chunk({"content": "half"})])))
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "transient"


async def test_auth_failure(server: ReplayServer) -> None:
    server.add(json_reply(401, {"error": {"message": "Incorrect API key provided"}}))
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "authentication"
    assert done.error.status == 401


async def test_rejected_key_names_where_it_came_from(server: ReplayServer) -> None:
    server.add(json_reply(401, {"error": {"message": "Incorrect API key provided"}}))
    m = track(
        OpenAIChatModel(
            info(), api_key="sk-bad", base_url=server.url + "/v1", key_source="OPENAI_API_KEY"
        )
    )
    done = await complete(m, ask())
    assert done.error is not None
    assert done.error.kind == "authentication"
    assert str(done.error) == (
        f"401 Incorrect API key provided (local-vllm/test-model at {server.url}/v1; "
        "check OPENAI_API_KEY)"
    )
    assert done.message.get("errorMessage") == str(done.error)


async def test_connection_refused_is_transient() -> None:
    with ReplayServer() as srv:
        url = srv.url
    m = track(OpenAIChatModel(info(), api_key="sk-secret-1", base_url=url + "/v1"))
    done = await complete(m, ask())
    assert done.error is not None
    assert done.error.kind == "transient"
    shown = done.message.get("errorMessage", "")
    assert shown.startswith("connection error: ")
    assert shown.endswith(f"(local-vllm/test-model at {url}/v1)")
    assert str(done.error) == shown
    assert "sk-secret-1" not in shown


async def test_openai_provider_sends_cache_key_and_completion_limit(server: ReplayServer) -> None:
    server.add(stream(openai_sse([chunk({"content": "x"}, "stop")])))
    m = model(server, provider="openai", reasoning=True)
    options = RequestOptions(max_tokens=100, thinking_level="low", session_id="sess-1")
    await complete(m, ModelRequest(messages=[user_message("q", timestamp=1)], options=options))
    body = server.requests[0].json()
    assert body["prompt_cache_key"] == "sess-1"
    assert body["max_completion_tokens"] == 100
    assert body["reasoning_effort"] == "low"
    assert "max_tokens" not in body


async def test_cache_key_by_compat_mode(server: ReplayServer) -> None:
    server.add(
        stream(openai_sse([chunk({"content": "x"}, "stop")])),
        stream(openai_sse([chunk({"content": "x"}, "stop")])),
    )
    options = RequestOptions(session_id="s" * 80)
    request = ModelRequest(messages=[user_message("q", timestamp=1)], options=options)
    await complete(model(server, compat={"promptCacheKeyMode": "enabled"}), request)
    await complete(model(server), request)  # a local server: no key by default
    assert server.requests[0].json()["prompt_cache_key"] == "s" * 64
    assert "prompt_cache_key" not in server.requests[1].json()


def test_guard_blocks_outside_connections() -> None:
    import socket

    sock = socket.socket()
    try:
        with pytest.raises(AssertionError, match=r"outside 127\.0\.0\.1"):
            sock.connect(("192.0.2.1", 80))
    finally:
        sock.close()


async def test_error_inside_the_stream_is_classified(server: ReplayServer) -> None:
    server.add(
        stream(
            openai_sse(
                [chunk({"content": "a"}), {"error": {"message": "context length exceeded"}}],
                done=False,
            )
        )
    )
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "context_overflow"
    assert done.message["content"] == [{"type": "text", "text": "a"}]


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", None),
        ("none", "none"),
        ("required", "required"),
        ("read", {"type": "function", "function": {"name": "read"}}),
    ],
)
async def test_tool_choice_mapping(server: ReplayServer, choice: str, sent: Any) -> None:
    server.add(stream(openai_sse([chunk({"content": "x"}, "stop")])))
    request = ModelRequest(
        messages=[user_message("q", timestamp=1)],
        tools=[{"name": "read", "description": "r", "parameters": {"type": "object"}}],
        options=RequestOptions(tool_choice=choice),
    )
    await complete(model(server), request)
    assert server.requests[0].json().get("tool_choice") == sent


async def test_a_client_passed_in_is_used(server: ReplayServer) -> None:
    """As the Responses adapter does, the Chat Completions adapter takes a ready client (a
    shared pool, custom headers) instead of building its own."""
    server.add(stream(openai_sse([chunk({"content": "ok"}), chunk({}, "stop")])))
    client = ChatCompletionsClient(
        api_key="sk-shared",
        base_url=server.url + "/v1",
        default_headers={"x-team": "blue"},
        timeout=30.0,
    )
    m = OpenAIChatModel(info(), client=client, api_key="ignored", base_url="http://unused")
    assert m.base_url == server.url + "/v1"
    done = await complete(m, ask())
    assert done.error is None
    headers = server.requests[0].headers
    assert (headers["authorization"], headers["x-team"]) == ("Bearer sk-shared", "blue")
    await m.aclose()


def test_the_chat_completions_adapter_does_not_load_the_openai_sdk() -> None:
    code = (
        "import sys\n"
        "from pi_context.providers.openai import OpenAIChatModel\n"
        "print('openai' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert (done.stdout, done.stderr) == ("False\n", "")
