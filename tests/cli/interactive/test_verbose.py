"""``--verbose``: the interactive header also lists what the session loaded."""

from __future__ import annotations

import io
from pathlib import Path

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.app.model_scope import ScopeEntry
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.testing import ScriptedModel


async def _banner(tmp_path: Path, pipe: PipeInput, *, verbose: bool) -> str:
    agent_dir = tmp_path / "agent"
    (agent_dir / "skills" / "greet").mkdir(parents=True, exist_ok=True)
    (agent_dir / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Say hello.\n---\nSay hello.\n", encoding="utf-8"
    )
    (agent_dir / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
    config = AppConfig(
        cwd=str(tmp_path),
        agent_dir=agent_dir,
        session_dir=tmp_path / "sessions",
        scope=(ScopeEntry("openai/gpt-5", None),),
    )
    agent = RunningAgent(await config.create(ScriptedModel([])), config)
    screen = io.StringIO()
    console = Console(file=screen, width=300, force_terminal=False, color_system=None)
    shell = InteractiveShell(
        agent, console=console, pt_input=pipe, pt_output=DummyOutput(), verbose=verbose
    )
    shell._banner()
    agent.close()
    return screen.getvalue()


async def test_verbose_lists_what_the_session_loaded(tmp_path: Path, pipe: PipeInput) -> None:
    text = await _banner(tmp_path, pipe, verbose=True)
    assert f"context files: {tmp_path / 'agent' / 'AGENTS.md'}" in text
    assert "skills: greet" in text
    assert "extensions: none" in text
    assert "model scope: openai/gpt-5" in text
    assert f"project: {tmp_path} (" in text


async def test_without_verbose_the_header_stays_short(tmp_path: Path, pipe: PipeInput) -> None:
    text = await _banner(tmp_path, pipe, verbose=False)
    assert "pictx ·" in text
    assert "context files:" not in text
    assert "skills:" not in text
