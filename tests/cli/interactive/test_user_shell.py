"""``!command`` / ``!!command`` at the prompt: run with the configured shell, shown live,
recorded as a ``bashExecution`` message (``!!`` kept out of the model's context)."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.cli.interactive.user_shell import LiveLines, parse_user_command
from pi_context.testing import ScriptedModel, reply


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("!ls -la", ("ls -la", False)),
        ("  ! git status ", ("git status", False)),
        ("!!make", ("make", True)),
        ("!! make  ", ("make", True)),
        ("!", None),
        ("!!", None),
        ("!! ", None),
        ("hello !ls", None),
        ("/help", None),
    ],
)
def test_which_lines_are_shell_commands(line: str, expected: tuple[str, bool] | None) -> None:
    assert parse_user_command(line) == expected


def test_live_lines_show_whole_lines_as_a_terminal_leaves_them() -> None:
    lines = LiveLines()
    assert lines.feed("one\ntw") == ["one"]
    assert lines.feed("o\r\n10%\r99%\n\x1b[31mred\x1b[0m\n") == ["two", "99%", "red"]
    assert lines.feed("tail") == []
    assert lines.flush() == ["tail"]
    assert lines.flush() == []


async def _shell(
    tmp_path: Path,
    pipe: PipeInput,
    settings: dict[str, Any] | None = None,
    model: ScriptedModel | None = None,
) -> tuple[InteractiveShell, io.StringIO, ScriptedModel]:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    if settings is not None:
        (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    config = AppConfig(cwd=str(project), agent_dir=agent_dir, session_dir=tmp_path / "sessions")
    model = model or ScriptedModel([reply("ok")])
    agent = RunningAgent(await config.create(model), config)
    screen = io.StringIO()
    console = Console(file=screen, width=200, force_terminal=False, color_system=None)
    shell = InteractiveShell(agent, console=console, pt_input=pipe, pt_output=DummyOutput())
    return shell, screen, model


def _bash_messages(shell: InteractiveShell) -> list[dict[str, Any]]:
    return [
        dict(e.data["message"])
        for e in shell.agent.session.entries
        if e.type == "message" and e.data["message"]["role"] == "bashExecution"
    ]


async def test_a_command_is_shown_and_recorded_as_pi_records_it(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell, screen, _ = await _shell(tmp_path, pipe)
    assert await shell._user_command("!echo hi; pwd; exit 3")
    text = screen.getvalue()
    assert "$ echo hi; pwd; exit 3" in text
    assert "hi\n" in text
    assert "(exit 3)" in text
    (message,) = _bash_messages(shell)
    timestamp = message.pop("timestamp")
    assert isinstance(timestamp, int)
    assert message == {
        "role": "bashExecution",
        "command": "echo hi; pwd; exit 3",
        "output": f"hi\n{tmp_path / 'project'}\n",
        "exitCode": 3,
        "cancelled": False,
        "truncated": False,
        "excludeFromContext": False,
    }
    assert not await shell._user_command("just text")


async def test_double_bang_is_recorded_but_kept_out_of_the_context(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell, screen, model = await _shell(tmp_path, pipe)
    await shell._user_command("!!echo SECRET-OUTPUT")
    await shell._user_command("!echo SHARED-OUTPUT")
    assert "(not sent to the model)" in screen.getvalue()
    assert [m["excludeFromContext"] for m in _bash_messages(shell)] == [True, False]
    await shell.send("go on")
    sent = json.dumps([dict(m) for m in model.requests[0].messages])
    assert "SHARED-OUTPUT" in sent
    assert "SECRET-OUTPUT" not in sent


async def test_the_configured_shell_prefix_applies(tmp_path: Path, pipe: PipeInput) -> None:
    shell, _, _ = await _shell(tmp_path, pipe, {"shellCommandPrefix": "GREETING=hey"})
    await shell._user_command("!echo $GREETING")
    (message,) = _bash_messages(shell)
    assert message["output"] == "hey\n"
    assert message["command"] == "echo $GREETING"  # recorded without the prefix, as in pi


async def test_a_shell_command_typed_during_a_run_waits_for_the_next_prompt(
    tmp_path: Path, pipe: PipeInput
) -> None:
    def typing(_request: object) -> Any:
        pipe.send_text("!echo LATER\r/quit\r")
        return reply("First answer.", delay=0.05)

    shell, screen, _ = await _shell(tmp_path, pipe, model=ScriptedModel([typing]))
    pipe.send_text("first\r")
    assert await asyncio.wait_for(shell.run(), 60) == 0
    assert "Steering" not in screen.getvalue()  # not sent to the model as text
    (message,) = _bash_messages(shell)
    assert message["output"] == "LATER\n"
    users = [
        e.data["message"]
        for e in shell.agent.session.entries
        if e.type == "message" and e.data["message"]["role"] == "user"
    ]
    assert len(users) == 1
