"""The agent loop driven by a scripted model and a list-backed host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from pi_context.agent._loop import ABORTED_TOOL_TEXT
from pi_context.errors import ProviderError
from pi_context.events import (
    AgentEnd,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionUpdate,
    TurnEnd,
)
from pi_context.messages import assistant_message, text_of, user_message
from pi_context.model import (
    ModelInfo,
    ModelRequest,
    StreamDone,
    StreamEvent,
    TextDelta,
)
from pi_context.testing import ScriptedModel, failure, reply
from pi_context.tools.base import ToolOutcome, UpdateCallback, text_outcome

from .fakes import FakeHost, Recorder, loop_of, scripted, sleep_forever


async def echo(args: dict[str, Any]) -> str:
    return f"echo {args.get('text')}"


async def boom(args: dict[str, Any]) -> str:
    raise RuntimeError("tool exploded")


def roles(host: FakeHost) -> list[str]:
    return [m["role"] for m in host.stored]


async def wait_for(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0)


async def test_plain_reply_persists_user_and_assistant() -> None:
    host = FakeHost(scripted(reply("hi there")))
    rec = Recorder()
    result = await loop_of(host, rec).run([user_message("hello")])
    assert roles(host) == ["user", "assistant"]
    assert text_of(host.assistant(1)["content"]) == "hi there"
    assert rec.types()[:3] == ["agent_start", "turn_start", "message_start"]
    assert rec.types()[-2:] == ["turn_end", "agent_end"]
    assert "message_update" in rec.types()
    assert result.turns == 1
    assert not result.aborted
    assert host.turns_prepared == 0  # the run ended: no between-turn preparation


async def test_text_stream_events_start_delta_end() -> None:
    host = FakeHost(scripted(reply("abc", thinking="hmm")))
    rec = Recorder()
    await loop_of(host, rec).run([user_message("x")])
    kinds = [e.event.kind for e in rec.events if isinstance(e, MessageUpdate)]
    assert kinds == [
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
    ]
    end = [e for e in rec.events if isinstance(e, MessageUpdate)][-1]
    assert end.event.to_json() == {"type": "text_end", "contentIndex": 1, "content": "abc"}


async def test_tool_call_round_trip() -> None:
    model = scripted(reply(tool_calls=[("echo", {"text": "a"})]), reply("done"))
    host = FakeHost(model, tools={"echo": echo})
    rec = Recorder()
    result = await loop_of(host, rec).run([user_message("go")])
    assert roles(host) == ["user", "assistant", "toolResult", "assistant"]
    tool_result = host.tool_result(2)
    assert tool_result["toolCallId"] == "call_1"
    assert text_of(tool_result["content"]) == "echo a"
    assert tool_result["isError"] is False
    assert "durationMs" in tool_result
    # The second request saw the tool result.
    assert [m["role"] for m in model.requests[1].messages] == ["user", "assistant", "toolResult"]
    assert host.turns_prepared == 1
    assert result.turns == 2
    assert rec.types().count("turn_end") == 2
    ends = [e for e in rec.events if isinstance(e, ToolExecutionEnd)]
    assert ends[0].to_json()["result"]["content"][0]["text"] == "echo a"


async def test_tool_errors_become_error_results() -> None:
    model = scripted(
        reply(tool_calls=[("boom", {}), ("missing", {}), ("echo", {"text": "ok"})]), reply("ok")
    )
    host = FakeHost(model, tools={"boom": boom, "echo": echo})
    await loop_of(host, Recorder()).run([user_message("go")])
    results = [m for m in host.stored if m["role"] == "toolResult"]
    assert [r["toolCallId"] for r in results] == ["call_1", "call_2", "call_3"]
    assert [r["isError"] for r in results] == [True, True, False]
    assert text_of(results[0]["content"]) == "tool exploded"
    assert text_of(results[1]["content"]) == "Tool missing not found"


async def test_length_stop_does_not_execute_tools() -> None:
    calls: list[str] = []

    async def track(args: dict[str, Any]) -> str:
        calls.append("ran")
        return "x"

    model = scripted(reply(tool_calls=[("track", {})], stop_reason="length"), reply("after"))
    host = FakeHost(model, tools={"track": track})
    await loop_of(host, Recorder()).run([user_message("go")])
    assert calls == []
    result = host.tool_result(2)
    assert result["isError"] is True
    assert text_of(result["content"]).startswith('Tool call "track" was not executed')


async def test_provider_error_ends_the_run() -> None:
    host = FakeHost(scripted(failure("prompt is too long", "context_overflow")))
    rec = Recorder()
    result = await loop_of(host, rec).run([user_message("go")])
    assert roles(host) == ["user", "assistant"]
    assert host.assistant(1)["stopReason"] == "error"
    assert result.last_error is not None
    assert result.last_error.kind == "context_overflow"
    assert isinstance(rec.events[-1], AgentEnd)


class RaisingModel:
    info = ModelInfo(provider="p", id="m", api="a", context_window=1000, max_tokens=100)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield TextDelta("par", 0)
        raise ProviderError("connection reset", kind="transient")


async def test_raised_provider_error_keeps_partial_text() -> None:
    host = FakeHost(RaisingModel())
    result = await loop_of(host, Recorder()).run([user_message("go")])
    msg = host.assistant(-1)
    assert msg["stopReason"] == "error"
    assert msg["errorMessage"] == "connection reset"
    assert text_of(msg["content"]) == "par"
    assert result.last_error is not None
    assert result.last_error.kind == "transient"


class HangingModel:
    """Streams some text and a tool call start, then waits forever."""

    info = ModelInfo(provider="p", id="m", api="a", context_window=1000, max_tokens=100)

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        from pi_context.model import ToolCallDelta, ToolCallStart

        yield TextDelta("partial ", 0)
        yield ToolCallStart("c1", "bash", 1)
        yield ToolCallDelta("c1", '{"comm', 1)
        self.started.set()
        await asyncio.sleep(3600)
        yield StreamDone(assistant_message([], api="a", provider="p", model="m"))


async def test_abort_while_streaming_stores_aborted_message_without_calls() -> None:
    model = HangingModel()
    host = FakeHost(model)
    rec = Recorder()
    task = asyncio.create_task(loop_of(host, rec).run([user_message("go")]))
    await model.started.wait()
    task.cancel()
    result = await task
    assert result.aborted
    assert roles(host) == ["user", "assistant"]
    aborted = host.assistant(1)
    assert aborted["stopReason"] == "aborted"
    assert aborted["content"] == [{"type": "text", "text": "partial "}]
    assert isinstance(rec.events[-1], AgentEnd)
    assert any(isinstance(e, TurnEnd) for e in rec.events)


async def test_abort_during_tools_gives_every_call_a_result() -> None:
    model = scripted(reply(tool_calls=[("echo", {"text": "fast"}), ("slow", {})]))
    host = FakeHost(model, tools={"echo": echo, "slow": sleep_forever})
    rec = Recorder()
    task = asyncio.create_task(loop_of(host, rec).run([user_message("go")]))
    await wait_for(lambda: any(isinstance(e, ToolExecutionEnd) for e in rec.events))
    task.cancel()
    result = await task
    assert result.aborted
    assert roles(host) == ["user", "assistant", "toolResult", "toolResult"]
    fast, slow = host.tool_result(2), host.tool_result(3)
    assert fast["isError"] is False
    assert text_of(fast["content"]) == "echo fast"
    assert slow["isError"] is True
    assert text_of(slow["content"]) == ABORTED_TOOL_TEXT
    assert slow["details"] == {"aborted": True}
    model.assert_complete()  # no further request after the abort


async def test_queued_message_is_delivered_before_the_next_request() -> None:
    gate = asyncio.Event()

    async def wait_gate(args: dict[str, Any]) -> str:
        await gate.wait()
        return "waited"

    model = scripted(reply(tool_calls=[("wait", {})]), reply("saw it"))
    host = FakeHost(model, tools={"wait": wait_gate})
    task = asyncio.create_task(loop_of(host, Recorder()).run([user_message("go")]))
    await wait_for(lambda: len(model.requests) == 1)
    host.queued.append(user_message("also this"))
    gate.set()
    await task
    assert roles(host) == ["user", "assistant", "toolResult", "user", "assistant"]
    assert text_of(model.requests[1].messages[-1]["content"]) == "also this"


async def test_follow_up_starts_another_turn_when_the_run_would_end() -> None:
    def first(request: ModelRequest) -> Any:
        host.queued.append(user_message("follow up"))
        return reply("one")

    model = ScriptedModel([first, reply("two")])
    host = FakeHost(model)
    result = await loop_of(host, Recorder()).run([user_message("go")])
    assert roles(host) == ["user", "assistant", "user", "assistant"]
    assert result.turns == 2


async def test_between_turn_messages_come_first() -> None:
    patch = {"role": "system", "content": "", "sections": {"x": "<x>\n1\n</x>"}, "timestamp": 1}
    model = scripted(reply(tool_calls=[("echo", {"text": "a"})]), reply("done"))
    host = FakeHost(model, tools={"echo": echo}, next_turn=[[patch]])  # type: ignore[list-item]
    host.queued = []
    await loop_of(host, Recorder()).run([user_message("go")])
    assert roles(host) == ["user", "assistant", "toolResult", "system", "assistant"]


async def test_invalid_arguments_are_reported_to_the_model() -> None:
    bad = reply(tool_calls=[("echo", {})])
    call = dict(bad.content[0])
    call["argumentsError"] = "Unexpected end of JSON input"
    from pi_context.testing import ScriptedReply

    model = ScriptedModel([ScriptedReply(content=[call], stop_reason="toolUse"), reply("ok")])  # type: ignore[list-item]
    host = FakeHost(model, tools={"echo": echo})
    await loop_of(host, Recorder()).run([user_message("go")])
    assert text_of(host.tool_result(2)["content"]) == (
        'Invalid arguments for tool "echo": Unexpected end of JSON input'
    )


async def test_message_end_carries_entry_ids() -> None:
    host = FakeHost(scripted(reply("x")))
    rec = Recorder()
    await loop_of(host, rec).run([user_message("go")])
    assert [e.entry_id for e in rec.events if isinstance(e, MessageEnd)] == ["e1", "e2"]


async def test_partial_results_become_update_events_between_start_and_end() -> None:
    """A tool's updates are events as they happen (the tool still runs), and extensions hear
    every update before the call's end."""
    release = asyncio.Event()
    seen_while_running: list[str] = []

    async def build(args: dict[str, Any], on_update: UpdateCallback) -> str:
        on_update(ToolOutcome([]))  # the first, empty update, as bash sends it
        on_update(text_outcome("step 1\n", details={}))
        await release.wait()
        on_update(text_outcome("step 1\nstep 2\n", details={}))
        return "step 1\nstep 2\n"

    model = scripted(reply(tool_calls=[("build", {"target": "all"})]), reply("built"))
    host = FakeHost(model, live_tools={"build": build})
    rec = Recorder()
    run = asyncio.ensure_future(loop_of(host, rec).run([user_message("go")]))
    await wait_for(lambda: rec.types().count("tool_execution_update") == 2)
    seen_while_running.extend(rec.types())
    assert "tool_execution_end" not in seen_while_running  # live, not after the fact
    release.set()
    await run
    updates = [e for e in rec.events if isinstance(e, ToolExecutionUpdate)]
    assert [u.to_json()["partialResult"] for u in updates] == [
        {"content": []},
        {"content": [{"type": "text", "text": "step 1\n"}], "details": {}},
        {"content": [{"type": "text", "text": "step 1\nstep 2\n"}], "details": {}},
    ]
    assert updates[0].to_json()["args"] == {"target": "all"}
    heard = [t for t in host.notified if t.startswith("tool_execution")]
    assert heard == ["tool_execution_start"] + ["tool_execution_update"] * 3 + [
        "tool_execution_end"
    ]


async def test_an_update_from_another_thread_or_after_the_end_is_handled() -> None:
    """A tool may report from a worker thread (the update is passed to the loop's thread);
    an update after the tool returned is dropped (no update follows the end)."""
    kept: list[UpdateCallback] = []

    async def threaded(args: dict[str, Any], on_update: UpdateCallback) -> str:
        await asyncio.to_thread(on_update, text_outcome("from a thread", details={}))
        await asyncio.sleep(0)  # the loop's thread runs the passed update
        kept.append(on_update)
        return "done"

    model = scripted(reply(tool_calls=[("work", {})]), reply("ok"))
    host = FakeHost(model, live_tools={"work": threaded})
    rec = Recorder()
    await loop_of(host, rec).run([user_message("go")])
    kept[0](text_outcome("too late", details={}))
    updates = [e for e in rec.events if isinstance(e, ToolExecutionUpdate)]
    assert [text_of(u.partial_result.content) for u in updates] == ["from a thread"]
    assert rec.types().index("tool_execution_update") < rec.types().index("tool_execution_end")
