"""``/import <path>`` and ``/debug`` as pi 1.6.0 has them, driven through a pipe input."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context import session_dirs
from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.testing import ScriptedModel, reply


async def _shell(
    tmp_path: Path, pipe: PipeInput, sessions: str, model: ScriptedModel
) -> tuple[InteractiveShell, io.StringIO]:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    config = AppConfig(cwd=str(tmp_path), agent_dir=agent_dir, session_dir=tmp_path / sessions)
    agent = RunningAgent(await config.create(model), config)
    screen = io.StringIO()
    console = Console(file=screen, width=200, force_terminal=False, color_system=None)
    shell = InteractiveShell(agent, console=console, pt_input=pipe, pt_output=DummyOutput())
    return shell, screen


async def _source_session(tmp_path: Path, pipe: PipeInput) -> Path:
    """A saved conversation in another session folder."""
    shell, _ = await _shell(tmp_path, pipe, "elsewhere", ScriptedModel([reply("hi there")]))
    await shell.send("hello")
    path = shell.agent.session.file_path
    shell.agent.close()
    assert path is not None
    assert path.is_file()
    return path


async def _run(shell: InteractiveShell) -> int:
    # a bound that only matters when a key went missing (the shell would wait forever)
    return await asyncio.wait_for(shell.run(), 30)


async def test_import_copies_the_file_here_and_opens_it(tmp_path: Path, pipe: PipeInput) -> None:
    source = await _source_session(tmp_path, pipe)
    original = source.read_bytes()
    shell, screen = await _shell(tmp_path, pipe, "here", ScriptedModel([]))
    pipe.send_text(f"/import {source}\r1\r/import {source}\r1\r/quit\r")
    assert await _run(shell) == 0
    first = tmp_path / "here" / source.name
    second = tmp_path / "here" / f"{source.stem}-1.jsonl"
    assert first.read_bytes() == original == second.read_bytes() == source.read_bytes()
    assert shell.agent.session.file_path == second
    header, source_header = session_dirs.read_header(second), session_dirs.read_header(source)
    assert header is not None
    assert source_header is not None
    assert header["id"] == source_header["id"]
    assert f"Session imported from: {source}" in screen.getvalue()
    shell.agent.close()


async def test_import_refused_or_cancelled_changes_nothing(tmp_path: Path, pipe: PipeInput) -> None:
    source = await _source_session(tmp_path, pipe)
    (tmp_path / "notes.jsonl").write_text("not a session\n", encoding="utf-8")
    shell, screen = await _shell(tmp_path, pipe, "here", ScriptedModel([]))
    before = shell.agent.session.file_path
    pipe.send_text(f"/import\r/import {tmp_path / 'missing.jsonl'}\r/import notes.jsonl\r")
    pipe.send_text(f"/import {source}\r2\r/quit\r")
    assert await _run(shell) == 0
    text = screen.getvalue()
    assert "Usage: /import <path.jsonl>" in text
    assert "no such file" in text
    assert "is not a session file" in text
    assert "Import cancelled" in text
    assert not (tmp_path / "here" / source.name).exists()
    assert shell.agent.session.file_path == before
    shell.agent.close()


async def test_debug_writes_the_log_to_the_agent_dir_without_keys(
    tmp_path: Path, pipe: PipeInput, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    shell, screen = await _shell(tmp_path, pipe, "here", ScriptedModel([reply("fine")]))
    await shell.send("how are you")
    pipe.send_text("/debug\r/quit\r")
    assert await _run(shell) == 0
    log = (tmp_path / "agent" / "pictx-debug.log").read_text(encoding="utf-8")
    assert log.startswith("Debug output at ")
    messages = log.split("=== Agent messages (JSONL) ===\n", 1)[1]
    assert '"how are you"' in messages
    assert '"fine"' in messages
    assert "sk-ant-very-secret" not in log
    assert "Debug log written" in screen.getvalue()
    shell.agent.close()
