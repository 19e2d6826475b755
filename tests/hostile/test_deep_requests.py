"""A model reply nested deeper than the wire encoders reach.

The Anthropic SDK encodes a request body with the standard library's recursive JSON encoder:
a tool call whose arguments nest ~1,000 levels ended the run, and every later run on the
session, with ``RecursionError``. Now the reply is stored as sent, left out of the context
past ``CONTEXT_MAX_DEPTH`` (reported with its line, as loading reports it) and the agent goes
on: the next request leaves the reply and its orphaned tool result out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_context import _json
from pi_context.agent.session import AgentSession
from pi_context.providers.anthropic import AnthropicModel
from pi_context.session import Session
from pi_context.session.entries import CONTEXT_MAX_DEPTH
from pi_context.testing import SequentialIds
from tests.hostile.helpers import nested
from tests.providers.anthropic_stream import content_block, finish, info, message_start, reply_text
from tests.providers.replay_server import ReplayServer, anthropic_sse, stream

pytestmark = pytest.mark.timeout(120)


def _deep_call(depth: int) -> Any:
    arguments = _json.js_stringify({"path": "notes.txt", "deep": nested(depth)})
    block = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
    delta = {"type": "input_json_delta", "partial_json": arguments}
    events = [message_start(), *content_block(0, block, delta), *finish("tool_use")]
    return stream(anthropic_sse(events))


@pytest.mark.parametrize("depth", [CONTEXT_MAX_DEPTH - 10, 3_000])
async def test_a_reply_too_deep_for_the_wire_is_reported_and_the_agent_goes_on(
    tmp_path: Path, depth: int
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (tmp_path / "agent").mkdir()
    (project / "notes.txt").write_text("milk\n")
    with ReplayServer() as server:
        model = AnthropicModel(info(), api_key="sk-ant-test", base_url=server.url)
        try:
            session = await AgentSession.create(
                cwd=project,
                model=model,
                agent_dir=tmp_path / "agent",
                trusted=True,
                ids=SequentialIds(),
                session_file=tmp_path / "s.jsonl",
            )
            server.add(_deep_call(depth), reply_text("read it"), reply_text("still here"))
            await session.run("read the notes")
            await session.run("and now?")
        finally:
            await model.aclose()
        bodies = [json.loads(body) for body in server.bodies()] if depth < 900 else []
        raw_bodies = server.bodies()

    assert len(raw_bodies) == 3  # every request went out
    path = session.session.file_path
    assert path is not None
    lines = path.read_bytes().split(b"\n")
    reply_line = next(n for n, line in enumerate(lines, 1) if b'"toolCall"' in line)
    # the reply is stored as the model sent it
    assert b'"deep":' + _json.js_stringify(nested(depth)).encode() in lines[reply_line - 1]
    problems = [str(p) for p in session.session.problems]
    if depth + 6 <= CONTEXT_MAX_DEPTH:
        assert problems == []
        wire_roles = [m["role"] for m in bodies[2]["messages"]]
        assert wire_roles == ["user", "assistant", "user", "assistant", "user"]
    else:
        reopened = Session.open(path)
        reply_id = next(e.id for e in reopened.entries if e.line == reply_line)
        assert [str(p) for p in reopened.check()] == problems
        assert problems == [
            f"{path}:{reply_line}: message entry {reply_id}: nested deeper than "
            f"{CONTEXT_MAX_DEPTH} levels: left out of the context (the line is kept)"
        ]
        for body in raw_bodies[1:]:
            # neither the deep call nor its orphaned result reaches the wire
            assert b"toolu_1" not in body
