"""A tool-set change across processes, on the Anthropic wire.

Each ``pictx -c -p`` is one process: the session is opened, one prompt runs, the process ends.
When a tool's declaration changes between two processes (here ``bash``'s, through
``bash.defaultTimeoutSeconds``), the session records a removal plus an addition, which replays
with that tool moved to the end of the loadout. The process that records the change must send
the tools in that replayed order, or the next process (which restores the loadout from the
transcript) sends them in another order and misses the whole cached prefix a second time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from pi_context.agent.session import AgentSession
from pi_context.model import ModelInfo
from pi_context.providers.anthropic import AnthropicModel
from pi_context.session import Session
from pi_context.testing import SequentialIds
from tests.providers.replay_server import ReplayServer, anthropic_sse, stream

MARKER = b'"cache_control":{"type":"ephemeral"}'


def reply(answer: str) -> Any:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-x",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    return stream(
        anthropic_sse(
            [
                start,
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": answer},
                },
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
                {"type": "message_stop"},
            ]
        )
    )


async def one_process(
    server: ReplayServer,
    project_dir: Path,
    path: Path,
    prompt: str,
    settings: dict[str, Any],
    tools: list[str] | None = None,
) -> None:
    """What one ``pictx -c -p PROMPT`` does: open (or create) the session, run, close."""
    info = ModelInfo(
        provider="anthropic",
        id="claude-x",
        api="anthropic-messages",
        context_window=200_000,
        max_tokens=1000,
    )
    model = AnthropicModel(info, api_key="k", base_url=server.url)
    common: dict[str, Any] = {
        "model": model,
        "agent_dir": project_dir.parent / "agent",
        "trusted": True,
        "ids": SequentialIds(start=len(path.read_text().splitlines()) if path.exists() else 1),
        "settings": settings,
    }
    try:
        if path.exists():
            sess = await AgentSession.open(path, **common)
        else:
            sess = await AgentSession.create(cwd=project_dir, session_file=path, **common)
        if tools is not None:
            sess.set_active_tools(tools)
        server.add(reply(f"answer to {prompt}"))
        await sess.run(prompt)
        sess.close()
    finally:
        await model.aclose()


def cache_prefix(body: bytes) -> list[bytes]:
    """Anthropic's cache prefix, in its order: tools, system, then each message, every part
    serialized as it was sent and without its cache breakpoints."""
    parsed = json.loads(body)
    parts = [parsed["tools"], parsed["system"], *parsed["messages"]]
    return [
        json.dumps(p, separators=(",", ":")).encode().replace(b"," + MARKER, b"") for p in parts
    ]


def extends(cur: bytes, prev: bytes) -> bool:
    """``cur``'s cache prefix starts with all of ``prev``'s (the new prompt only appends)."""
    a, b = cache_prefix(prev), cache_prefix(cur)
    return len(b) > len(a) and b[: len(a)] == a


def tool_names(body: bytes) -> list[str]:
    return [t["name"] for t in json.loads(body)["tools"]]


def system_entries(path: Path) -> list[dict[str, Any]]:
    return [
        cast(dict[str, Any], m)
        for m in (e.message for e in Session.open(path).entries if e.type == "message")
        if m is not None and m.get("role") == "system"
    ]


async def test_a_changed_tool_costs_one_miss_and_the_next_process_extends_it(
    tmp_path: Path, server: ReplayServer
) -> None:
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    (tmp_path / "agent").mkdir()
    path = tmp_path / "s.jsonl"
    before: dict[str, Any] = {}
    after = {"bash": {"defaultTimeoutSeconds": 30}}
    await one_process(server, project_dir, path, "first", before)
    await one_process(server, project_dir, path, "second", before)
    await one_process(server, project_dir, path, "third", after)  # bash's declaration changes
    await one_process(server, project_dir, path, "fourth", after)
    await one_process(server, project_dir, path, "fifth", after)
    bodies = server.bodies()
    assert len(bodies) == 5

    # A reopened session with nothing changed sends the same prefix as the process before.
    assert extends(bodies[1], bodies[0])

    # The change is recorded once, as pi records it: bash removed and added, nothing else.
    systems = system_entries(path)
    assert len(systems) == 2
    change = systems[1]
    assert [t["name"] for t in change.get("toolsAdded", [])] == ["bash"]
    assert change.get("toolsRemoved") == [{"name": "bash"}]
    assert "default 30" in json.dumps(change["toolsAdded"])
    # The tools section follows the new order in the same patch (no second patch later).
    assert list(change.get("sections", {})) == ["tools", "rules"]

    # The request that records it already declares the tools in their replayed order...
    assert tool_names(bodies[1]) == ["read", "bash", "edit", "write"]
    assert tool_names(bodies[2]) == ["read", "edit", "write", "bash"]
    # ...and every later process extends it byte for byte up to its last cache breakpoint.
    for n in (3, 4):
        assert extends(bodies[n], bodies[n - 1]), f"request {n} does not extend request {n - 1}"
    # The change itself costs what it must: the tools head the prefix, nothing before them.
    assert not extends(bodies[2], bodies[1])
    assert cache_prefix(bodies[2])[1] == cache_prefix(bodies[1])[1]  # the system param stays


async def test_narrowing_and_restoring_tools_records_and_sends_only_the_change(
    tmp_path: Path, server: ReplayServer
) -> None:
    project_dir = tmp_path / "proj"
    project_dir.mkdir()
    (tmp_path / "agent").mkdir()
    path = tmp_path / "s.jsonl"
    narrow = ["read", "bash", "edit"]
    await one_process(server, project_dir, path, "first", {})
    await one_process(server, project_dir, path, "second", {}, tools=narrow)
    await one_process(server, project_dir, path, "third", {})
    await one_process(server, project_dir, path, "fourth", {}, tools=[*narrow, "write"])
    await one_process(server, project_dir, path, "fifth", {})
    bodies = server.bodies()
    assert [tool_names(b) for b in bodies] == [
        ["read", "bash", "edit", "write"],
        narrow,
        narrow,
        ["read", "bash", "edit", "write"],
        ["read", "bash", "edit", "write"],
    ]
    changes = system_entries(path)[1:]
    delta = [([t["name"] for t in c.get("toolsAdded", [])], c.get("toolsRemoved")) for c in changes]
    assert delta == [([], [{"name": "write"}]), (["write"], None)]
    assert all(set(c.get("sections", {})) <= {"tools", "rules"} for c in changes)
    # Each change costs its one miss; the process after it extends it.
    assert not extends(bodies[1], bodies[0])
    assert extends(bodies[2], bodies[1])
    assert not extends(bodies[3], bodies[2])
    assert extends(bodies[4], bodies[3])
