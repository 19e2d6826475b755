"""What makes a run with MCP servers start early: the SDK's client parts imported alone, stdio
servers spawned before the SDK loads (and by the command line before pictx loads), and a
closing program that does not wait for its servers to exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_context.mcp import early
from pi_context.mcp.manager import McpManager
from pi_context.mcp.stdio import leave_process, spawn, stop_process
from tests.mcp.conftest import WriteConfig, stdio_entry


@pytest.fixture(autouse=True)
def _no_early_left() -> Iterator[None]:
    yield
    early.release_unclaimed()


CLIENT_ONLY = """
import json, sys
from pi_context.mcp.sdk import import_client
import_client(sys.argv[1])
loaded = sorted(m for m in sys.modules if m == "mcp" or m.startswith("mcp."))
import mcp
from mcp import ClientSession  # the package's own __init__ runs on the first missing name
print(json.dumps({"loaded": loaded, "complete": ClientSession is mcp.client.session.ClientSession}))
"""


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_client_imports_without_the_server_side(transport: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT_ONLY, transport],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    assert "mcp.client.session" in report["loaded"]
    assert [m for m in report["loaded"] if m.startswith(("mcp.server", "mcp.client.client"))] == []
    assert ("mcp.client.streamable_http" in report["loaded"]) == (transport == "http")
    assert report["complete"] is True


IGNORES_EOF = "import signal, time\nwhile True: time.sleep(0.05)\n"
IGNORES_TERM = (
    "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\nwhile True: time.sleep(0.05)\n"
)


def _python(code: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    with (tmp_path / "stderr").open("wb") as stderr:
        return spawn(
            sys.executable, ["-c", code], env=dict(os.environ), cwd=str(tmp_path), stderr=stderr
        )


def test_leaving_a_server_stops_it_without_the_caller(tmp_path: Path) -> None:
    proc = _python(IGNORES_EOF, tmp_path)
    leave_process(proc)  # returns at once; a detached helper sends SIGTERM after the grace
    _, status = os.waitpid(proc.pid, 0)
    assert os.WIFSIGNALED(status)
    assert os.WTERMSIG(status) == signal.SIGTERM


async def test_a_server_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    proc = _python(IGNORES_TERM, tmp_path)
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"  # its SIGTERM handler is in place
    await stop_process(proc)
    assert proc.returncode == -signal.SIGKILL


def _demo_config(agent_dir: Path, write_config: WriteConfig, **extra: object) -> None:
    write_config({"solo": stdio_entry("solo", exposure="direct", **extra)})


def test_the_command_line_starts_global_stdio_servers_only_for_agent_runs(
    agent_dir: Path, project_dir: Path, write_config: WriteConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    _demo_config(agent_dir, write_config)
    for argv in (["mcp", "list"], ["-p", "--no-mcp", "hi"], ["hello"], ["--help", "-p"]):
        early.spawn_for_command_line(argv, str(project_dir))
        assert early._EARLY == {}, argv
    (project_dir / ".pi").mkdir()
    (project_dir / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    early.spawn_for_command_line(["-p", "hi"], str(project_dir))
    assert early._EARLY == {}  # the project file (and its trust) decides: nothing early


async def test_the_session_takes_over_the_server_the_command_line_started(
    agent_dir: Path, project_dir: Path, write_config: WriteConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    _demo_config(agent_dir, write_config)
    early.spawn_for_command_line(["-p", "hi"], str(project_dir))
    [(started, _stderr)] = early._EARLY.values()
    manager = McpManager(cwd=str(project_dir), agent_dir=agent_dir, trusted=False)
    manager.start()
    try:
        assert early._EARLY == {}
        await manager.ready("solo")
        connection = manager.connections["solo"]
        assert connection.state == "connected"
        result = await connection.call_tool("echo", {"text": "early"})
        assert result["content"][0]["text"] == "echo: early"
        assert started.poll() is None  # the one started early is the one in use
    finally:
        await manager.aclose()
    assert started.poll() is not None


async def test_a_server_started_for_another_configuration_is_stopped(
    agent_dir: Path, project_dir: Path, write_config: WriteConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    _demo_config(agent_dir, write_config)
    early.spawn_for_command_line(["-p", "hi"], str(project_dir))
    [(started, _stderr)] = early._EARLY.values()
    _demo_config(agent_dir, write_config, env={"DEMO_NAME": "other"})  # changed meanwhile
    manager = McpManager(cwd=str(project_dir), agent_dir=agent_dir, trusted=False)
    manager.start()
    try:
        assert early._EARLY == {}
        _, status = os.waitpid(started.pid, 0)  # stdin closed: it exits (or gets SIGTERM)
        assert os.WIFEXITED(status) or os.WTERMSIG(status) == signal.SIGTERM
        await manager.ready("solo")
        assert manager.connections["solo"].state == "connected"
    finally:
        await manager.aclose()


def test_the_command_line_spawns_what_the_configuration_accepts_of_the_global_file(
    agent_dir: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pi_context.mcp import stdio
    from pi_context.mcp.config import load_mcp_config

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("TOKEN_FOR_TEST", "t0k")
    servers = {
        "plain": {"command": "srv", "args": ["a", "~/b"], "cwd": "sub/."},
        "with-env": {"command": "~/bin/srv", "env": {"K": "v", "T": "${TOKEN_FOR_TEST}"}},
        "with_env": {"command": "clash"},  # the same name once "-" is "_": rejected
        "bad-exposure": {"command": "srv", "exposure": "sometimes"},
        "bad-args": {"command": "srv", "args": "a b"},
        "off": {"command": "srv", "enabled": False},
        "shell-secret": {"command": "srv", "env": {"K": "!echo secret"}},
        "web": {"url": "http://127.0.0.1:1/mcp"},
        "bad name": {"command": "srv"},
        "typed": {"type": "stdio", "command": "srv2", "exposure": "codemode-deferred"},
    }
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    spawned: list[tuple[str, tuple[str, ...], str, dict[str, str]]] = []

    def record(
        command: str, args: list[str], *, env: dict[str, str], cwd: str, stderr: object
    ) -> subprocess.Popen[bytes]:
        extra = {k: v for k, v in env.items() if os.environ.get(k) != v}
        spawned.append((command, tuple(args), cwd, extra))
        raise OSError("not started in this test")

    monkeypatch.setattr(stdio, "spawn", record)
    early.spawn_for_command_line(["-p", "hi"], str(project_dir))
    assert early._EARLY == {}  # nothing started: every spawn failed
    config = load_mcp_config(agent_dir, project_dir, trusted=False)
    home = str(Path.home())
    expected = [
        (
            str(s.raw["command"]),
            tuple(s.raw.get("args") or ()),
            str(project_dir / str(s.raw.get("cwd") or ".")),
        )
        for s in config.servers
        if s.enabled and s.transport == "stdio" and s.name != "shell-secret"
    ]
    assert [s[:3] for s in spawned] == expected
    assert spawned == [
        ("srv", ("a", f"{home}/b"), str(project_dir / "sub"), {}),
        (f"{home}/bin/srv", (), str(project_dir), {"K": "v", "T": "t0k"}),
        ("srv2", (), str(project_dir), {}),
    ]


def test_a_global_file_the_configuration_would_not_read_starts_nothing_early(
    agent_dir: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    for text in (
        '{"mcpServers": {"a": {"command": "srv", "timeout": NaN}}}',
        '{"mcpServers": [{"command": "srv"}]}',
        '{"mcpServers": {"a": {"command": "srv"}',
    ):
        (agent_dir / "mcp.json").write_text(text)
        early.spawn_for_command_line(["-p", "hi"], str(project_dir))
        assert early._EARLY == {}, text


EARLY_IMPORTS = """
import json, sys
from pi_context.mcp import early
early.spawn_for_command_line(["-p", "hi"], sys.argv[1])
heavy = ("orjson", "msgspec", "tempfile", "typing", "pi_context.mcp.config", "mcp_types")
print(json.dumps({"started": len(early._EARLY), "heavy": [m for m in heavy if m in sys.modules]}))
"""


def test_the_early_spawn_imports_nothing_heavy_before_the_server_starts(
    agent_dir: Path, project_dir: Path
) -> None:
    entry = {"command": "sleep", "args": ["30"], "env": {"A": "b"}}
    (agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"s": entry}}))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)}
    done = subprocess.run(
        [sys.executable, "-c", EARLY_IMPORTS, str(project_dir)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == {"started": 1, "heavy": []}
