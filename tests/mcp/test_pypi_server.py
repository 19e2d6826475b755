"""A server nobody here wrote: ``mcp-server-time`` from PyPI (installed by the dev extra),
run over stdio through the agent, offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pi_context.agent.session import AgentSession
from pi_context.testing import ScriptedModel, SequentialIds, reply
from tests.jsonview import as_json
from tests.mcp.conftest import WriteConfig


async def test_mcp_server_time_through_the_agent(
    project_dir: Path, agent_dir: Path, write_config: WriteConfig
) -> None:
    write_config(
        {
            "time": {
                "command": sys.executable,
                "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                "exposure": "direct",
            }
        }
    )
    model = ScriptedModel([])
    model.add(
        reply(
            tool_calls=[
                (
                    "mcp__time__convert_time",
                    {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
                )
            ]
        ),
        reply("noon in UTC is 21:00 in Tokyo"),
    )
    sess = await AgentSession.create(
        cwd=project_dir,
        model=model,
        agent_dir=agent_dir,
        trusted=True,
        ids=SequentialIds(),
        mcp=True,
    )
    assert sess.mcp is not None
    sess.mcp.first_prompt_wait = 600  # no 10 s bound: a slow machine must not change the test
    try:
        events = await sess.run("what time is noon UTC in Tokyo?")
    finally:
        await sess.aclose()
    declared = [t["name"] for t in model.requests[0].tools]
    assert declared[4:6] == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    end = next(e for e in events if e.type == "tool_execution_end")
    result = as_json(end.to_json())["result"]
    assert result["details"] == {"server": "time", "tool": "convert_time"}
    converted = json.loads(result["content"][0]["text"])
    assert converted["target"]["timezone"] == "Asia/Tokyo"
    assert converted["target"]["datetime"].split("T")[1].startswith("21:00")
