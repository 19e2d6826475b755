"""Typed hooks (``ExtensionHooks`` subclasses), and results with unknown keys."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pi_context.compaction.events import BeforeCompact
from pi_context.errors import ExtensionError
from pi_context.events import AgentEnd, AgentStart, ExtensionFailure
from pi_context.extensions import (
    ExtensionAPI,
    ExtensionContext,
    ExtensionHooks,
    ExtensionRunner,
    load_extensions,
)
from pi_context.extensions.events import (
    InputEvent,
    InputResult,
    SessionBeforeCompactResult,
    ToolCallEvent,
    ToolCallResult,
)


def runner_of(name: str, register: ExtensionHooks | None = None) -> ExtensionRunner:
    def reg(pi: ExtensionAPI) -> None:
        if register is not None:
            pi.add_hooks(register)

    return load_extensions(
        cwd=Path("."), entry_points=False, include_discovered=False, registrations=[(name, reg)]
    )


class Recorder(ExtensionHooks):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_agent_start(self, event: AgentStart, ctx: ExtensionContext) -> None:
        self.seen.append(event.type)

    async def on_agent_end(self, event: AgentEnd, ctx: ExtensionContext) -> None:
        self.seen.append(f"{event.type}:{event.will_retry}")

    async def on_tool_call(
        self, event: ToolCallEvent, ctx: ExtensionContext
    ) -> ToolCallResult | None:
        return ToolCallResult(block=event.tool_name == "bash", reason="no shell")

    async def on_input(self, event: InputEvent, ctx: ExtensionContext) -> InputResult | None:
        return InputResult(text=event.text.upper())


async def test_overridden_methods_receive_the_agents_own_event_objects() -> None:
    hooks = Recorder()
    runner = runner_of("typed", hooks)
    start = AgentStart()
    await runner.emit(start)
    await runner.emit(AgentEnd((), True))
    assert hooks.seen == ["agent_start", "agent_end:True"]
    assert runner.has_handlers("tool_call")
    assert runner.has_handlers("input")
    assert not runner.has_handlers("turn_start")  # not overridden: not registered


async def test_typed_results_replace_the_proposal() -> None:
    runner = runner_of("typed", Recorder())
    verdict = await runner.emit_tool_call(ToolCallEvent("c1", "bash", {"command": "ls"}))
    assert verdict is not None
    assert verdict.block
    assert verdict.reason == "no shell"
    assert await runner.emit_tool_call(ToolCallEvent("c2", "read", {})) is None
    assert (await runner.emit_input(InputEvent("hello"))).text == "HELLO"


def test_a_misspelt_hook_method_is_an_error_naming_the_extension() -> None:
    class Typo(ExtensionHooks):
        async def on_agent_strat(self, event: AgentStart, ctx: ExtensionContext) -> None:
            return None

    runner = runner_of("typo-ext", Typo())
    [error] = runner.load_errors
    assert isinstance(error, ExtensionError)
    assert "typo-ext" in str(error)
    assert "on_agent_strat" in str(error)


async def test_a_result_with_an_unknown_key_is_reported_naming_extension_and_key() -> None:
    def register(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda event, ctx: {"cancell": True})

    runner = load_extensions(
        cwd=Path("."),
        entry_points=False,
        include_discovered=False,
        registrations=[("careless", register)],
    )
    reported: list[ExtensionFailure] = []
    runner.on_error(reported.append)
    event = BeforeCompact(preparation=cast(Any, None), branch_entries=[], reason="manual")
    assert await runner.emit_session_before_compact(event) is None  # not a cancel
    [failure] = reported
    assert failure.extension == "careless"
    assert failure.event == "session_before_compact"
    assert "'cancell'" in failure.error
    assert "careless" in failure.error


async def test_known_keys_in_either_spelling_still_work() -> None:
    def register(pi: ExtensionAPI) -> None:
        pi.on("session_before_compact", lambda event, ctx: {"cancel": True})

    runner = load_extensions(
        cwd=Path("."),
        entry_points=False,
        include_discovered=False,
        registrations=[("ok", register)],
    )
    event = BeforeCompact(preparation=cast(Any, None), branch_entries=[], reason="manual")
    answer = await runner.emit_session_before_compact(event)
    assert answer == SessionBeforeCompactResult(cancel=True)
