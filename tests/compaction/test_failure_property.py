"""Property: whatever fails or is cancelled during compaction, the session file stays valid.

Hypothesis drives random conversations interleaved with compactions whose model replies fail
in every way (provider errors, transient errors, ``length`` stops, tool calls, cancellation)
or succeed. After every step the file must reload, project to a context with no orphan tool
result, and agree with the in-memory session.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_context.compaction import CompactionSettings, Compactor
from pi_context.errors import CompactionError
from pi_context.resources.settings import RetrySettings
from pi_context.session import Session
from pi_context.testing import ScriptedModel, failure, reply
from tests.compaction.helpers import add_turn, new_session, orphan_tool_results
from tests.helpers import no_sleep

OUTCOMES = ["ok", "error", "transient", "length", "tool", "cancel", "offline"]


def scripted(outcome: str) -> list[Any]:
    if outcome == "ok":
        return [reply("## Goal\nok")] * 2
    if outcome == "error":
        return [failure("bad request")]
    if outcome == "transient":
        return [failure("overloaded", "transient"), reply("## Goal\nafter retry")] * 2
    if outcome == "length":
        return [reply("cut", stop_reason="length")]
    if outcome == "tool":
        return [reply(tool_calls=[("bash", {"command": "ls"})])]
    if outcome == "cancel":
        return [reply("slow", delay=60)]
    return []


async def attempt(session: Session, outcome: str, keep: int, mode: str) -> None:
    model = None if outcome == "offline" else ScriptedModel(scripted(outcome))
    compactor = Compactor(
        session,
        model,
        CompactionSettings(keep_recent_tokens=keep, summarizer=mode),  # type: ignore[arg-type]
        retry=RetrySettings(max_retries=1),
        sleep=no_sleep,
    )
    before = [e.raw for e in session.entries]
    if outcome == "cancel":
        assert model is not None
        task = asyncio.create_task(compactor.compact())
        while not model.requests and not task.done():
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, CompactionError):
            await task
        assert [e.raw for e in session.entries] == before
        return
    try:
        await compactor.compact()
    except CompactionError:
        assert [e.raw for e in session.entries] == before


def check_valid(session: Session, path: Path) -> None:
    messages = session.projection().messages
    assert orphan_tool_results(messages) == []
    if not path.exists():
        return
    with Session.open(path) as reloaded:
        assert reloaded.problems == []
        assert [e.raw for e in reloaded.entries] == [e.raw for e in session.entries]
        assert reloaded.projection().messages == messages


steps = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(100, 6000), st.booleans()),
        st.tuples(
            st.sampled_from(OUTCOMES),
            st.sampled_from([1, 300, 2000, 20000]),
            st.sampled_from(["model", "auto"]),
        ),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_failures_and_cancellations_never_break_a_session(plan: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        session = new_session(path)
        turn = 0

        async def run() -> None:
            nonlocal turn
            for step in plan:
                if step[0] == "turn":
                    add_turn(session, turn, result_chars=step[1], is_error=step[2])
                    turn += 1
                else:
                    await attempt(session, step[0], step[1], step[2])
                check_valid(session, path)

        asyncio.run(run())
        session.close()
