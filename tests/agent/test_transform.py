"""The transform-context chain: extension phases, restoration, hidden declarations, forced
prompt, in that order."""

from __future__ import annotations

import copy
from typing import Any, cast

from pi_context.agent._transform import (
    TransformChain,
    force_prompt,
    hide_declarations,
)
from pi_context.extensions import ExtensionRunner, load_extensions
from pi_context.messages import AgentMessage, user_message
from pi_context.prompt import get_current_system_message

READ = {"name": "read", "description": "r", "parameters": {}}
BASH = {"name": "bash", "description": "b", "parameters": {}}


def system(sections: dict[str, Any], ts: int, **extra: Any) -> AgentMessage:
    return cast(
        AgentMessage,
        {"role": "system", "content": "", "sections": sections, "timestamp": ts, **extra},
    )


def transcript() -> list[AgentMessage]:
    return [
        system({"preamble": "P", "cwd": "<cwd>\n/x\n</cwd>"}, 10, toolsAdded=[READ, BASH]),
        user_message("one", timestamp=11),
        cast(
            AgentMessage,
            {
                "role": "assistant",
                "content": [],
                "api": "a",
                "provider": "p",
                "model": "m",
                "usage": {},
                "stopReason": "stop",
                "timestamp": 12,
            },
        ),
        system({"skills": "<skills>\nS\n</skills>"}, 13),
        user_message("two", timestamp=14),
    ]


def runner_of(*registers: Any) -> ExtensionRunner:
    """Extensions ``ext-a``, ``ext-b``, ... with the given ``register(pi)`` functions."""
    return load_extensions(
        cwd=".",
        entry_points=False,
        include_discovered=False,
        registrations=[(f"ext-{chr(97 + i)}", r) for i, r in enumerate(registers)],
    )


def chain_of(*registers: Any, **options: Any) -> TransformChain:
    """The agent's chain over an extension runner with the given ``register(pi)`` functions."""
    return TransformChain(context_phase=runner_of(*registers).emit_context, **options)


def on(event: str, handler: Any) -> Any:
    return lambda pi: pi.on(event, lambda e, ctx: handler(e.messages))


def returning(fn: Any) -> Any:
    """A handler that returns ``fn(messages)`` as its new message list."""
    return lambda messages: {"messages": fn(messages)}


async def test_handlers_see_no_system_messages_and_unchanged_list_keeps_them_in_place() -> None:
    seen: list[list[str]] = []

    def look(messages: list[AgentMessage]) -> None:
        seen.append([m["role"] for m in messages])

    msgs = transcript()
    out = await chain_of(on("context", look))(msgs)
    assert seen == [["user", "assistant", "user"]]
    assert out == msgs  # system messages stay where they were


async def test_changed_list_gets_one_replayed_head() -> None:
    out = await chain_of(on("context", returning(lambda m: m[-1:])))(transcript())
    assert [m["role"] for m in out] == ["system", "user"]
    head = cast(dict[str, Any], out[0])
    assert list(head["sections"]) == ["preamble", "cwd", "skills"]
    assert head["toolsAdded"] == [READ, BASH]
    assert head["timestamp"] == 10


async def test_in_place_list_edit_counts_as_a_change() -> None:
    def drop_first(messages: list[AgentMessage]) -> None:
        del messages[0]

    out = await chain_of(on("context", drop_first))(transcript())
    assert [m["role"] for m in out] == ["system", "assistant", "user"]


async def test_returning_the_same_elements_keeps_system_messages() -> None:
    msgs = transcript()
    out = await chain_of(on("context", returning(list)))(msgs)
    assert [m["role"] for m in out] == [m["role"] for m in msgs]


async def test_stored_messages_are_never_changed() -> None:
    def mutate(messages: list[AgentMessage]) -> None:
        cast(dict[str, Any], messages[0])["content"] = "rewritten"

    def strip_all(messages: list[AgentMessage]) -> dict[str, Any]:
        for m in messages:
            if m["role"] == "system":
                cast(dict[str, Any], m)["sections"] = {}
        return {"messages": messages}

    msgs = transcript()
    before = copy.deepcopy(msgs)
    chain = chain_of(
        on("context", mutate),
        on("context_with_system", strip_all),
        hidden_tools=lambda: {"bash"},
        forced_prompt=lambda: "FORCED",
    )
    out = await chain(msgs)
    assert msgs == before
    assert cast(dict[str, Any], out[1])["content"] == "rewritten"


async def test_raising_handler_is_reported_and_skipped() -> None:
    def bad(messages: list[AgentMessage]) -> None:
        raise ValueError("nope")

    runner = runner_of(on("context", bad), on("context", returning(lambda m: m[-1:])))
    out = await TransformChain(context_phase=runner.emit_context)(transcript())
    assert [(f.event, f.extension, f.error) for f in runner.failures] == [
        ("context", "ext-a", "ValueError: nope")
    ]
    assert [m["role"] for m in out] == ["system", "user"]


async def test_context_with_system_sees_everything_and_losing_the_head_is_reported() -> None:
    seen: list[list[str]] = []

    def drop_system(messages: list[AgentMessage]) -> dict[str, Any]:
        seen.append([m["role"] for m in messages])
        return {"messages": [m for m in messages if m["role"] != "system"]}

    runner = runner_of(on("context_with_system", drop_system))
    out = await TransformChain(context_phase=runner.emit_context)(transcript())
    assert seen == [["system", "user", "assistant", "system", "user"]]
    assert [m["role"] for m in out] == ["user", "assistant", "user"]  # honored
    assert [f.event for f in runner.failures] == ["context_with_system"]


async def test_without_extensions_the_chain_passes_messages_through() -> None:
    msgs = transcript()
    out = await TransformChain()(msgs)
    assert out == msgs
    assert out is not msgs
    assert all(a is b for a, b in zip(out, msgs, strict=True))  # no copies without handlers


def test_hidden_declarations_are_removed_everywhere() -> None:
    msgs = [
        *transcript(),
        cast(
            AgentMessage,
            {"role": "system", "content": "", "timestamp": 20, "toolsRemoved": [{"name": "bash"}]},
        ),
    ]
    out = hide_declarations(msgs, {"bash"})
    assert cast(dict[str, Any], out[0])["toolsAdded"] == [READ]
    assert "toolsRemoved" not in out[-1]
    assert cast(dict[str, Any], msgs[0])["toolsAdded"] == [READ, BASH]  # input untouched
    assert hide_declarations(msgs, ()) == msgs


def test_forced_prompt_replaces_system_messages_with_one_head() -> None:
    out = force_prompt(hide_declarations(transcript(), {"bash"}), "FORCED")
    assert out[0] == {"role": "system", "content": "FORCED", "toolsAdded": [READ], "timestamp": 10}
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert force_prompt(transcript(), None) == transcript()


def test_forced_prompt_without_state_uses_the_clock() -> None:
    out = force_prompt([user_message("x", timestamp=1)], "", clock=lambda: 99)
    assert out[0] == {"role": "system", "content": "", "timestamp": 99}


async def test_chain_order_context_then_hidden_then_forced() -> None:
    order: list[str] = []

    def ctx(messages: list[AgentMessage]) -> list[AgentMessage]:
        order.append("context")
        return messages[-1:]

    def hidden() -> set[str]:
        order.append("hidden")
        return {"read"}

    def forced() -> str:
        order.append("forced")
        return "F"

    out = await chain_of(on("context", returning(ctx)), hidden_tools=hidden, forced_prompt=forced)(
        transcript()
    )
    assert order == ["context", "hidden", "forced"]
    assert out[0] == {"role": "system", "content": "F", "toolsAdded": [BASH], "timestamp": 10}


def test_replay_moves_readded_sections_and_tools_to_the_end() -> None:
    msgs = [
        system({"a": "1", "b": "2"}, 5, toolsAdded=[READ, BASH]),
        system({"a": None}, 6, toolsRemoved=[{"name": "read"}]),
        system({"a": "3", "b": "4"}, 7, toolsAdded=[READ]),
    ]
    head = cast(dict[str, Any], get_current_system_message(msgs))
    assert list(head["sections"].items()) == [("b", "4"), ("a", "3")]
    assert [t["name"] for t in head["toolsAdded"]] == ["bash", "read"]
    assert head["timestamp"] == 5
    assert get_current_system_message([user_message("x")]) is None


async def test_chain_reuses_its_outputs_and_matches_the_plain_projections() -> None:
    hidden: set[str] = {"bash"}
    forced: list[str | None] = ["F"]
    chain = TransformChain(hidden_tools=lambda: hidden, forced_prompt=lambda: forced[0])
    msgs = transcript()

    def reference() -> list[AgentMessage]:
        return force_prompt(hide_declarations(msgs, hidden), forced[0])

    first = await chain(msgs)
    assert first == reference()
    msgs.append(user_message("three", timestamp=15))
    second = await chain(msgs)
    assert second == reference()
    assert second[0] is first[0]  # the same forced head while the system state is unchanged
    assert all(a is b for a, b in zip(first[1:], second[1:], strict=False))
    msgs.append(system({"skills": "<skills>\nT\n</skills>"}, 16, toolsAdded=[BASH]))
    third = await chain(msgs)
    assert third == reference()
    assert third[0] is not first[0]
    hidden.clear()
    hidden.add("read")
    assert await chain(msgs) == reference()
    forced[0] = None
    unforced = await chain(msgs)
    assert unforced == reference()
    assert cast(dict[str, Any], unforced[0])["toolsAdded"] == [BASH]
