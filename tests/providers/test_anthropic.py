"""The Anthropic adapter against the replay server over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context.messages import Message, SystemMessage, empty_usage, user_message
from pi_context.model import (
    ModelRequest,
    RequestOptions,
    StreamDone,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    complete,
)
from pi_context.model.classify import is_context_overflow
from pi_context.providers.anthropic import AnthropicModel
from tests.providers.adapters import ask, assert_pi_usage_keys, track
from tests.providers.anthropic_stream import (
    content_block,
    finish,
    info,
    message_start,
    reply_text,
    text_block_events,
)
from tests.providers.replay_server import ReplayServer, anthropic_sse, json_reply, stream


def model(server: ReplayServer, **kw: Any) -> AnthropicModel:
    return track(AnthropicModel(info(**kw), api_key="sk-ant-test", base_url=server.url))


async def test_thinking_text_usage_and_cost(server: ReplayServer) -> None:
    events = [
        message_start(input_tokens=50, read=1000, write=200),
        *content_block(
            0,
            {"type": "thinking", "thinking": "", "signature": ""},
            {"type": "thinking_delta", "thinking": "Hmm."},
            {"type": "signature_delta", "signature": "sig=="},
        ),
        *text_block_events(1, "Hel", "lo"),
        *finish(output=30),
    ]
    server.add(stream(anthropic_sse(events)))
    m = model(server)
    request = ModelRequest(
        messages=[user_message("hi", timestamp=1)],
        options=RequestOptions(thinking_level="low"),
    )
    got = [e async for e in m.stream(request)]
    assert [e.text for e in got if isinstance(e, ThinkingDelta)] == ["Hmm."]
    assert [e.text for e in got if isinstance(e, TextDelta)] == ["Hel", "lo"]
    done = got[-1]
    assert isinstance(done, StreamDone)
    assert done.error is None
    msg = done.message
    assert msg["content"] == [
        {"type": "thinking", "thinking": "Hmm.", "thinkingSignature": "sig=="},
        {"type": "text", "text": "Hello"},
    ]
    assert msg["stopReason"] == "stop"
    assert msg.get("responseId") == "msg_1"
    usage = msg["usage"]
    assert_pi_usage_keys(usage)
    assert (usage["input"], usage["output"], usage["cacheRead"], usage["cacheWrite"]) == (
        50,
        30,
        1000,
        200,
    )
    assert usage["totalTokens"] == 1280
    assert usage["cost"]["cacheWrite"] == pytest.approx(200 * 3.75 / 1e6)
    assert usage["cost"]["total"] == pytest.approx((150 + 450 + 300 + 750) / 1e6)
    body = server.requests[0].json()
    assert server.requests[0].path == "/v1/messages"
    headers = server.requests[0].headers
    assert "sk-ant-test" in headers.get("x-api-key", headers.get("authorization", ""))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048, "display": "summarized"}
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_tool_use_stream(server: ReplayServer) -> None:
    events = [
        message_start(),
        *text_block_events(0, "Let me look."),
        *content_block(
            1,
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            {"type": "input_json_delta", "partial_json": '{"path": '},
            {"type": "input_json_delta", "partial_json": '"a.py"}'},
        ),
        *finish("tool_use"),
    ]
    server.add(stream(anthropic_sse(events)))
    got = [e async for e in model(server).stream(ask())]
    assert [e.arguments_json for e in got if isinstance(e, ToolCallDelta)] == [
        '{"path": ',
        '"a.py"}',
    ]
    done = got[-1]
    assert isinstance(done, StreamDone)
    assert done.message["stopReason"] == "toolUse"
    assert done.message["content"][1] == {
        "type": "toolCall",
        "id": "toolu_1",
        "name": "read",
        "arguments": {"path": "a.py"},
    }


async def test_system_prompt_tools_and_tool_results_on_the_wire(server: ReplayServer) -> None:
    server.add(reply_text("done"))
    system: SystemMessage = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "You help.", "cwd": "<cwd>\n/p\n</cwd>"},
        "toolsAdded": [{"name": "read", "description": "Read", "parameters": {"type": "object"}}],
        "timestamp": 1,
    }
    messages: list[Message] = [
        system,
        user_message("go", timestamp=2),
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "call|odd", "name": "read", "arguments": {"p": 1}}
            ],
            "api": "x",
            "provider": "x",
            "model": "x",
            "usage": empty_usage(),
            "stopReason": "toolUse",
            "timestamp": 3,
        },
    ]
    await complete(model(server), ModelRequest(messages=messages))
    body = server.requests[0].json()
    assert body["system"] == [
        {
            "type": "text",
            "text": "You help.\n\n<cwd>\n/p\n</cwd>",
            "cache_control": {"type": "ephemeral"},
        }
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read", "input_schema": {"type": "object"}}
    ]
    # The unanswered call gets a synthetic error result; the odd id is made valid.
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "call_odd", "name": "read", "input": {"p": 1}}],
    }
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_odd",
                "content": [{"type": "text", "text": "No result provided"}],
                "is_error": True,
                "cache_control": {"type": "ephemeral"},
            }
        ],
    }


async def test_no_cache_option_sends_no_breakpoints(server: ReplayServer) -> None:
    server.add(reply_text("summary"))
    request = ModelRequest(
        messages=[user_message("summarize", timestamp=1)],
        system_prompt="You summarize.",
        options=RequestOptions(cache="none", max_tokens=500),
    )
    await complete(model(server), request)
    raw = server.requests[0].body
    assert b"cache_control" not in raw
    assert server.requests[0].json()["max_tokens"] == 500


async def test_prompt_too_long_is_overflow(server: ReplayServer) -> None:
    server.add(
        json_reply(
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
        )
    )
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "context_overflow"
    assert "prompt is too long" in done.message.get("errorMessage", "")
    assert is_context_overflow(done.message)


async def test_overloaded_error_event_mid_stream_is_transient(server: ReplayServer) -> None:
    events = [
        message_start(),
        *text_block_events(0, "par"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    server.add(stream(anthropic_sse(events)))
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "transient"
    assert done.message["content"] == [{"type": "text", "text": "par"}]


async def test_429_then_success(server: ReplayServer) -> None:
    server.add(
        json_reply(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}},
            {"retry-after": "3"},
        ),
        reply_text("ok"),
    )
    m = model(server)
    first = await complete(m, ask())
    assert first.error is not None
    assert (first.error.kind, first.error.retry_after) == ("transient", 3.0)
    second = await complete(m, ask())
    assert second.error is None
    assert second.message["content"] == [{"type": "text", "text": "ok"}]


async def test_stream_cut_midway(server: ReplayServer) -> None:
    server.add(
        stream(anthropic_sse([message_start(), *text_block_events(0, "so far")][:3]), cut=True)
    )
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "transient"
    assert done.message["content"] == [{"type": "text", "text": "so far"}]


async def test_authentication_failure(server: ReplayServer) -> None:
    server.add(
        json_reply(
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
        )
    )
    done = await complete(model(server), ask())
    assert done.error is not None
    assert done.error.kind == "authentication"


async def test_connection_refused_names_model_and_url_but_not_key() -> None:
    with ReplayServer() as srv:
        url = srv.url
    m = track(AnthropicModel(info(), api_key="sk-ant-secret", base_url=url))
    done = await complete(m, ask())
    assert done.error is not None
    assert done.error.kind == "transient"
    shown = done.message.get("errorMessage", "")
    assert shown.startswith("connection error: ")
    assert shown.endswith(f"(anthropic/claude-test at {url})")
    assert "sk-ant-secret" not in shown


async def test_a_certificate_store_that_cannot_load_fails_once_and_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A configuration problem, not a network one: the response fails naming the store, and
    the retry policy leaves it alone."""
    from pi_context.model.retry import is_retryable

    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    m = track(AnthropicModel(info(), api_key="sk-ant-secret", base_url="https://127.0.0.1:9"))
    done = await complete(m, ask())
    assert done.error is not None
    assert done.error.kind == "other"
    shown = done.message.get("errorMessage", "")
    assert "cannot load the TLS certificate store (SSL_CERT_FILE=" in shown
    assert not is_retryable(done.message, done.error)


async def test_a_closed_model_says_so(server: ReplayServer) -> None:
    server.add(reply_text("ok"))
    m = model(server)
    first = await complete(m, ask())
    assert first.error is None
    await m.aclose()
    done = await complete(m, ask())
    assert done.error is not None
    assert done.error.kind == "other"
    assert "this model was closed (aclose())" in done.message.get("errorMessage", "")


async def test_bearer_token(server: ReplayServer) -> None:
    server.add(reply_text("ok"))
    m = track(AnthropicModel(info(), auth_token="tok-1", base_url=server.url))
    await complete(m, ask())
    assert server.requests[0].headers["authorization"] == "Bearer tok-1"


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", None),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ("read", {"type": "tool", "name": "read"}),
    ],
)
async def test_tool_choice_mapping(server: ReplayServer, choice: str, sent: Any) -> None:
    server.add(reply_text("x"))
    request = ModelRequest(
        messages=[user_message("q", timestamp=1)],
        tools=[{"name": "read", "description": "r", "parameters": {"type": "object"}}],
        options=RequestOptions(tool_choice=choice),
    )
    await complete(model(server), request)
    assert server.requests[0].json().get("tool_choice") == sent
