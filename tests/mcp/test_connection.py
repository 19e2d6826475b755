"""One connection to a real server (the demo server over stdio and streamable HTTP)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.mcp.config import ServerConfig
from pi_context.mcp.connection import McpConnection, McpRequestError
from tests.mcp.conftest import DEMO, stdio_entry


def connection(agent_dir: Path, raw: dict[str, Any], name: str = "demo") -> McpConnection:
    return McpConnection(
        ServerConfig(name, raw, "global", "mcp.json"), cwd=str(agent_dir), agent_dir=agent_dir
    )


@pytest.fixture
def http_url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(DEMO), "http", str(port)],
        env={"DEMO_NAME": "web", "PATH": "/usr/bin:/bin"},
    )
    try:
        while True:  # until it listens (the test's own timeout bounds this)
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("the HTTP demo server exited") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait()


async def test_http_server(agent_dir: Path, http_url: str) -> None:
    conn = connection(agent_dir, {"url": http_url, "headers": {"X-Test": "1"}}, "web")
    await conn.connect()
    try:
        assert (conn.state, conn.error) == ("connected", None)
        assert conn.instructions == "Demo server web for the tests."
        assert conn.has_resources
        assert [t["name"] for t in conn.tools][:2] == ["echo", "weather"]
        result = await conn.call_tool("echo", {"text": "over http"})
        assert result["content"] == [{"type": "text", "text": "echo: over http"}]
        page = await conn.list_page("resources", None)
        assert [r["uri"] for r in page["resources"]] == ["file:///notes.txt", "file:///data.bin"]
    finally:
        await conn.close()
    assert conn.state == "closed"


async def test_progress_rearms_the_timeout_and_silence_times_out(agent_dir: Path) -> None:
    conn = connection(agent_dir, stdio_entry("demo"))
    await conn.connect()
    # the timeout is read per request: shorten it once connected (start-up is slower)
    conn.config = ServerConfig("demo", {**stdio_entry("demo"), "timeout": 2}, "global", "x")
    try:
        seen: list[tuple[float, float | None, str | None]] = []
        # six steps of half a second: longer than the timeout, but each reports progress
        result = await conn.call_tool("slow", {"steps": 6, "delay": 0.5}, lambda *a: seen.append(a))
        assert result["content"][0]["text"] == "done after 6 steps"
        assert seen == [(float(i), 6.0, f"step {i}") for i in range(1, 7)]
        with pytest.raises(McpRequestError, match=r"^MCP request timed out after 2000ms$"):
            await conn.request(_never)
    finally:
        await conn.close()


async def _never(session: Any, progress: Any) -> Any:
    import asyncio

    await asyncio.Event().wait()


async def test_failures_carry_stderr_and_spawn_errors(agent_dir: Path) -> None:
    crash = connection(
        agent_dir,
        stdio_entry("crash", env={"DEMO_STDERR": "server crash starting", "DEMO_EXIT": "1"}),
    )
    await crash.connect()
    assert crash.state == "failed"
    assert crash.error == "MCP connection closed\nserver crash starting"
    missing = connection(agent_dir, {"command": "/nonexistent/binary"})
    await missing.connect()
    assert (missing.state, missing.error) == ("failed", "spawn /nonexistent/binary ENOENT")
    secret = connection(
        agent_dir, {**stdio_entry("s"), "env": {"KEY": "${PICTX_TEST_UNSET_VARIABLE}"}}
    )
    await secret.connect()
    assert secret.error == (
        'Failed to resolve MCP server "demo" env "KEY" from environment variable: PICTX_TEST_UNSET_VARIABLE'
    )


async def test_a_dropped_server_reconnects_on_the_next_call(agent_dir: Path) -> None:
    conn = connection(agent_dir, stdio_entry("demo"))
    await conn.connect()
    try:
        with pytest.raises(McpRequestError, match=r"^MCP connection closed$"):
            await conn.call_tool("crash", {})
        assert conn.state == "disconnected"
        result = await conn.call_tool("echo", {"text": "again"})
        assert result["content"][0]["text"] == "echo: again"
        assert conn.state == "connected"
    finally:
        await conn.close()


async def test_tool_list_changes_and_log_messages(agent_dir: Path) -> None:
    import asyncio

    changed = asyncio.Event()
    conn = McpConnection(
        ServerConfig("demo", stdio_entry("demo"), "global", "x"),
        cwd=str(agent_dir),
        agent_dir=agent_dir,
        on_tools_changed=lambda _c: changed.set(),
    )
    await conn.connect()
    try:
        assert "extra" not in [t["name"] for t in conn.tools]
        await conn.call_tool("grow", {})
        await changed.wait()
        assert "extra" in [t["name"] for t in conn.tools]
        await conn.call_tool("log", {})
        log = (agent_dir / "mcp.log").read_text()
        assert log.endswith(" [demo] info a log message from the tool\n")
    finally:
        await conn.close()
