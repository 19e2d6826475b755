"""The openai-responses adapter against the replay server over real HTTP (spec §6.5)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_context.messages import (
    AssistantMessage,
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
from pi_context.providers.openai_responses import OpenAIResponsesModel
from tests.providers.adapters import ask, assert_pi_usage_keys, track
from tests.providers.replay_server import ReplayServer, Reply, json_reply, responses_sse, stream

READ: ToolDeclaration = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}
PNG = "iVBORw0KGgo="


def info(**kw: Any) -> ModelInfo:
    base: dict[str, Any] = {
        "provider": "openai",
        "id": "gpt-5",
        "api": "openai-responses",
        "context_window": 400_000,
        "max_tokens": 128_000,
        "reasoning": True,
        "images": True,
        "cost": ModelCost(input=1.25, output=10.0, cache_read=0.125),
        "system_messages_mid_conversation": True,
        "thinking_level_map": {"off": None},
    }
    base.update(kw)
    return ModelInfo(**base)


def model(server: ReplayServer, **kw: Any) -> OpenAIResponsesModel:
    return track(OpenAIResponsesModel(info(**kw), api_key="sk-test", base_url=server.url + "/v1"))


def response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "output": [],
        "status": status,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **extra,
    }


def usage(inp: int, out: int, cached: int, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": inp + out,
    }


REASONING_ITEM = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Look at the file."}],
    "encrypted_content": "gAAAAB-secret",
}


def reasoning_events(index: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "output_index": index,
            "item_id": "rs_1",
            "summary_index": 0,
            "delta": "Look at the file.",
        },
        {"type": "response.output_item.done", "output_index": index, "item": REASONING_ITEM},
    ]


def message_events(text: str, index: int = 0, item_id: str = "msg_1") -> list[dict[str, Any]]:
    return [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        },
        {
            "type": "response.output_text.delta",
            "output_index": index,
            "item_id": item_id,
            "content_index": 0,
            "delta": text,
            "logprobs": [],
        },
        {
            "type": "response.output_item.done",
            "output_index": index,
            "item": {
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        },
    ]


def call_events(index: int, args: str) -> list[dict[str, Any]]:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "read",
        "arguments": "",
    }
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        {
            "type": "response.function_call_arguments.delta",
            "output_index": index,
            "item_id": "fc_1",
            "delta": args,
        },
        {
            "type": "response.output_item.done",
            "output_index": index,
            "item": {**item, "arguments": args, "status": "completed"},
        },
    ]


def completed(u: dict[str, Any], status: str = "completed", **extra: Any) -> dict[str, Any]:
    kind = "response.completed" if status == "completed" else f"response.{status}"
    return {"type": kind, "response": response(status, usage=u, **extra)}


def reply(*events: dict[str, Any]) -> Reply:
    return stream(responses_sse([{"type": "response.created", "response": response()}, *events]))


async def run(m: OpenAIResponsesModel, request: ModelRequest) -> list[StreamEvent]:
    return [e async for e in m.stream(request)]


async def test_text_reasoning_usage_and_exact_request(server: ReplayServer) -> None:
    server.add(
        reply(
            *reasoning_events(0), *message_events("Hello", 1), completed(usage(1000, 50, 800, 30))
        )
    )
    request = ModelRequest(
        messages=[user_message("hi", timestamp=1)],
        system_prompt="You are terse.",
        tools=[READ],
        options=RequestOptions(thinking_level="low", session_id="sess-1", max_tokens=4000),
    )
    events = await run(model(server), request)
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["Look at the file."]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello"]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.error is None
    msg = done.message
    thinking, text = msg["content"]
    assert thinking["type"] == "thinking"
    assert thinking["thinking"] == "Look at the file."
    # The stored reasoning item is the API's item, encrypted content included.
    assert json.loads(thinking.get("thinkingSignature", "")) == REASONING_ITEM
    assert text == {"type": "text", "text": "Hello", "textSignature": '{"v":1,"id":"msg_1"}'}
    assert (msg["stopReason"], msg.get("responseId"), msg["api"]) == (
        "stop",
        "resp_1",
        "openai-responses",
    )
    got = msg["usage"]
    assert_pi_usage_keys(got)
    assert (got["input"], got["output"], got["cacheRead"], got["cacheWrite"]) == (200, 50, 800, 0)
    assert (got.get("reasoning"), got["totalTokens"]) == (30, 1050)
    assert got["cost"]["cacheRead"] == pytest.approx(800 * 0.125 / 1e6)
    sent = server.requests[0]
    assert sent.path == "/v1/responses"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert (sent.headers["session-id"], sent.headers["x-client-request-id"]) == ("sess-1", "sess-1")
    assert sent.json() == {
        "model": "gpt-5",
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "input": [
            {"role": "developer", "content": "You are terse."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ],
        "max_output_tokens": 4000,
        "prompt_cache_key": "sess-1",
        "reasoning": {"effort": "low", "summary": "auto"},
        "store": False,
        "tools": [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": READ["parameters"],
            }
        ],
    }


async def test_reasoning_and_tool_call_are_carried_into_the_next_request(
    server: ReplayServer,
) -> None:
    server.add(
        reply(*reasoning_events(0), *call_events(1, '{"path":"a.py"}'), completed(usage(10, 5, 0))),
        reply(*message_events("Done.", 0, "msg_2"), completed(usage(20, 2, 10))),
    )
    m = model(server)
    first = ModelRequest(messages=[user_message("read a.py", timestamp=1)], tools=[READ])
    events = await run(m, first)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name) for s in starts] == [("call_1|fc_1", "read")]
    assert [e.arguments_json for e in events if isinstance(e, ToolCallDelta)] == ['{"path":"a.py"}']
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert done.message["stopReason"] == "toolUse"
    call = done.message["content"][1]
    assert call == {
        "type": "toolCall",
        "id": "call_1|fc_1",
        "name": "read",
        "arguments": {"path": "a.py"},
    }
    result = tool_result_message(
        "call_1|fc_1", "read", [{"type": "text", "text": "print(1)"}], timestamp=3
    )
    second = ModelRequest(
        messages=[*first.messages, done.message, result, user_message("thanks", timestamp=4)],
        tools=[READ],
    )
    finished = await complete(m, second)
    assert finished.error is None
    assert server.requests[1].json()["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "read a.py"}]},
        REASONING_ITEM,
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path":"a.py"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "print(1)"},
        {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
    ]


def foreign_assistant() -> AssistantMessage:
    """History from another provider: its thinking and ids cannot be replayed as they are."""
    return {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "anthropic-sig"},
            {"type": "text", "text": "Looking.", "textSignature": "msg_x"},
            {"type": "toolCall", "id": "toolu_01A.b", "name": "read", "arguments": {"path": "p"}},
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-x",
        "usage": empty_usage(),
        "stopReason": "toolUse",
        "timestamp": 2,
    }


async def test_history_of_other_models_images_and_tool_output_forms(server: ReplayServer) -> None:
    server.add(reply(*message_events("ok"), completed(usage(1, 1, 0))))
    messages: list[Message] = [
        user_message(
            "see", images=[{"type": "image", "data": PNG, "mimeType": "image/png"}], timestamp=1
        ),
        foreign_assistant(),
        tool_result_message(
            "toolu_01A.b",
            "read",
            [{"type": "image", "data": PNG, "mimeType": "image/png"}],
            timestamp=3,
        ),
    ]
    done = await complete(model(server), ModelRequest(messages=messages))
    assert done.error is None
    image = {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"}
    assert server.requests[0].json()["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "see"}, image]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Looking.", "annotations": []}],
            "status": "completed",
            "id": "msg_pi_1",
        },
        {
            "type": "function_call",
            "call_id": "toolu_01A_b",
            "name": "read",
            "arguments": '{"path":"p"}',
        },
        {"type": "function_call_output", "call_id": "toolu_01A_b", "output": [image]},
    ]


async def test_non_vision_model_gets_text_for_tool_images(server: ReplayServer) -> None:
    server.add(reply(*message_events("ok"), completed(usage(1, 1, 0))))
    messages: list[Message] = [
        user_message("go", timestamp=1),
        foreign_assistant(),
        tool_result_message(
            "toolu_01A.b",
            "read",
            [{"type": "image", "data": PNG, "mimeType": "image/png"}],
            timestamp=3,
        ),
    ]
    await complete(model(server, images=False, reasoning=False), ModelRequest(messages=messages))
    body = server.requests[0].json()
    # pi's transformMessages replaces the image before the adapter sees it (spec §6.3)
    assert body["input"][-1] == {
        "type": "function_call_output",
        "call_id": "toolu_01A_b",
        "output": "(tool image omitted: model does not support images)",
    }
    assert "reasoning" not in body
    assert "include" not in body


async def test_encrypted_reasoning_is_backfilled_from_the_completed_response(
    server: ReplayServer,
) -> None:
    bare = {**REASONING_ITEM}
    del bare["encrypted_content"]
    events = reasoning_events(0)
    events[-1] = {"type": "response.output_item.done", "output_index": 0, "item": bare}
    server.add(
        reply(*events, *message_events("x", 1), completed(usage(1, 1, 0), output=[REASONING_ITEM]))
    )
    done = await complete(model(server), ask())
    thinking = done.message["content"][0]
    assert thinking["type"] == "thinking"
    assert json.loads(thinking.get("thinkingSignature", ""))["encrypted_content"] == "gAAAAB-secret"


@pytest.mark.parametrize(
    ("events", "stop", "message", "kind"),
    [
        (
            [
                completed(
                    usage(1, 1, 0), "incomplete", incomplete_details={"reason": "max_output_tokens"}
                )
            ],
            "length",
            None,
            None,
        ),
        (
            [
                completed(
                    usage(1, 1, 0), "incomplete", incomplete_details={"reason": "content_filter"}
                )
            ],
            "error",
            "Response incomplete: content_filter",
            "other",
        ),
        (
            [
                {
                    "type": "response.failed",
                    "response": response(
                        "failed",
                        error={"code": "server_error", "message": "Internal server error"},
                    ),
                }
            ],
            "error",
            "server_error: Internal server error",
            "transient",
        ),
        (
            [
                {
                    "type": "error",
                    "code": "rate_limit_exceeded",
                    "message": "Rate limit reached",
                    "param": None,
                }
            ],
            "error",
            "Error Code rate_limit_exceeded: Rate limit reached",
            "transient",
        ),
        (
            [],
            "error",
            "OpenAI Responses stream ended before a terminal response event",
            "transient",
        ),
    ],
)
async def test_stream_endings(
    server: ReplayServer,
    events: list[dict[str, Any]],
    stop: str,
    message: str | None,
    kind: str | None,
) -> None:
    server.add(reply(*message_events("partial"), *events))
    done = await complete(model(server), ask())
    assert done.message["stopReason"] == stop
    if message is None:
        assert done.error is None
        return
    assert done.error is not None
    assert str(done.error).startswith(message)
    assert str(done.error).endswith(f"(openai/gpt-5 at {server.url}/v1)")
    assert done.error.kind == kind


async def test_http_errors_are_classified(server: ReplayServer) -> None:
    server.add(
        json_reply(
            429,
            {"error": {"message": "Rate limit reached for gpt-5", "type": "requests"}},
            {"retry-after": "7"},
        ),
        json_reply(
            400,
            {
                "error": {
                    "message": "Your input exceeds the context window of this model.",
                    "type": "invalid_request_error",
                }
            },
        ),
        json_reply(401, {"error": {"message": "Incorrect API key provided"}}),
    )
    m = model(server)
    limited = await complete(m, ask())
    assert limited.error is not None
    assert (limited.error.kind, limited.error.status, limited.error.retry_after) == (
        "transient",
        429,
        7.0,
    )
    overflow = await complete(m, ask())
    assert overflow.error is not None
    assert overflow.error.kind == "context_overflow"
    rejected = await complete(m, ask())
    assert rejected.error is not None
    assert rejected.error.kind == "authentication"


async def test_summaries_send_no_cache_key(server: ReplayServer) -> None:
    server.add(reply(*message_events("s"), completed(usage(1, 1, 0))))
    options = RequestOptions(session_id="sess-1", cache="none", temperature=0.2)
    await complete(model(server), ModelRequest(messages=ask().messages, options=options))
    body = server.requests[0].json()
    assert "prompt_cache_key" not in body
    assert "session-id" not in server.requests[0].headers
    assert body["temperature"] == 0.2
