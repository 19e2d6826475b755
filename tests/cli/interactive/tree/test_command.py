"""``/tree``'s flow after the selection: the summary choice, the outcomes of the move and the
editor rule, with the keys a terminal sends (pipe input) and an agent whose ``navigate``
answers as told."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from pi_context.agent.navigation import NavigationResult
from pi_context.cli.interactive.tree.command import run_tree_selector, skip_summary_prompt
from pi_context.errors import PiContextError
from tests.cli.interactive.tree.helpers import Built

UP, DOWN, ENTER, ESC = "\x1b[A", "\x1b[B", "\r", "\x1b"
COMPACTING = (
    "Wait for the current compaction or tree navigation to finish before navigating the "
    "session tree."
)


class Agent:
    """The part of the agent ``/tree`` uses; ``navigate`` answers from ``outcomes``."""

    def __init__(self, built: Built, outcomes: list[Any], settings: dict[str, Any]) -> None:
        self.session = built.session
        self.outcomes = outcomes
        self.settings = settings
        self.calls: list[tuple[str, bool, str | None]] = []

    def settings_data(self) -> dict[str, Any]:
        return self.settings

    async def navigate(self, entry_id: str, *, summarize: bool, instructions: str | None) -> Any:
        self.calls.append((entry_id, summarize, instructions))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


class Shell:
    def __init__(self, agent: Agent, editor: str = "") -> None:
        self.agent = agent
        self.screen = io.StringIO()
        self.console = Console(file=self.screen, width=100, color_system=None)
        self.editor = editor
        self.esc_during_busy = False

    async def busy(self, label: str, work: Callable[[], Awaitable[Any]]) -> Any:
        result = await work()
        return None if self.esc_during_busy else result

    def editor_text(self) -> str:
        return self.editor

    def set_editor(self, text: str) -> None:
        self.editor = text


def _run(shell: Shell, pipe: PipeInput, keys: list[str]) -> str:
    output = Vt100_Output(io.StringIO(), lambda: Size(rows=30, columns=100), term="xterm")

    async def go() -> None:
        task = asyncio.ensure_future(run_tree_selector(shell, pipe, output))  # type: ignore[arg-type]
        for key in keys:
            await asyncio.sleep(0.05)
            pipe.send_text(key)
            await asyncio.sleep(0.15 if key == ESC else 0)
        await asyncio.wait_for(task, 30)

    asyncio.run(go())
    return shell.screen.getvalue()


def _setup(tmp_path: Path, *outcomes: Any, editor: str = "", **settings: Any) -> Shell:
    built = Built(tmp_path)
    return Shell(Agent(built, list(outcomes), dict(settings)), editor)


def test_a_user_message_fills_an_empty_editor(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult(editor_text="thanks"))
    shown = _run(shell, pipe, [UP, ENTER, ENTER])
    assert shell.agent.calls == [(shell.agent.session.entries[11].id, False, None)]
    assert shell.editor == "thanks"
    assert "Navigated to selected point" in shown


def test_a_draft_in_the_editor_is_kept(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult(editor_text="thanks"), editor="my draft")
    _run(shell, pipe, [UP, ENTER, ENTER])
    assert shell.editor == "my draft"


def test_summarize_and_custom_instructions_reach_navigate(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult(), NavigationResult())
    _run(shell, pipe, [UP, UP, ENTER, DOWN, ENTER])
    _run(shell, pipe, [UP, UP, ENTER, DOWN, DOWN, ENTER, "  only names  ", ENTER])
    assert [(s, i) for _, s, i in shell.agent.calls] == [(True, None), (True, "only names")]


def test_esc_in_the_editor_returns_to_the_dialog(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult())
    _run(shell, pipe, [UP, ENTER, UP, ENTER, "x", ESC, ENTER])  # the dialog opens anew
    assert [(s, i) for _, s, i in shell.agent.calls] == [(False, None)]


def test_an_aborted_summary_reopens_the_tree(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult(cancelled=True, aborted=True), NavigationResult())
    shown = _run(shell, pipe, [UP, ENTER, DOWN, ENTER, ENTER, ENTER])
    assert "Branch summarization cancelled" in shown
    assert "Navigated to selected point" in shown
    assert len(shell.agent.calls) == 2
    assert shell.agent.calls[0][0] == shell.agent.calls[1][0]  # reopened at the selection


def test_esc_during_the_summary_reopens_the_tree(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult(), editor="")
    shell.esc_during_busy = True
    shown = _run(shell, pipe, [UP, ENTER, DOWN, ENTER, ESC])
    assert "Branch summarization cancelled" in shown


def test_an_extension_cancel_and_a_running_compaction_are_said(
    tmp_path: Path, pipe: PipeInput
) -> None:
    shell = _setup(tmp_path, NavigationResult(cancelled=True), PiContextError(COMPACTING))
    assert "Navigation cancelled" in _run(shell, pipe, [UP, ENTER, ENTER])
    assert COMPACTING in _run(shell, pipe, [UP, ENTER, ENTER])


def test_the_current_leaf_is_already_here(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, treeFilterMode="all")
    assert "Already at this point" in _run(shell, pipe, [ENTER])  # the label entry is the leaf
    assert shell.agent.calls == []


def test_skip_prompt_moves_without_asking(tmp_path: Path, pipe: PipeInput) -> None:
    shell = _setup(tmp_path, NavigationResult(), branchSummary={"skipPrompt": True})
    shown = _run(shell, pipe, [UP, ENTER])
    assert shell.agent.calls[0][1:] == (False, None)
    assert "Navigated to selected point" in shown
    assert skip_summary_prompt({"branchSummary": {"skipPrompt": True}})
    assert not skip_summary_prompt({"branchSummary": {"skipPrompt": "yes"}})
    assert not skip_summary_prompt(None)
