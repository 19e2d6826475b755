"""Prompt-cache discipline, proven on the wire.

A conversation grows over several requests: tool turns, a section patch between turns, a skill
section added at a run start, a ``/reload`` that changes nothing (so no system message), then a
compaction-shaped restart. The bodies the SDKs actually send to the replay server are compared:

* OpenAI-compatible: everything up to the end of the previous request's last message is a byte
  prefix of the next body, and everything after the ``messages`` array is identical.
* OpenAI Responses: the same, for the ``input`` array (``store: false``: the whole
  conversation, reasoning items included, is sent every time).
* Gemini: the same, for the ``contents`` array (implicit caching reads the longest prefix
  shared with a recent request); patches travel as user-side text, never in
  ``systemInstruction``.
* Anthropic: the next body equals the previous one byte for byte up to the previous request's
  message cache breakpoint (the ``cache_control`` marker on its last content block), and the
  ``system`` and ``tools`` parameters (cached before the messages) are identical.

Across the compaction the prefix is rebuilt once (the snapshot becomes the new leading prompt);
the requests after it extend the new prefix again.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pi_context.messages import (
    AssistantMessage,
    Message,
    StopReason,
    SystemMessage,
    ToolDeclaration,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.model import (
    Model,
    ModelInfo,
    ModelRequest,
    RequestOptions,
    SystemDelivery,
    complete,
)
from pi_context.prompt.replay import get_current_system_message
from pi_context.providers.anthropic import AnthropicModel
from pi_context.providers.google import GoogleModel
from pi_context.providers.openai import OpenAIChatModel
from pi_context.providers.openai_responses import OpenAIResponsesModel
from tests.providers.adapters import track
from tests.providers.replay_server import ReplayServer, json_reply

MARKER = b',"cache_control":{"type":"ephemeral"}'

READ: ToolDeclaration = {
    "name": "read",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}
BASH: ToolDeclaration = {
    "name": "bash",
    "description": "Run a command",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
}


def system(
    sections: dict[str, str | None], ts: int, tools: list[ToolDeclaration] | None = None
) -> SystemMessage:
    msg: dict[str, Any] = {"role": "system", "content": "", "sections": sections, "timestamp": ts}
    if tools:
        msg["toolsAdded"] = tools
    return msg  # type: ignore[return-value]


def assistant_of_blocks(*blocks: Any, stop: StopReason = "stop", ts: int) -> AssistantMessage:
    """An assistant message of the given content ``blocks``, at time ``ts``."""
    return assistant_message(
        list(blocks), api="x", provider="x", model="x", stop_reason=stop, timestamp=ts
    )


def conversation() -> tuple[list[list[Message]], int]:
    """The message list of each request, and the index of the first post-compaction request."""
    first = system(
        {
            "preamble": "You are a coding assistant.",
            "tools": "<tools>\n- read: Read a file\n- bash: Run a command\n</tools>",
            "rules": "<rules>\n- Be concise.\n</rules>",
            "cwd": "<cwd>\n/home/u/proj\n</cwd>",
        },
        1,
        [READ, BASH],
    )
    msgs: list[Message] = [first, user_message("Fix the bug in app.py", timestamp=2)]
    requests: list[list[Message]] = [list(msgs)]
    # turn 2: a tool round trip
    msgs += [
        assistant_of_blocks(
            text_block("Reading."),
            tool_call("c1", "read", {"path": "app.py"}),
            stop="toolUse",
            ts=3,
        ),
        tool_result_message("c1", "read", [text_block("def f():\n    return 1/0\n")], timestamp=4),
    ]
    requests.append(list(msgs))
    # turn 3: a section patch between turns (a rule changed mid-run), then the next request
    msgs += [
        assistant_of_blocks(
            tool_call("c2", "bash", {"command": "pytest -q"}), stop="toolUse", ts=5
        ),
        tool_result_message("c2", "bash", [text_block("1 failed")], timestamp=6),
        system({"rules": "<rules>\n- Be concise.\n- Run tests after edits.\n</rules>"}, 7),
    ]
    requests.append(list(msgs))
    # run 2: a skill was added (patch first in the run's messages), then the user prompt
    msgs += [
        assistant_of_blocks(text_block("Fixed the division."), ts=8),
        system({"skills": '<skills>\n<skill name="py">Python tips</skill>\n</skills>'}, 9),
        user_message("Now add a test", timestamp=10),
    ]
    requests.append(list(msgs))
    # run 3: /reload with nothing changed produces no system message at all
    msgs += [
        assistant_of_blocks(text_block("Added test_app.py."), ts=11),
        user_message("Thanks. Anything else?", timestamp=12),
    ]
    requests.append(list(msgs))
    # run 4: a section removed (context file deleted) and the tool loadout unchanged
    msgs += [
        assistant_of_blocks(text_block("No."), ts=13),
        system(
            {"cwd": None, "project_context": "<project_context>\nUse pytest.\n</project_context>"},
            14,
        ),
        user_message("Summarize what you did", timestamp=15),
    ]
    requests.append(list(msgs))
    # compaction: the kept context starts with the replayed snapshot and the summary
    snapshot = get_current_system_message(msgs)
    assert snapshot is not None
    compacted: list[Message] = [
        snapshot,
        user_message(
            "The conversation history before this point was compacted into the following "
            "summary:\n\n<summary>\nFixed app.py, added a test.\n</summary>",
            timestamp=16,
        ),
        user_message("Summarize what you did", timestamp=15),
    ]
    restart = len(requests)
    requests.append(list(compacted))
    compacted += [
        assistant_of_blocks(text_block("I fixed app.py."), ts=17),
        user_message("Great", timestamp=18),
    ]
    requests.append(list(compacted))
    return requests, restart


def reply_for(model: str) -> Any:
    # Every request fails fast with a 400: only the request bodies matter here.
    return json_reply(
        400,
        {"type": "error", "error": {"type": "invalid_request_error", "message": f"{model}: stop"}},
    )


async def capture(model: Model, server: ReplayServer, requests: list[list[Message]]) -> list[bytes]:
    for messages in requests:
        server.add(reply_for(model.info.id))
        done = await complete(
            model,
            ModelRequest(
                messages=messages, options=RequestOptions(session_id="s1", max_tokens=1000)
            ),
        )
        assert done.error is not None
    return server.bodies()


def messages_span(body: bytes, key: str = "messages") -> tuple[int, int]:
    """Byte offsets of the ``key`` array: start of its first item, and its closing ``]``."""
    text = body.decode("utf-8")
    start = text.index(f'"{key}":') + len(f'"{key}":')
    while text[start] == " ":
        start += 1
    _, end = json.JSONDecoder().raw_decode(text, start)
    # JSON text offsets are characters; the bodies here are ASCII, so they are byte offsets too.
    assert text.isascii()
    return start + 1, end - 1


def openai_model(server: ReplayServer, mode: SystemDelivery) -> OpenAIChatModel:
    info = ModelInfo(
        provider="vllm",
        id="m",
        api="openai-completions",
        context_window=100_000,
        max_tokens=1000,
        system_messages_mid_conversation=mode == "in_place",
    )
    return track(
        OpenAIChatModel(info, api_key="k", base_url=server.url + "/v1", system_delivery=mode)
    )


@pytest.mark.parametrize("mode", ["in_place", "user_turn"])
async def test_openai_bodies_extend_each_other(server: ReplayServer, mode: SystemDelivery) -> None:
    requests, restart = conversation()
    bodies = await capture(openai_model(server, mode), server, requests)
    for n in range(1, len(bodies)):
        if n == restart:
            continue
        prev, cur = bodies[n - 1], bodies[n]
        _, prev_end = messages_span(prev)
        _, cur_end = messages_span(cur)
        assert cur[:prev_end] == prev[:prev_end], f"request {n} does not extend request {n - 1}"
        assert cur[cur_end:] == prev[prev_end:], f"request {n} changed what follows the messages"
        assert len(cur) > len(prev)
    # The patches are visible in place, framed as updates.
    patch_role = "system" if mode == "in_place" else "user"
    sent = json.loads(bodies[2])["messages"]
    assert sent[-1] == {
        "role": patch_role,
        "content": 'Updated system prompt section "rules":\n\n<rules>\n- Be concise.\n- Run tests after edits.\n</rules>',
    }
    removal = json.loads(bodies[5])["messages"][-2]["content"]
    assert removal.startswith(
        'Removed system prompt section "cwd".\n\nUpdated system prompt section "project_context"'
    )


async def test_openai_after_compaction_prefix_is_rebuilt_once(server: ReplayServer) -> None:
    requests, restart = conversation()
    bodies = await capture(openai_model(server, "in_place"), server, requests)
    before, after = json.loads(bodies[restart - 1]), json.loads(bodies[restart])
    assert before["messages"][0] != after["messages"][0]
    snapshot_text = after["messages"][0]["content"]
    # The snapshot is the replayed prompt: rules updated in place, skills and context appended.
    assert "Run tests after edits." in snapshot_text
    assert "<cwd>" not in snapshot_text
    assert (
        snapshot_text.index("<rules>")
        < snapshot_text.index("<skills>")
        < snapshot_text.index("<project_context>")
    )


async def test_collapse_mode_rewrites_the_head_on_a_patch(server: ReplayServer) -> None:
    """pi's fallback for models without mid-conversation system messages: a miss per patch."""
    requests, _ = conversation()
    bodies = await capture(openai_model(server, "collapse"), server, requests[1:3])
    _prev_start, prev_end = messages_span(bodies[0])
    assert bodies[1][:prev_end] != bodies[0][:prev_end]
    sent = json.loads(bodies[1])["messages"]
    assert [m["role"] for m in sent].count("system") == 1
    assert "Run tests after edits." in sent[0]["content"]


async def test_anthropic_bodies_extend_each_other_up_to_the_breakpoint(
    server: ReplayServer,
) -> None:
    requests, restart = conversation()
    info = ModelInfo(
        provider="anthropic",
        id="claude-x",
        api="anthropic-messages",
        context_window=200_000,
        max_tokens=1000,
    )
    m = track(AnthropicModel(info, api_key="k", base_url=server.url))
    bodies = await capture(m, server, requests)
    for n, body in enumerate(bodies):
        # exactly two breakpoints: the system prompt and the last message block
        assert body.count(MARKER) == 2, n
        parsed = json.loads(body)
        assert "cache_control" in parsed["system"][-1]
        assert "cache_control" in parsed["messages"][-1]["content"][-1]
    for n in range(1, len(bodies)):
        prev, cur = bodies[n - 1], bodies[n]
        prev_json, cur_json = json.loads(prev), json.loads(cur)
        if n == restart:
            assert prev_json["system"] != cur_json["system"]
            continue
        _, prev_end = messages_span(prev)
        breakpoint = prev.rindex(MARKER, 0, prev_end)
        assert cur[:breakpoint] == prev[:breakpoint], f"request {n} breaks the cached prefix"
        assert cur_json["system"] == prev_json["system"]
        assert cur_json["tools"] == prev_json["tools"]
        _, cur_end = messages_span(cur)
        assert cur[cur_end:] == prev[prev_end:]
    # The rules patch rides in the user turn of the tool results, after them.
    third = json.loads(bodies[2])["messages"][-1]["content"]
    assert [b["type"] for b in third] == ["tool_result", "text"]
    assert third[-1]["text"].startswith('Updated system prompt section "rules":')
    # The system parameter is the leading prompt only; patches never rewrite it.
    assert "Run tests after edits." not in json.loads(bodies[4])["system"][0]["text"]


def assert_extends(bodies: list[bytes], key: str, restart: int) -> None:
    """Each body extends the previous one up to the end of ``key``; what follows is equal."""
    for n in range(1, len(bodies)):
        if n == restart:
            continue
        prev, cur = bodies[n - 1], bodies[n]
        _, prev_end = messages_span(prev, key)
        _, cur_end = messages_span(cur, key)
        assert cur[:prev_end] == prev[:prev_end], f"request {n} does not extend request {n - 1}"
        assert cur[cur_end:] == prev[prev_end:], f"request {n} changed what follows {key}"
        assert len(cur) > len(prev)


async def test_responses_bodies_extend_each_other(server: ReplayServer) -> None:
    requests, restart = conversation()
    info = ModelInfo(
        provider="openai",
        id="gpt-5",
        api="openai-responses",
        context_window=400_000,
        max_tokens=1000,
        reasoning=True,
        system_messages_mid_conversation=True,
    )
    m = track(OpenAIResponsesModel(info, api_key="k", base_url=server.url + "/v1"))
    bodies = await capture(m, server, requests)
    assert_extends(bodies, "input", restart)
    sent = json.loads(bodies[2])
    assert sent["prompt_cache_key"] == "s1"
    assert sent["input"][-1] == {
        "role": "developer",
        "content": 'Updated system prompt section "rules":\n\n<rules>\n- Be concise.\n- Run tests after edits.\n</rules>',
    }
    after = json.loads(bodies[restart])
    assert "Run tests after edits." in after["input"][0]["content"]


async def test_gemini_bodies_extend_each_other(server: ReplayServer) -> None:
    requests, restart = conversation()
    info = ModelInfo(
        provider="google",
        id="gemini-2.5-flash",
        api="google-generative-ai",
        context_window=1_000_000,
        max_tokens=1000,
        reasoning=True,
    )
    m = track(GoogleModel(info, api_key="k", base_url=server.url + "/v1beta"))
    bodies = await capture(m, server, requests)
    assert_extends(bodies, "contents", restart)
    # The rules patch joins the user turn of the tool results, after them.
    third = json.loads(bodies[2])["contents"][-1]["parts"]
    assert [next(iter(p)) for p in third] == ["functionResponse", "text"]
    assert third[-1]["text"].startswith('Updated system prompt section "rules":')
    system = [json.loads(b)["systemInstruction"] for b in bodies[:restart]]
    assert all(s == system[0] for s in system)
    assert (
        "Run tests after edits."
        in json.loads(bodies[restart])["systemInstruction"]["parts"][0]["text"]
    )
