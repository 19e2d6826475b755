"""AgentSession over the openai-responses adapter: reasoning carried through a tool turn.

The agent runs a real tool call on the Responses API (replay server): the next request replays
the encrypted reasoning item and the function call exactly as the API returned them, the tool
output goes back under the call's ``call_id``, the thinking level reaches ``reasoning.effort``,
and the next run's request extends the previous one byte for byte up to the end of ``input``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from pi_context.model import ModelInfo
from pi_context.providers.openai_responses import OpenAIResponsesModel
from tests.providers.replay_server import ReplayServer, Reply, responses_sse, stream

from .conftest import MakeSession

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Read the notes first."}],
    "encrypted_content": "gAAAA-opaque",
}


def response(status: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-5",
        "output": [],
        "status": status,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **extra,
    }


def completed() -> dict[str, Any]:
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 3},
        "total_tokens": 105,
    }
    return {"type": "response.completed", "response": response("completed", usage=usage)}


def reply(*items: dict[str, Any]) -> Reply:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response("in_progress")}
    ]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return stream(responses_sse([*events, completed()]))


def message(text: str, item_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "read",
    "arguments": '{"path":"notes.txt"}',
    "status": "completed",
}


def input_end(body: bytes) -> int:
    text = body.decode("utf-8")
    start = text.index('"input":') + len('"input":')
    _, end = json.JSONDecoder().raw_decode(text, start)
    assert text.isascii()
    return end


async def test_reasoning_items_survive_a_tool_turn_and_the_next_run(
    make_session: MakeSession, project_dir: Path, server: ReplayServer
) -> None:
    (project_dir / "notes.txt").write_text("buy milk\n")
    info = ModelInfo(
        provider="openai",
        id="gpt-5",
        api="openai-responses",
        context_window=400_000,
        max_tokens=10_000,
        reasoning=True,
        system_messages_mid_conversation=True,
        thinking_level_map={"off": None},
    )
    model = OpenAIResponsesModel(info, api_key="k", base_url=server.url + "/v1")
    try:
        sess = await make_session(model)
        sess.session.append_thinking_level_change("high")
        server.add(
            reply(REASONING, CALL),
            reply(message("It says to buy milk.", "msg_1")),
            reply(message("Nothing else.", "msg_2")),
        )
        await sess.run("What is in notes.txt?")
        await sess.run("Anything else?")
        stored = [
            cast(dict[str, Any], m) for m in sess.session.messages() if m.get("role") == "assistant"
        ]
    finally:
        await model.aclose()

    first, second, third = (r.json() for r in server.requests)
    assert first["reasoning"] == {"effort": "high", "summary": "auto"}
    assert first["include"] == ["reasoning.encrypted_content"]
    assert first["prompt_cache_key"] == sess.session.id
    # The tool turn: reasoning item verbatim, the call with its item id, the output by call_id.
    tail = second["input"][-3:]
    assert tail[0] == REASONING
    assert tail[1] == {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path":"notes.txt"}',
    }
    assert tail[2]["type"] == "function_call_output"
    assert tail[2]["call_id"] == "call_1"
    assert "buy milk" in tail[2]["output"]
    # The answer is replayed with its item id, and each request extends the one before.
    assert {"type": "message", "id": "msg_1"}.items() <= third["input"][-2].items()
    bodies = server.bodies()
    for n in (1, 2):
        end = input_end(bodies[n - 1]) - 1
        assert bodies[n][:end] == bodies[n - 1][:end], f"request {n} does not extend {n - 1}"
    # The session keeps what the next request needs: the stored reasoning item and ids.
    thinking = stored[0]["content"][0]
    assert thinking["type"] == "thinking"
    assert json.loads(thinking.get("thinkingSignature", "")) == REASONING
    assert stored[0]["content"][1]["type"] == "toolCall"
    assert stored[0]["content"][1]["id"] == "call_1|fc_1"
