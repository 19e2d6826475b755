"""A server connecting after the first request, on the Anthropic wire: the cached prefix stays.

The ``mcp_servers`` section lists a deferred server from the start; without a configured
``description`` its line gains the server's instructions once it connects. That change is one
section patch appended after the conversation so far, so the second request extends the first
byte for byte (the tools and the system parameter are unchanged). A server with a configured
description changes nothing at all.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.agent.session import AgentSession
from pi_context.model import ModelInfo
from pi_context.providers.anthropic import AnthropicModel
from pi_context.testing import SequentialIds
from tests.jsonview import as_json
from tests.mcp.conftest import WriteConfig, stdio_entry
from tests.providers.replay_server import ReplayServer, anthropic_sse, stream

MARKER = b'"cache_control":{"type":"ephemeral"}'


def reply(answer: str) -> Any:
    """A streamed Anthropic answer."""
    usage = {"input_tokens": 10, "output_tokens": 1}
    message: dict[str, Any] = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
    }
    message |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    delta = {"type": "text_delta", "text": answer}
    return stream(
        anthropic_sse(
            [
                {"type": "message_start", "message": message},
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
                {"type": "content_block_delta", "index": 0, "delta": delta},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
                {"type": "message_stop"},
            ]
        )
    )


def cache_prefix(body: bytes) -> list[bytes]:
    """Anthropic's cache prefix in order (tools, system, each message), breakpoints removed."""
    parsed = json.loads(body)
    parts = [parsed["tools"], parsed["system"], *parsed["messages"]]
    dumped = [json.dumps(p, separators=(",", ":")).encode() for p in parts]
    return [d.replace(b"," + MARKER, b"") for d in dumped]


def extends(cur: bytes, prev: bytes) -> bool:
    a, b = cache_prefix(prev), cache_prefix(cur)
    return len(b) > len(a) and b[: len(a)] == a


def tool_names(body: bytes) -> list[str]:
    return [t["name"] for t in json.loads(body)["tools"]]


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


async def test_a_late_server_costs_one_section_patch_and_keeps_the_prefix(
    tmp_path: Path,
    project_dir: Path,
    agent_dir: Path,
    write_config: WriteConfig,
    server: ReplayServer,
) -> None:
    gate = tmp_path / "go"
    wait = {"DEMO_WAIT_FILE": str(gate)}
    write_config(
        {
            "late": stdio_entry("late", exposure="deferred", env=wait),
            "described": stdio_entry(
                "described", exposure="deferred", description="Stable text", env=wait
            ),
        }
    )
    info = ModelInfo(
        provider="anthropic",
        id="claude-x",
        api="anthropic-messages",
        context_window=200_000,
        max_tokens=1000,
    )
    model = AnthropicModel(info, api_key="k", base_url=server.url)
    options: dict[str, Any] = {
        "model": model,
        "agent_dir": agent_dir,
        "trusted": True,
        "ids": SequentialIds(),
        "mcp": True,
    }
    sess = await AgentSession.create(cwd=project_dir, session_file=tmp_path / "s.jsonl", **options)
    try:
        server.add(reply("one"))
        await sess.run("first")  # neither server has connected: they wait for the gate
        gate.touch()
        assert sess.mcp is not None
        await sess.mcp.ready(None)
        assert {c.state for c in sess.mcp.connections.values()} == {"connected"}
        server.add(reply("two"))
        await sess.run("second")
        server.add(reply("three"))
        await sess.run("third")
    finally:
        await sess.aclose()
        await model.aclose()
    first, second, third = server.bodies()
    system = json.loads(first)["system"]
    text = "".join(block["text"] for block in system)
    assert (
        "- mcp__described (tool_search): Stable text\n- mcp__late (tool_search)\n</mcp_servers>"
        in text
    )
    assert (
        tool_names(first) == tool_names(second) == ["read", "bash", "edit", "write", "tool_search"]
    )
    # the second request extends the first: the update is appended, nothing before it moves
    assert extends(second, first)
    assert extends(third, second)
    assert cache_prefix(second)[1] == cache_prefix(first)[1]
    assert "- mcp__late (tool_search): Demo server late for the tests." in second.decode()
    # one patch was stored, with only that section
    patches = [m for m in as_json(sess.session.messages()) if m.get("role") == "system"][1:]
    assert len(patches) == 1
    assert list(patches[0]["sections"]) == ["mcp_servers"]
    assert "toolsAdded" not in patches[0]
