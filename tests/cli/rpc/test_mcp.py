"""MCP in ``pictx --mode rpc``: ``/mcp`` is a command like pi's (``get_commands``, a notify
answer, no model request) and start-up problems arrive as a notify, as in pi."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.rpc.conftest import RpcWorld

DEMO = Path(__file__).parents[2] / "mcp" / "servers" / "demo_server.py"


def test_mcp_command_and_startup_notice(rpc_world: RpcWorld) -> None:
    servers = {
        "demo": {
            "command": sys.executable,
            "args": [str(DEMO), "stdio"],
            "env": {"DEMO_NAME": "demo"},
            "exposure": "deferred",
        },
        "gone": {"command": "/nonexistent/binary"},
    }
    (rpc_world.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    rpc = rpc_world.spawn("--mode", "rpc")
    notice = rpc.until(lambda r: r.get("method") == "notify")[-1]
    assert notice["message"] == (
        "MCP servers need attention:\n  gone: failed: spawn /nonexistent/binary ENOENT\n\n"
        "Run /mcp to fix."
    )
    assert notice["notifyType"] == "warning"
    commands = rpc.call({"id": "c", "type": "get_commands"})["data"]["commands"]
    mcp = next(c for c in commands if c["name"] == "mcp")
    assert mcp["source"] == "extension"
    assert mcp["sourceInfo"] == {
        "path": "builtin:mcp",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    }
    rpc.send({"id": "p", "type": "prompt", "message": "/mcp"})
    records = rpc.until(lambda r: r.get("id") == "p")  # the answer comes before the response
    assert records[-1]["data"] == {"disposition": "handled"}
    status = next(r for r in records if r.get("method") == "notify")
    assert status["notifyType"] == "info"
    assert status["message"].splitlines() == [
        "demo: connected, 8 tools (deferred)",
        "gone: failed (codemode)",
        "    spawn /nonexistent/binary ENOENT",
    ]
    rpc.send({"id": "r", "type": "prompt", "message": "/mcp reconnect demo"})
    again = next(r for r in rpc.until(lambda r: r.get("id") == "r") if r.get("method") == "notify")
    assert again["message"] == 'Reconnected to MCP server "demo" (connected · 8 tools · resources).'
    rpc.send({"id": "u", "type": "prompt", "message": "/mcp what now"})
    usage = next(r for r in rpc.until(lambda r: r.get("id") == "u") if r.get("method") == "notify")
    assert usage["message"].startswith("Usage: /mcp, /mcp login [server]")
    assert rpc_world.server.bodies() == []  # no model request
    assert rpc.close() == 0
