"""Without a terminal (a pipe as input) the picker commands keep their text forms, and the
host methods behind the pickers do what the pickers promise."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.cli.interactive.slash import run_slash
from pi_context.model import ModelInfo
from pi_context.testing import ScriptedModel, reply

THINKER = ModelInfo(
    provider="scripted",
    id="thinker",
    api="scripted",
    context_window=100_000,
    max_tokens=1000,
    reasoning=True,
)


async def _shell(
    tmp_path: Path, pipe: PipeInput, model: ScriptedModel
) -> tuple[InteractiveShell, io.StringIO]:
    (tmp_path / "agent").mkdir(exist_ok=True)
    config = AppConfig(
        cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=tmp_path / "sessions"
    )
    agent = RunningAgent(await config.create(model), config)
    screen = io.StringIO()
    console = Console(file=screen, width=200, force_terminal=False, color_system=None)
    shell = InteractiveShell(agent, console=console, pt_input=pipe, pt_output=DummyOutput())
    assert not shell.pickers  # a pipe is not a terminal
    return shell, screen


async def test_thinking_text_forms(tmp_path: Path, pipe: PipeInput) -> None:
    shell, screen = await _shell(tmp_path, pipe, ScriptedModel([], model_info=THINKER))
    await run_slash(shell, "/thinking LOW")
    assert "Thinking level: low" in screen.getvalue()
    await run_slash(shell, "/thinking max")
    assert 'Unknown thinking level "max". Available levels: off, minimal, low, medium, high.' in (
        screen.getvalue()
    )
    pipe.send_text("high\r")
    await run_slash(shell, "/thinking")
    assert "Available levels: off, minimal, low, medium, high" in screen.getvalue()
    assert shell.agent.thinking_level() == "high"


async def test_thinking_on_a_model_without_reasoning(tmp_path: Path, pipe: PipeInput) -> None:
    shell, screen = await _shell(tmp_path, pipe, ScriptedModel([]))
    await run_slash(shell, "/thinking high")
    assert 'Unknown thinking level "high". Available levels: off.' in screen.getvalue()


async def test_fork_text_form_lists_every_user_message(tmp_path: Path, pipe: PipeInput) -> None:
    model = ScriptedModel([reply("A1"), reply("A2")])
    shell, screen = await _shell(tmp_path, pipe, model)
    await run_slash(shell, "/fork")
    assert "No messages to fork from" in screen.getvalue()
    await shell.send("first")
    await shell.send("second")
    original = shell.agent.session.file_path
    pipe.send_text("1\r")
    await run_slash(shell, "/fork")
    text = screen.getvalue()
    assert "  1 first" in text
    assert "  2 second" in text
    assert "Forked to new session" in text
    assert shell.agent.session.file_path != original
    assert shell._editor == "first"


async def test_scoped_models_text_form_and_hotkeys(tmp_path: Path, pipe: PipeInput) -> None:
    shell, screen = await _shell(tmp_path, pipe, ScriptedModel([]))
    pipe.send_text("nobody/none\r")
    await run_slash(shell, "/scoped-models")
    assert "Unknown model: nobody/none" in screen.getvalue()
    await run_slash(shell, "/hotkeys")
    assert "Keyboard shortcuts" in screen.getvalue()
    assert "Ctrl+L" in screen.getvalue()


async def test_host_saves_scope_thinking_and_renames_and_deletes_sessions(
    tmp_path: Path, pipe: PipeInput
) -> None:
    model = ScriptedModel([reply("A1"), reply("A2")], model_info=THINKER)
    shell, _ = await _shell(tmp_path, pipe, model)
    agent = shell.agent
    agent.set_model_scope(["openai/gpt-5"], save=False)
    assert agent.model_scope() == ["openai/gpt-5"]
    assert not (tmp_path / "agent" / "settings.json").exists()
    agent.set_model_scope(["openai/gpt-5", "anthropic/claude-opus-4-5"], save=True)
    assert agent.set_thinking_level("xhigh", save=True) == "high"  # clamped; requested saved
    settings = json.loads((tmp_path / "agent" / "settings.json").read_text())
    assert settings == {
        "enabledModels": ["openai/gpt-5", "anthropic/claude-opus-4-5"],
        "defaultThinkingLevel": "xhigh",
    }
    await shell.send("first")
    first = agent.session.file_path
    assert first is not None
    shell.switch(await agent.new_session())
    await shell.send("second")
    agent = shell.agent
    [summary_second, summary_first] = agent.sessions_here()
    assert summary_first.path == first
    assert summary_first.first_message == "first"
    agent.rename_session(first, "Renamed")
    names = {s.path: s.name for s in agent.sessions_here()}
    assert names == {first: "Renamed", summary_second.path: None}
    with pytest.raises(Exception, match="in use"):
        agent.delete_session(summary_second.path)
    agent.delete_session(first)
    assert not first.exists()
    assert [s.path for s in agent.sessions_here()] == [summary_second.path]


async def test_resume_text_form_continues_a_session_whose_folder_is_gone(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell, screen = await _shell(tmp_path, pipe, ScriptedModel([]))
    sessions = tmp_path / "sessions"
    sessions.mkdir(exist_ok=True)
    header = {
        "type": "session",
        "version": 3,
        "id": "gone-1",
        "timestamp": "2026-01-05T10:00:00.000Z",
        "cwd": str(tmp_path / "deleted"),
    }
    user = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": "2026-01-05T10:00:01.000Z",
        "message": {"role": "user", "content": "an old question", "timestamp": 1},
    }
    old = sessions / "2026-01-05T10-00-00-000Z_gone-1.jsonl"
    old.write_text(json.dumps(header) + "\n" + json.dumps(user) + "\n", encoding="utf-8")
    pipe.send_text("1\r1\r")  # the first session; "Continue in <here>"
    await run_slash(shell, "/resume")
    text = screen.getvalue()
    assert "an old question" in text
    assert "The session's folder does not exist any more" in text
    assert f"Continue in {tmp_path} (asks again next time)" in text
    assert "Resumed 2026-01-05T10-00-00-000Z_gone-1.jsonl." in text
    assert shell.agent.session.file_path == old
    assert shell.cwd == tmp_path
    assert shell.agent.project_trust().directory == str(tmp_path)  # its tools run here
    assert json.loads(old.read_text().splitlines()[0])["cwd"] == str(tmp_path / "deleted")
