"""Editing mcp.json (``pictx mcp add/remove``) and listing servers (``pictx mcp list``)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_context.mcp.files import add_server, list_servers, remove_server
from tests.mcp.conftest import WriteConfig, stdio_entry


def test_add_and_remove_keep_the_rest_of_the_file(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "mcp.json"
    assert add_server(path, "a", {"command": "x"}) is False
    assert (
        path.read_text()
        == '{\n  "mcpServers": {\n    "a": {\n      "command": "x"\n    }\n  }\n}\n'
    )
    path.write_text('{\n    "other": [1],\n    "mcpServers": {"a": {"command": "x"}}\n}')
    assert add_server(path, "a", {"url": "http://127.0.0.1:1/mcp"}) is True
    data = json.loads(path.read_text())
    assert data == {"other": [1], "mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp"}}}
    assert path.read_text().startswith('{\n    "other"')  # the file's own indentation
    assert remove_server(path, "a") is True
    assert remove_server(path, "a") is False
    assert json.loads(path.read_text()) == {"other": [1], "mcpServers": {}}


async def test_list_connects_enabled_servers(
    agent_dir: Path, project_dir: Path, write_config: WriteConfig
) -> None:
    write_config(
        {
            "on": stdio_entry("on", exposure="deferred", toolExposure={"echo": "direct"}),
            "off": {**stdio_entry("off"), "enabled": False},
            "gone": {"command": "/nonexistent/binary"},
        }
    )
    _config, listed = await list_servers(agent_dir, str(project_dir), trusted=True)
    on, off, gone = listed
    assert on.state == "connected"
    assert on.lines()[0] == f"on: connected, {len(on.tools)} tools (deferred, global)"
    assert "echo [direct]" in on.lines()[2]
    assert on.lines()[-1] == "  offers resources"
    assert off.lines()[0] == "off: disabled (codemode, global)"
    assert gone.to_json()["error"] == "spawn /nonexistent/binary ENOENT"
    assert gone.lines()[-1] == "    spawn /nonexistent/binary ENOENT"
