"""The request pipeline: one projection per request, passed along its stages."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path
from typing import Any

import pytest

from pi_context.events import (
    AgentEnd,
    AgentEvent,
    MessageEnd,
    MessageStart,
    ToolExecutionEnd,
    TurnEnd,
)
from pi_context.model import ModelInfo
from pi_context.session import Session, convert_to_llm
from pi_context.session.projection import Projection
from pi_context.testing import ScriptedModel, reply

from .conftest import MakeSession


@pytest.fixture
def projections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts ``Session.stored_projection()`` snapshots (each records who asked); the engine
    takes no other (``projection()`` is the public, copying view of it)."""
    calls: list[str] = []
    original = Session.stored_projection

    def counted(self: Session, leaf_id: str | None = None) -> Projection:
        caller = inspect.stack()[1]
        calls.append(f"{Path(caller.filename).stem}.{caller.function}")
        return original(self, leaf_id)

    monkeypatch.setattr(Session, "stored_projection", counted)
    return calls


async def test_a_two_request_run_takes_one_projection_per_stage_that_needs_one(
    make_session: MakeSession, projections: list[str]
) -> None:
    model = ScriptedModel([reply(tool_calls=[("ls", {"path": "."})]), reply("done")])
    sess = await make_session(model)
    await sess.run("list the files")
    model.assert_complete()
    assert len(model.requests) == 2
    # The first version of this layer took 9 snapshots here: every stage fetched its own.
    assert projections == [
        "_run._run",  # the run's system patch
        "_request.build",  # request 1: messages and thinking level from one snapshot
        "_run.prepare_next_turn",  # threshold check and system patch share one
        "_request.build",  # request 2
        "_compaction.decide",  # agent_end.willRetry
        "_compaction.decide",  # the post-run check
    ]


async def test_the_request_carries_the_thinking_level_of_the_same_projection(
    make_session: MakeSession,
) -> None:
    info = ModelInfo("scripted", "thinker", "scripted", 128_000, 16_384, reasoning=True)
    model = ScriptedModel([reply("ok")], model_info=info)
    sess = await make_session(model)
    sess.session.append_thinking_level_change("high")
    await sess.run("think")
    [request] = model.requests
    assert request.options.thinking_level == "high"


async def test_what_events_hand_out_cannot_change_the_session(make_session: MakeSession) -> None:
    model = ScriptedModel(
        [reply(tool_calls=[("ls", {"path": "."})]), reply("done"), reply("again")]
    )
    sess = await make_session(model)
    events: list[AgentEvent] = []
    sess.subscribe(events.append)
    await sess.run("list the files")
    before = copy.deepcopy(sess.session.projection().messages)
    for event in events:
        given: list[Any] = []
        if isinstance(event, MessageStart | MessageEnd):
            given.append(event.message)
        elif isinstance(event, TurnEnd):
            given += [event.message, *event.tool_results]
        elif isinstance(event, AgentEnd):
            given += event.messages
        elif isinstance(event, ToolExecutionEnd):
            given.append(event.result)
        for message in given:
            message["role"] = "mutated"
            content = message.get("content")
            if isinstance(content, list):
                content.clear()
    assert sess.session.projection().messages == before
    await sess.run("again")  # the next request is built from the unchanged session
    assert [m["role"] for m in model.requests[-1].messages][-2:] == ["assistant", "user"]


async def test_what_the_public_api_hands_out_cannot_change_the_session_or_the_next_request(
    make_session: MakeSession,
) -> None:
    model = ScriptedModel(
        [reply(tool_calls=[("ls", {"path": "."})]), reply("done"), reply("again")]
    )
    sess = await make_session(model)
    await sess.run("list the files")
    stored = copy.deepcopy(list(sess.session.stored_projection().messages))
    projection = sess.session.projection()
    handed: list[Any] = [*projection.messages, *sess.session.messages()]
    handed += [m for item in projection.entries for m in item.messages]
    for message in handed:
        message["role"] = "mutated"
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    block["text"] = "mutated"
            content.append({"type": "text", "text": "injected"})
    assert list(sess.session.stored_projection().messages) == stored
    assert list(sess.session.projection().messages) == stored
    await sess.run("again")
    sent = model.requests[-1].messages
    assert "mutated" not in repr(sent)
    assert "injected" not in repr(sent)
    expected = convert_to_llm(stored)
    assert list(sent[: len(expected)]) == expected
