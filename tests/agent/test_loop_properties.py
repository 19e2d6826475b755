"""Invariant: however a run ends (tool errors, length stops, an abort at any point), every tool
call in the stored transcript is followed by exactly one result for it."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.messages import AgentMessage, user_message
from pi_context.testing import ScriptedModel, reply

from .fakes import FakeHost, Recorder, loop_of

TOOL = st.sampled_from(["ok", "fail", "missing", "abort"])
TURN = st.tuples(st.lists(TOOL, min_size=0, max_size=3), st.booleans())


def check_pairs(stored: list[AgentMessage]) -> None:
    index = 0
    while index < len(stored):
        message = stored[index]
        index += 1
        if message["role"] != "assistant":
            continue
        calls = [b["id"] for b in message["content"] if b["type"] == "toolCall"]
        results = []
        while index < len(stored) and stored[index]["role"] == "toolResult":
            results.append(stored[index]["toolCallId"])  # type: ignore[typeddict-item]
            index += 1
        assert results == calls


@settings(max_examples=40, deadline=None)
@given(st.lists(TURN, min_size=1, max_size=4))
def test_every_call_gets_exactly_one_result(turns: list[tuple[list[str], bool]]) -> None:
    async def scenario() -> None:
        replies: list[Any] = []
        for names, length_stop in turns:
            calls: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in names]
            if calls:
                replies.append(
                    reply(tool_calls=calls, stop_reason="length" if length_stop else None)
                )
            else:
                replies.append(reply("text"))
        replies.append(reply("final"))
        task: asyncio.Task[Any] | None = None

        async def ok(args: dict[str, Any]) -> str:
            return "fine"

        async def fail(args: dict[str, Any]) -> str:
            raise RuntimeError("broken")

        async def abort(args: dict[str, Any]) -> str:
            assert task is not None
            task.cancel()
            await asyncio.sleep(3600)
            return "never"

        host = FakeHost(ScriptedModel(replies), tools={"ok": ok, "fail": fail, "abort": abort})
        task = asyncio.create_task(loop_of(host, Recorder()).run([user_message("go")]))
        result = await task
        check_pairs(host.stored)
        if result.aborted:
            assert host.stored[-1]["role"] in ("toolResult", "assistant")

    asyncio.run(scenario())
