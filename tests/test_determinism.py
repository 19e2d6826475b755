"""Determinism: with the clock and the id source injected, a scripted run writes the same bytes.

Every timestamp (on entries and on messages: user prompts, assistant replies, tool results,
system patches) comes from the injected clock, every id from the injected id source.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from pi_context import _json
from pi_context.agent.session import AgentSession
from pi_context.model import ModelRequest
from pi_context.testing import FixedClock, ScriptedModel, ScriptedReply, SequentialIds, reply

START_MS = 1_767_225_600_000
SESSION_ID = "0194a0b2-0000-7000-8000-000000000001"
HEADER_TIME = "2026-01-01T00:00:00.000Z"


def _script() -> list[ScriptedReply | Callable[[ModelRequest], ScriptedReply]]:
    return [
        reply(
            "Writing the notes.",
            tool_calls=[("write", {"path": "notes.txt", "content": "alpha\nbeta\n"})],
            input_tokens=100,
        ),
        reply(tool_calls=[("read", {"path": "notes.txt"})], input_tokens=150),
        reply(
            tool_calls=[("edit", {"path": "notes.txt", "oldText": "beta", "newText": "gamma"})],
            input_tokens=200,
        ),
        reply("Done: notes.txt says alpha, gamma.", input_tokens=250),
        reply("Nothing else to do.", input_tokens=300),
    ]


async def _run_once(root: Path, session_file: Path, *, model_clock: bool = True) -> bytes:
    project = root / "proj"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    agent_dir = root / "agent"
    agent_dir.mkdir(exist_ok=True)
    clock = FixedClock(START_MS, step_ms=7)
    model = ScriptedModel(_script(), clock=clock if model_clock else None)
    sess = await AgentSession.create(
        cwd=project,
        session_file=session_file,
        model=model,
        agent_dir=agent_dir,
        trusted=True,
        ids=SequentialIds(),
        clock=clock,
        session_id=SESSION_ID,
        timestamp=HEADER_TIME,
    )
    await sess.run("Write notes.txt, then fix its second line.")
    await sess.run("Anything else?")
    model.assert_complete()
    return session_file.read_bytes()


async def test_same_scripted_run_writes_the_same_bytes(tmp_path: Path) -> None:
    first = await _run_once(tmp_path, tmp_path / "one.jsonl")
    second = await _run_once(tmp_path, tmp_path / "two.jsonl")
    assert first == second

    lines = [_json.loads(line) for line in first.splitlines()]
    assert lines[0]["id"] == SESSION_ID
    assert lines[0]["timestamp"] == HEADER_TIME
    assert [line["id"] for line in lines[1:]] == [f"{n:08x}" for n in range(1, len(lines))]
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    roles = {m["role"] for m in messages}
    assert {"user", "assistant", "toolResult"} <= roles
    # every message timestamp is a reading of the injected clock
    stamps = [m["timestamp"] for m in messages]
    assert all(START_MS <= t < START_MS + 7 * 1000 and (t - START_MS) % 7 == 0 for t in stamps)
    tool_results = [m for m in messages if m["role"] == "toolResult"]
    assert len(tool_results) == 3
    assert all(m["durationMs"] % 7 == 0 for m in tool_results)


async def test_the_agent_stamps_replies_with_the_session_clock_not_the_models(
    tmp_path: Path,
) -> None:
    # the scripted model (like a real adapter) stamps with the wall clock when it has no clock
    first = await _run_once(tmp_path, tmp_path / "one.jsonl", model_clock=False)
    second = await _run_once(tmp_path, tmp_path / "two.jsonl", model_clock=False)
    assert first == second
    lines = [_json.loads(line) for line in first.splitlines()]
    replies = [
        line["message"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "assistant"
    ]
    assert len(replies) == 5
    assert all(START_MS <= m["timestamp"] < START_MS + 7 * 1000 for m in replies)
