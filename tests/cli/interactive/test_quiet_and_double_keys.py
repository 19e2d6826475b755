"""pi's ``quietStartup``, Ctrl+C twice to exit, ``doubleEscapeAction`` and
``autocompleteMaxVisible``, driven in-process through a prompt_toolkit pipe input.

The shell's clock is a fake: "within the window" and "after it" are chosen by the test, so
nothing depends on how fast the machine types.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_context.cli.app.app import AppConfig, RunningAgent
from pi_context.cli.interactive.mode import InteractiveShell
from pi_context.testing import ScriptedModel


def _ticks(step: float) -> Callable[[], float]:
    """A clock advancing ``step`` seconds on each reading."""
    times: Iterator[float] = (n * step for n in range(10_000))
    return lambda: next(times)


def _typing_clock(pipe: PipeInput, step: float, keys: list[str]) -> Callable[[], float]:
    """A clock like :func:`_ticks` that types the next of ``keys`` each time it is read: an
    Esc's handler reads it, so the next key arrives only once that Esc was handled (an Esc
    followed at once by a key would be read as Alt+key)."""
    clock = _ticks(step)

    def read() -> float:
        if keys:
            pipe.send_text(keys.pop(0))
        return clock()

    return read


async def _shell(
    tmp_path: Path,
    pipe: PipeInput,
    settings: dict[str, Any],
    *,
    clock: Callable[[], float] | None = None,
    verbose: bool = False,
) -> tuple[InteractiveShell, io.StringIO]:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    config = AppConfig(cwd=str(tmp_path), agent_dir=agent_dir, session_dir=tmp_path / "s")
    agent = RunningAgent(await config.create(ScriptedModel([])), config)
    screen = io.StringIO()
    console = Console(file=screen, width=200, force_terminal=False, color_system=None)
    shell = InteractiveShell(
        agent,
        console=console,
        pt_input=pipe,
        pt_output=DummyOutput(),
        verbose=verbose,
        clock=clock or _ticks(0.0),
    )
    return shell, screen


async def _run(shell: InteractiveShell) -> int:
    # a bound that only matters when the shell failed to exit (it would wait forever)
    return await asyncio.wait_for(shell.run(), 30)


async def _banner(tmp_path: Path, pipe: PipeInput, settings: dict[str, Any], **kw: Any) -> str:
    shell, screen = await _shell(tmp_path, pipe, settings, **kw)
    shell._banner()
    shell.agent.close()
    return screen.getvalue()


async def test_quiet_startup_true_hides_the_header(tmp_path: Path, pipe: PipeInput) -> None:
    text = await _banner(tmp_path, pipe, {"quietStartup": True})
    assert "pictx ·" not in text
    assert "Type /help" not in text
    assert "context files:" not in text


async def test_verbose_overrides_quiet_startup(tmp_path: Path, pipe: PipeInput) -> None:
    text = await _banner(tmp_path, pipe, {"quietStartup": True}, verbose=True)
    assert "pictx ·" in text
    assert "skills:" in text


async def test_quiet_startup_header_keeps_only_the_header(tmp_path: Path, pipe: PipeInput) -> None:
    text = await _banner(tmp_path, pipe, {"quietStartup": "header"})
    assert "pictx ·" in text
    assert "skills:" not in text


async def test_quiet_startup_false_lists_what_was_loaded(tmp_path: Path, pipe: PipeInput) -> None:
    text = await _banner(tmp_path, pipe, {"quietStartup": False})
    assert "pictx ·" in text
    assert "skills:" in text


async def test_ctrl_c_twice_within_the_window_exits(tmp_path: Path, pipe: PipeInput) -> None:
    shell, _ = await _shell(tmp_path, pipe, {}, clock=_ticks(0.1))
    pipe.send_text("draft\x03\x03")
    assert await _run(shell) == 0
    shell.agent.close()


async def test_ctrl_c_twice_slowly_only_clears(tmp_path: Path, pipe: PipeInput) -> None:
    shell, _ = await _shell(tmp_path, pipe, {}, clock=_ticks(1.0))
    sent: list[str] = []

    async def record(text: str, images: Any = ()) -> None:
        sent.append(text)

    shell.send = record  # type: ignore[method-assign]
    pipe.send_text("draft\x03\x03kept\r/quit\r")
    assert await _run(shell) == 0
    assert sent == ["kept"]
    shell.agent.close()


@pytest.mark.parametrize(
    ("action", "shown"),
    [("fork", "No messages to fork from"), (None, "No entries in session")],
)
async def test_double_escape_on_an_empty_editor_runs_the_action(
    tmp_path: Path, pipe: PipeInput, action: str | None, shown: str
) -> None:
    settings = {} if action is None else {"doubleEscapeAction": action}
    clock = _typing_clock(pipe, 0.1, ["\x1b", "/quit\r"])
    shell, screen = await _shell(tmp_path, pipe, settings, clock=clock)
    pipe.send_text("\x1b")
    assert await _run(shell) == 0
    assert shown in screen.getvalue()
    shell.agent.close()


async def test_two_escapes_read_together_run_the_action(tmp_path: Path, pipe: PipeInput) -> None:
    # a terminal's Esc waits for a possible Alt+key, so a quick double Esc arrives as a pair:
    # it is one double press, whatever the clock says between the two handlings
    shell, screen = await _shell(tmp_path, pipe, {"doubleEscapeAction": "fork"}, clock=_ticks(1.0))
    pipe.send_text("\x1b\x1b/quit\r")
    assert await _run(shell) == 0
    assert "No messages to fork from" in screen.getvalue()
    shell.agent.close()


async def test_double_escape_none_does_nothing(tmp_path: Path, pipe: PipeInput) -> None:
    shell, screen = await _shell(tmp_path, pipe, {"doubleEscapeAction": "none"})
    pipe.send_text("\x1b")
    pipe.send_text("x\x7f/quit\r")  # a key after the Esc (x, erased) keeps /quit whole
    assert await _run(shell) == 0
    assert "No entries in session" not in screen.getvalue()
    shell.agent.close()


@pytest.mark.parametrize(("value", "rows"), [(8, 8), (1, 3), (50, 20)])
async def test_autocomplete_max_visible_sets_the_menu_height(
    tmp_path: Path, pipe: PipeInput, value: int, rows: int
) -> None:
    shell, _ = await _shell(tmp_path, pipe, {"autocompleteMaxVisible": value})
    menus = [c for c in shell._prompt.layout.walk() if isinstance(c, CompletionsMenu)]
    assert menus
    for menu in menus:
        assert menu.content.height.max == rows  # type: ignore[attr-defined]
    shell.agent.close()
