"""``pictx`` with MCP servers: the agent's flags, ``pictx mcp``, and no server left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.helpers import PictxInProcess, sessions_of

DEMO = Path(__file__).parents[2] / "mcp" / "servers" / "demo_server.py"
Replies = Callable[[list[Any]], str]


def entry(name: str, **extra: Any) -> dict[str, Any]:
    env = {"DEMO_NAME": name, **extra.pop("env", {})}
    return {"command": sys.executable, "args": [str(DEMO), "stdio"], "env": env, **extra}


def write_config(project_as_cwd: Path, servers: dict[str, Any]) -> Path:
    path = project_as_cwd.parent / "agent" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def session_messages(project_as_cwd: Path) -> list[dict[str, Any]]:
    (path,) = sessions_of(project_as_cwd.parent / "agent", project_as_cwd)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"] for e in lines if e.get("type") == "message"]


def declared(project_as_cwd: Path) -> list[str]:
    names: list[str] = []
    for m in session_messages(project_as_cwd):
        if m["role"] == "system":
            removed = {t["name"] for t in m.get("toolsRemoved") or ()}
            names = [n for n in names if n not in removed] + [
                t["name"] for t in m.get("toolsAdded") or ()
            ]
    return names


# The first request waits at most 10 s for direct servers (as pi's does), so what it declares
# depends on the machine's speed; these tests reach the tools through tool_search, which waits
# for every server, so they do not.


def test_print_mode_loads_and_calls_an_mcp_tool(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    write_config(project_as_cwd, {"lazy": entry("lazy", exposure="deferred", description="Echoes")})
    spec = replies(
        [
            {"toolCalls": [{"name": "tool_search", "arguments": {"query": "echo", "limit": 1}}]},
            {"toolCalls": [{"name": "mcp__lazy__echo", "arguments": {"text": "hi"}}]},
            {"text": "done"},
        ]
    )
    run = pictx_in_process("-p", "--model", spec, "go")
    assert run.code == 0, run.err
    assert run.out.strip() == "done"
    assert declared(project_as_cwd) == [
        "read",
        "bash",
        "edit",
        "write",
        "tool_search",
        "mcp__lazy__echo",
    ]
    results = [m for m in session_messages(project_as_cwd) if m["role"] == "toolResult"]
    assert results[1]["content"] == [{"type": "text", "text": "echo: hi"}]
    first = session_messages(project_as_cwd)[0]
    assert first["sections"]["mcp_servers"].endswith(
        "- mcp__lazy (tool_search): Echoes\n</mcp_servers>"
    )


def test_no_mcp(project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies) -> None:
    write_config(
        project_as_cwd, {"d": entry("d", exposure="direct"), "l": entry("l", exposure="deferred")}
    )
    run = pictx_in_process("-p", "--no-mcp", "--model", replies([{"text": "a"}]), "x")
    assert run.code == 0, run.err
    assert declared(project_as_cwd) == ["read", "bash", "edit", "write"]
    assert "mcp_servers" not in json.dumps(session_messages(project_as_cwd)[0])


def test_tools_patterns_select_mcp_tools(
    project_as_cwd: Path, pictx_in_process: PictxInProcess, replies: Replies
) -> None:
    write_config(
        project_as_cwd, {"l": entry("l", exposure="deferred"), "m": entry("m", exposure="deferred")}
    )
    spec = replies(
        [
            {"toolCalls": [{"name": "tool_search", "arguments": {"query": "echo"}}]},
            {"text": "a"},
        ]
    )
    run = pictx_in_process("-p", "--tools", "read,tool_search,mcp__l__*", "--model", spec, "x")
    assert run.code == 0, run.err
    # only the matching server's tools exist, so only they can be loaded
    loaded = declared(project_as_cwd)
    assert loaded[:2] == ["read", "tool_search"]
    assert loaded[2:]
    assert all(n.startswith("mcp__l__") for n in loaded[2:])


def test_mcp_add_list_remove(project_as_cwd: Path, pictx_in_process: PictxInProcess) -> None:
    agent = project_as_cwd.parent / "agent"
    add = pictx_in_process(
        "mcp",
        "add",
        "demo",
        "--exposure",
        "deferred",
        "--env",
        "DEMO_NAME=demo",
        "--",
        sys.executable,
        str(DEMO),
        "stdio",
    )
    assert add.code == 0, add.err
    assert add.out.splitlines() == [
        f'Added global MCP server "demo" in {agent / "mcp.json"}.',
        "Check it with: pictx mcp list",
    ]
    listed = pictx_in_process("mcp", "list")
    assert listed.code == 0, listed.out + listed.err
    assert listed.out.splitlines()[0] == "demo: connected, 8 tools (deferred, global)"
    as_json = json.loads(pictx_in_process("mcp", "list", "--json").out)
    assert as_json["servers"][0]["state"] == "connected"
    assert as_json["errors"] == []
    bad = pictx_in_process("mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--env", "A=b")
    assert bad.code == 1
    assert "--env only applies to stdio servers." in bad.err
    assert pictx_in_process("mcp", "remove", "demo").code == 0
    missing = pictx_in_process("mcp", "remove", "demo")
    assert missing.code == 1
    assert f'No global MCP server named "demo" in {agent / "mcp.json"}.' in missing.err
    (agent / "mcp.json").write_text('{"mcpServers": {"x": {}}}')
    broken = pictx_in_process("mcp", "list")
    assert broken.code == 1
    assert broken.out.splitlines() == [
        f'config error: {agent / "mcp.json"}: server "x" needs either "command" (stdio) or "url" (streamable HTTP)'
    ]


def _live(mark: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as env, open(f"/proc/{pid}/stat") as stat:
                if (
                    f"DEMO_MARK={mark}".encode() in env.read().split(b"\0")
                    and stat.read().split()[2] != "Z"
                ):
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_sigterm_leaves_no_server_process(project_as_cwd: Path, replies: Replies) -> None:
    mark = str(project_as_cwd)
    write_config(
        project_as_cwd,
        {
            "d": entry("d", exposure="direct", env={"DEMO_MARK": mark}),
            "l": entry("l", exposure="deferred", env={"DEMO_MARK": mark}),
        },
    )
    spec = replies([{"text": "too late", "delay": 600}])
    with subprocess.Popen(
        [sys.executable, "-m", "pi_context.cli.main", "--mode", "json", "--model", spec, "wait"],
        cwd=project_as_cwd,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:  # the first request waits for the direct server
            if '"message_end"' in line and '"role":"user"' in line:
                break
        while len(_live(mark)) < 2:  # the deferred one connects in the background
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143
    assert "Traceback" not in err
    assert _live(mark) == []
