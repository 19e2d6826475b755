"""AgentSession's steering and follow-up queues, abort and retry cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_context.events import (
    AgentEvent,
    AgentSettled,
    AutoRetryEnd,
    MessageStart,
    QueueUpdate,
)
from pi_context.messages import text_of
from pi_context.testing import ScriptedModel, failure, reply

from .conftest import GateTool, MakeSession


def users(sess: Any) -> list[str]:
    return [
        text_of(m["content"]) for m in sess.session.projection().messages if m["role"] == "user"
    ]


async def test_steer_and_follow_up_while_a_tool_runs(make_session: MakeSession) -> None:
    tool = GateTool()
    model = ScriptedModel([reply(tool_calls=[("wait", {})]), reply("steered"), reply("followed")])
    sess = await make_session(model, tools=[tool])
    seen: list[AgentEvent] = []
    sess.subscribe(seen.append)
    run = asyncio.create_task(sess.run("start"))
    await tool.entered.wait()
    follow = sess.follow_up("afterwards")
    steer = sess.steer("change course")
    assert (list(follow.follow_up), list(steer.steering)) == (["afterwards"], ["change course"])
    assert sess.queued_texts() == (["change course"], ["afterwards"])
    assert sess.pending_message_count == 2
    tool.gate.set()
    await run
    assert users(sess) == ["start", "change course", "afterwards"]
    assert len(model.requests) == 3
    # the list shrinks right before each delivered message starts
    for text in ("change course", "afterwards"):
        start = next(
            i
            for i, e in enumerate(seen)
            if isinstance(e, MessageStart) and text_of(e.message["content"]) == text  # type: ignore[typeddict-item]
        )
        assert isinstance(seen[start - 1], QueueUpdate)
    assert sess.pending_message_count == 0


async def test_queued_while_idle_waits_for_the_next_prompt(make_session: MakeSession) -> None:
    model = ScriptedModel([reply("one"), reply("two")])
    sess = await make_session(model)
    sess.steer("also this")
    assert model.requests == []
    await sess.run("main")
    # steering queued before the run is delivered right after the prompt, in the same request
    assert users(sess) == ["main", "also this"]
    assert len(model.requests) == 1


async def test_abort_keeps_the_queues_and_clear_queue_empties_them(
    make_session: MakeSession,
) -> None:
    tool = GateTool()
    model = ScriptedModel([reply(tool_calls=[("wait", {})]), reply("next run")])
    sess = await make_session(model, tools=[tool])
    run = asyncio.create_task(sess.run("start"))
    await tool.entered.wait()
    sess.follow_up("keep me")
    sess.abort()
    events = await run
    assert events[-1] == AgentSettled(aborted=True)
    assert sess.queued_texts() == ([], ["keep me"])
    assert sess.clear_queue() == ([], ["keep me"])
    assert sess.pending_message_count == 0
    await sess.run("again")
    assert users(sess) == ["start", "again"]


async def test_all_mode_from_the_settings_delivers_every_follow_up_at_once(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel([reply("one"), reply("both")])
    sess = await make_session(model, settings={"followUpMode": "all"})
    assert sess.follow_up_mode == "all"
    assert sess.steering_mode == "one-at-a-time"
    sess.follow_up("a")
    sess.follow_up("b")
    await sess.run("go")
    assert users(sess) == ["go", "a", "b"]
    assert len(model.requests) == 2


async def test_abort_retry_cancels_the_pending_retry(make_session: MakeSession) -> None:
    model = ScriptedModel([failure("overloaded", "transient"), reply("never")])
    waiting = asyncio.Event()

    async def slow_sleep(_: float) -> None:
        waiting.set()
        await asyncio.sleep(3600)

    sess = await make_session(model, sleep=slow_sleep, settings={"retry": {"enabled": True}})
    run = asyncio.create_task(sess.run("hi"))
    await waiting.wait()
    assert sess.abort_retry() is True
    events = await run
    ends = [e for e in events if isinstance(e, AutoRetryEnd)]
    assert ends == [AutoRetryEnd(False, 1, "Retry cancelled")]
    assert events[-1] == AgentSettled(aborted=False)
    assert len(model.requests) == 1
    assert sess.abort_retry() is False
