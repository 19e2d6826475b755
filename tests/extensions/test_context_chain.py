"""The extension part of the transform-context chain (context / context_with_system)."""

from __future__ import annotations

import copy
from typing import Any, cast

from pi_context.extensions import ExtensionAPI, ExtensionRunner, load_extensions
from pi_context.extensions.events import ContextEvent, ContextWithSystemEvent
from pi_context.messages import (
    AgentMessage,
    ToolDeclaration,
    UserMessage,
    assistant_message,
    text_block,
    user_message,
)
from pi_context.prompt.replay import get_current_system_message


def runner_of(*registers: Any) -> ExtensionRunner:
    return load_extensions(
        cwd=".",
        entry_points=False,
        include_discovered=False,
        registrations=[(f"ext{i}", r) for i, r in enumerate(registers)],
    )


def transcript() -> list[AgentMessage]:
    decl: ToolDeclaration = {"name": "read", "description": "d", "parameters": {"type": "object"}}
    return [
        {
            "role": "system",
            "content": "",
            "sections": {"preamble": "P", "cwd": "<cwd>\n/x\n</cwd>"},
            "timestamp": 1,
            "toolsAdded": [decl],
        },
        user_message("one", timestamp=2),
        assistant_message([text_block("r1")], api="a", provider="p", model="m", timestamp=3),
        {"role": "system", "content": "", "sections": {"cwd": "<cwd>\n/y\n</cwd>"}, "timestamp": 4},
        user_message("two", timestamp=5),
    ]


async def test_no_handlers_is_identity_and_input_is_untouched() -> None:
    msgs = transcript()
    before = copy.deepcopy(msgs)
    out = await runner_of().emit_context(msgs)
    assert out == msgs
    assert msgs == before


async def test_handlers_never_see_system_messages() -> None:
    seen: list[list[str]] = []

    def watch(pi: ExtensionAPI) -> None:
        pi.on("context", lambda e, ctx: seen.append([m["role"] for m in e.messages]))

    out = await runner_of(watch).emit_context(transcript())
    assert seen == [["user", "assistant", "user"]]
    assert out == transcript()  # unchanged: system messages stay where they were


async def test_pruning_restores_one_replayed_system_head() -> None:
    def window(pi: ExtensionAPI) -> None:
        pi.on("context", lambda e, ctx: {"messages": e.messages[-1:]})

    msgs = transcript()
    out = await runner_of(window).emit_context(msgs)
    assert out[1:] == [user_message("two", timestamp=5)]
    head = out[0]
    assert head["role"] == "system"
    assert head == get_current_system_message(msgs)
    assert head["sections"] == {"preamble": "P", "cwd": "<cwd>\n/y\n</cwd>"}
    assert head["timestamp"] == 1


async def test_in_place_list_edit_counts_as_a_change() -> None:
    def drop_first(pi: ExtensionAPI) -> None:
        def handler(event: ContextEvent, ctx: Any) -> None:
            del event.messages[0]

        pi.on("context", handler)

    out = await runner_of(drop_first).emit_context(transcript())
    assert [m["role"] for m in out] == ["system", "assistant", "user"]


async def test_object_mutation_changes_messages_without_touching_the_input() -> None:
    def redact(pi: ExtensionAPI) -> None:
        def handler(event: ContextEvent, ctx: Any) -> None:
            for m in event.messages:
                if m["role"] == "user":
                    m["content"] = [text_block("[redacted]")]

        pi.on("context", handler)

    msgs = transcript()
    out = await runner_of(redact).emit_context(msgs)
    assert [m["role"] for m in out] == [m["role"] for m in msgs]  # positions kept
    assert cast(UserMessage, out[1])["content"] == [text_block("[redacted]")]
    assert cast(UserMessage, msgs[1])["content"] == [text_block("one")]


async def test_returning_the_same_list_keeps_system_positions() -> None:
    def same(pi: ExtensionAPI) -> None:
        pi.on("context", lambda e, ctx: {"messages": list(e.messages)})

    out = await runner_of(same).emit_context(transcript())
    assert out == transcript()


async def test_phase_two_owns_the_full_transcript_and_is_checked() -> None:
    def strip(pi: ExtensionAPI) -> None:
        def handler(event: ContextWithSystemEvent, ctx: Any) -> dict[str, Any]:
            assert event.messages[0]["role"] == "system"
            return {"messages": [m for m in event.messages if m["role"] != "system"]}

        pi.on("context_with_system", handler)

    runner = runner_of(strip)
    out = await runner.emit_context(transcript())
    assert [m["role"] for m in out] == ["user", "assistant", "user"]  # honored
    assert len(runner.failures) == 1  # but reported
    assert runner.failures[0].event == "context_with_system"


async def test_a_raising_context_handler_is_skipped() -> None:
    def boom(pi: ExtensionAPI) -> None:
        def handler(event: Any, ctx: Any) -> None:
            raise RuntimeError("x")

        pi.on("context", handler)

    def window(pi: ExtensionAPI) -> None:
        pi.on("context", lambda e, ctx: {"messages": e.messages[-1:]})

    runner = runner_of(boom, window)
    out = await runner.emit_context(transcript())
    assert len(out) == 2
    assert len(runner.failures) == 1


def test_replay_rules() -> None:
    msgs: list[Any] = [
        {"role": "system", "content": "extra", "sections": {"a": "1", "b": "2"}, "timestamp": 7},
        {
            "role": "system",
            "content": [text_block("more")],
            "sections": {"a": None},
            "timestamp": 8,
            "toolsAdded": [{"name": "t", "description": "v1", "parameters": {}}],
        },
        {
            "role": "system",
            "content": "",
            "sections": {"a": "3"},
            "timestamp": 9,
            "toolsRemoved": [{"name": "t"}],
            "toolsAdded": [{"name": "t", "description": "v2", "parameters": {}}],
        },
    ]
    head = get_current_system_message(msgs)
    assert head == {
        "role": "system",
        "content": "extra\n\nmore",
        "sections": {"b": "2", "a": "3"},
        "toolsAdded": [{"name": "t", "description": "v2", "parameters": {}}],
        "timestamp": 7,
    }
    assert get_current_system_message([user_message("x", timestamp=1)]) is None
