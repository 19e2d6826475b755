"""The request pipeline: one projection per request, passed along its stages."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from pi_context.model import ModelInfo
from pi_context.session import Session
from pi_context.session.projection import Projection
from pi_context.testing import ScriptedModel, reply

from .conftest import MakeSession


@pytest.fixture
def projections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts ``Session.projection()`` snapshots (each records who asked)."""
    calls: list[str] = []
    original = Session.projection

    def counted(self: Session, leaf_id: str | None = None) -> Projection:
        caller = inspect.stack()[1]
        calls.append(f"{Path(caller.filename).stem}.{caller.function}")
        return original(self, leaf_id)

    monkeypatch.setattr(Session, "projection", counted)
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
        "run_control._run",  # the run's system patch
        "request.build",  # request 1: messages and thinking level from one snapshot
        "loop_host.prepare_next_turn",  # threshold check and system patch share one
        "request.build",  # request 2
        "compaction_control.decide",  # agent_end.willRetry
        "compaction_control.decide",  # the post-run check
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
