"""The /hotkeys table against the key bindings the interactive prompt really has."""

from __future__ import annotations

import io
from pathlib import Path

from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.hotkeys import hotkeys_table, key_name, listed_keys
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.testing import ScriptedModel


async def _bound_keys(tmp_path: Path, pipe: PipeInput) -> set[str]:
    config = AppConfig(cwd=str(tmp_path), agent_dir=tmp_path / "agent", session_dir=None)
    agent = RunningAgent(await config.create(ScriptedModel([])), config)
    shell = InteractiveShell(
        agent, console=Console(file=io.StringIO()), pt_input=pipe, pt_output=DummyOutput()
    )
    bindings = shell._prompt.key_bindings
    assert bindings is not None
    names = {
        key_name(tuple(str(k.value) if hasattr(k, "value") else str(k) for k in b.keys))
        for b in bindings.bindings
    }
    agent.close()
    return names


async def test_every_key_binding_of_the_prompt_is_in_the_table(
    tmp_path: Path, pipe: PipeInput
) -> None:
    bound = await _bound_keys(tmp_path, pipe)
    # the bindings pictx adds (prompt_toolkit's own editing keys are not ours to list)
    assert {"Ctrl+P", "Shift+Ctrl+P", "Alt+P", "Ctrl+L", "Shift+Tab", "Ctrl+V", "Alt+V"} <= bound
    assert sorted(bound - listed_keys()) == []


def test_key_names() -> None:
    assert key_name(("c-p",)) == "Ctrl+P"
    assert key_name(("escape", "p")) == "Alt+P"
    assert key_name(("escape", "escape")) == "Esc"  # the double Esc, read as one pair
    assert key_name(("escape", "c-m")) == "Alt+Enter"
    assert key_name(("s-tab",)) == "Shift+Tab"
    assert "Alt+Enter" in listed_keys()


def test_the_table_prints_every_group() -> None:
    screen = io.StringIO()
    Console(file=screen, width=120, color_system=None).print(hotkeys_table())
    assert "Ctrl+V, Alt+V" in screen.getvalue()
