"""Delivery of projected messages: replay against pi's goldens, normalization, prefix stability."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.messages import (
    Message,
    StopReason,
    SystemMessage,
    assistant_message,
    text_block,
    tool_call,
    tool_result_message,
    user_message,
)
from pi_context.prompt.replay import (
    get_current_system_message,
    get_current_tools,
    get_system_message_text,
    render_system_message_update,
)
from pi_context.providers.anthropic import anthropic_messages, anthropic_system
from pi_context.providers.delivery import (
    SystemUpdate,
    normalize_transcript,
    plan_delivery,
    sanitize_tool_id,
)
from pi_context.providers.openai import openai_messages

GOLDEN = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "conformance"
    / "goldens"
    / "system_prompt"
    / "replay.json"
)
CASES: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_replay_matches_pi(name: str) -> None:
    case = CASES[name]
    messages = case["messages"]
    current = get_current_system_message(messages)
    assert current == case["current"]
    text = get_system_message_text(current) if current is not None else None
    assert text == case["currentText"]
    assert list(get_current_tools(messages)) == case["currentTools"]
    updates = [render_system_message_update(m) for m in messages if m["role"] == "system"]
    assert updates == case["updates"]


def _assistant(*blocks: Any, stop: StopReason = "stop") -> Message:
    return assistant_message(
        list(blocks), api="a", provider="p", model="m", stop_reason=stop, timestamp=1
    )


def test_normalize_drops_failed_attempts_and_orphans() -> None:
    messages: list[Message] = [
        user_message("u", timestamp=1),
        _assistant(tool_call("bad", "read", {}), stop="error"),
        tool_result_message("bad", "read", [text_block("x")], timestamp=2),
        tool_result_message("nobody", "read", [text_block("y")], timestamp=3),
        _assistant(tool_call("a", "read", {}), tool_call("b", "read", {}), stop="toolUse"),
        tool_result_message("a", "read", [text_block("ok")], timestamp=4),
        user_message("next", timestamp=5),
    ]
    out = normalize_transcript(messages)
    roles = [(m["role"], m.get("toolCallId")) for m in out]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("toolResult", "a"),
        ("toolResult", "b"),
        ("user", None),
    ]
    synthetic = out[3]
    assert synthetic["role"] == "toolResult"
    assert synthetic["isError"] is True


def test_plan_modes() -> None:
    first: SystemMessage = {
        "role": "system",
        "content": "",
        "sections": {"preamble": "P", "cwd": "C"},
        "timestamp": 1,
    }
    patch: SystemMessage = {
        "role": "system",
        "content": "",
        "sections": {"cwd": "D"},
        "timestamp": 3,
    }
    tools_only: SystemMessage = {
        "role": "system",
        "content": "",
        "toolsAdded": [{"name": "t", "description": "d", "parameters": {}}],
        "timestamp": 4,
    }
    messages: list[Message] = [first, user_message("u", timestamp=2), patch, tools_only]
    in_place = plan_delivery(messages, mode="in_place")
    assert in_place.system == "P\n\nC"
    assert in_place.lead_parts == [("preamble", "P"), ("cwd", "C")]
    assert [type(i).__name__ for i in in_place.items] == ["dict", "SystemUpdate"]
    update = in_place.items[1]
    assert isinstance(update, SystemUpdate)
    assert update.text == 'Updated system prompt section "cwd":\n\nD'
    assert [t["name"] for t in in_place.tools] == ["t"]
    collapsed = plan_delivery(messages, mode="collapse", system_prompt="S")
    assert collapsed.system == "S\n\nP\n\nD"
    assert len(collapsed.items) == 1
    explicit = plan_delivery(
        messages, mode="in_place", tools=[{"name": "x", "description": "", "parameters": {}}]
    )
    assert [t["name"] for t in explicit.tools] == ["x"]


def test_sanitize_tool_id() -> None:
    assert sanitize_tool_id("toolu_01ABC") == "toolu_01ABC"
    assert sanitize_tool_id("call|1:x") == "call_1_x"
    long = sanitize_tool_id("a" * 100)
    assert len(long) == 64
    assert long != sanitize_tool_id("a" * 99)


# --- property: a transcript that only grows yields requests that extend each other ----------

STEP = st.sampled_from(["user", "tool_turn", "text_turn", "patch", "remove", "tools"])


def _grow(steps: list[str]) -> list[list[Message]]:
    """The message list at each request point of a conversation built from ``steps``."""
    msgs: list[Message] = [
        {
            "role": "system",
            "content": "",
            "sections": {"preamble": "P", "rules": "<rules>\nR\n</rules>"},
            "toolsAdded": [{"name": "read", "description": "r", "parameters": {"type": "object"}}],
            "timestamp": 0,
        },
        user_message("start", timestamp=1),
    ]
    snapshots = [list(msgs)]
    for n, step in enumerate(steps):
        ts = n + 2
        if step == "user":
            msgs += [_assistant(text_block(f"a{n}")), user_message(f"u{n}", timestamp=ts)]
        elif step == "tool_turn":
            msgs += [
                _assistant(
                    text_block("t"),
                    tool_call(f"c{n}", "read", {"path": f"f{n}", "x": [1, 2.5]}),
                    stop="toolUse",
                ),
                tool_result_message(f"c{n}", "read", [text_block(f"r{n}é")], timestamp=ts),
            ]
        elif step == "text_turn":
            msgs += [_assistant(text_block(f"done {n}")), user_message(f"more {n}", timestamp=ts)]
        elif step == "patch":
            msgs.append(
                {
                    "role": "system",
                    "content": "",
                    "sections": {f"s{n}": f"<s{n}>\nX\n</s{n}>"},
                    "timestamp": ts,
                }
            )
        elif step == "remove":
            msgs.append(
                {"role": "system", "content": "", "sections": {"rules": None}, "timestamp": ts}
            )
        else:
            msgs.append(
                {
                    "role": "system",
                    "content": "",
                    "toolsAdded": [{"name": f"t{n}", "description": "", "parameters": {}}],
                    "timestamp": ts,
                }
            )
        snapshots.append(list(msgs))
    return snapshots


def _wire(messages: list[Any]) -> str:
    return _json.js_stringify(messages)


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=12))
def test_growing_transcripts_extend_on_every_wire_format(steps: list[str]) -> None:
    requests = _grow(steps)
    for mode in ("in_place", "user_turn"):
        previous: str | None = None
        for messages in requests:
            wire = _wire(openai_messages(plan_delivery(messages, mode=mode)))
            if previous is not None:
                assert wire.startswith(previous[:-1]), mode
            previous = wire
    previous_system: Any = None
    previous_body: str | None = None
    marker = ',"cache_control":{"type":"ephemeral"}'
    for messages in requests:
        delivery = plan_delivery(messages, mode="user_turn")
        system = anthropic_system(delivery)
        body = _wire(anthropic_messages(delivery))
        assert body.count(marker) == 1
        if previous_body is not None:
            cut = previous_body.rindex(marker)
            assert body[:cut] == previous_body[:cut]
            assert system == previous_system
        previous_system, previous_body = system, body


async def test_system_delivery_of_adapters() -> None:
    from pi_context.model import ModelInfo, system_delivery_of
    from pi_context.providers.anthropic import AnthropicModel
    from pi_context.providers.local import LocalModel
    from pi_context.providers.openai import OpenAIChatModel
    from pi_context.testing import ScriptedModel

    def info(mid: bool) -> ModelInfo:
        return ModelInfo(
            provider="p",
            id="m",
            api="a",
            context_window=10,
            max_tokens=5,
            system_messages_mid_conversation=mid,
        )

    adapters = [
        OpenAIChatModel(info(True), api_key="k", base_url="http://127.0.0.1:9/v1"),
        OpenAIChatModel(info(False), api_key="k", base_url="http://127.0.0.1:9/v1"),
        OpenAIChatModel(
            info(False), api_key="k", base_url="http://127.0.0.1:9/v1", system_delivery="collapse"
        ),
        AnthropicModel(info(False), api_key="k", base_url="http://127.0.0.1:9"),
    ]
    assert [system_delivery_of(a) for a in adapters] == [
        "in_place",
        "user_turn",
        "collapse",
        "user_turn",
    ]
    for adapter in adapters:
        await adapter.aclose()
    assert system_delivery_of(LocalModel()) == "in_place"
    assert system_delivery_of(ScriptedModel([])) == "collapse"
