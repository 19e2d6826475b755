"""The full-screen tree selector and its dialogs, driven in-process through a prompt_toolkit
pipe input (the keys a terminal sends), drawing into a real VT100 output."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output.vt100 import Vt100_Output

from pi_context.cli.interactive.tree.selector import (
    SUMMARY_CHOICES,
    TreeSelector,
    choose_summary,
    edit_instructions,
)
from pi_context.cli.interactive.tree.view import TreeView
from pi_context.export import SessionDocument
from tests.cli.interactive.tree.helpers import Built
from tests.hostile.helpers import raw_user

DOWN, UP, ESC, ENTER = "\x1b[B", "\x1b[A", "\x1b", "\r"
CTRL_LEFT, ALT_RIGHT = "\x1b[1;5D", "\x1b[1;3C"


def _screen() -> tuple[Vt100_Output, io.StringIO]:
    written = io.StringIO()
    return Vt100_Output(written, lambda: Size(rows=30, columns=120), term="xterm"), written


class Harness:
    def __init__(self, built: Built, pipe: PipeInput) -> None:
        self.built = built
        self.pipe = pipe
        self.view = built.view()
        self.copied: list[str] = []
        self.output, self.written = _screen()

    def set_label(self, target: str, label: str | None) -> SessionDocument:
        self.built.session.append_label(target, label)
        return self.built.doc()

    def copy(self, text: str) -> bool:
        self.copied.append(text)
        return True

    def run(self, *keys: str) -> tuple[str | None, TreeSelector]:
        selector = TreeSelector(
            self.view,
            set_label=self.set_label,
            copy=self.copy,
            pt_input=self.pipe,
            pt_output=self.output,
        )

        async def go() -> str | None:
            task = asyncio.ensure_future(selector.run())
            for key in keys:
                await asyncio.sleep(0)  # each key is its own read, as typed
                self.pipe.send_text(key)
                await asyncio.sleep(0.1 if key == ESC else 0)
            return await asyncio.wait_for(task, 30)

        return asyncio.run(go()), selector


@pytest.fixture
def harness(tmp_path: Path, pipe: PipeInput) -> Harness:
    return Harness(Built(tmp_path), pipe)


def test_opens_on_the_leaf_and_enter_selects(harness: Harness) -> None:
    chosen, _ = harness.run(UP, ENTER)
    assert chosen == harness.built.u3
    assert "Session tree" in harness.written.getvalue()
    assert "user: explain README" in harness.written.getvalue()


def test_search_then_esc_clears_then_esc_closes(harness: Harness) -> None:
    chosen, _ = harness.run("delete", ESC, ESC)
    assert chosen is None
    assert harness.view.query == ""
    chosen, _ = harness.run("delete", ENTER)
    assert chosen == harness.built.u4


def test_filters_by_control_keys(harness: Harness) -> None:
    harness.run("\x15", ESC)  # Ctrl+U
    assert harness.view.filter_mode == "user-only"
    harness.run("\x0f", ESC)  # Ctrl+O
    assert harness.view.filter_mode == "labeled-only"
    harness.run("\x1b[79;6u", ESC)  # Shift+Ctrl+O as CSI-u
    assert harness.view.filter_mode == "user-only"
    harness.run("\x14", ESC)  # Ctrl+T
    assert harness.view.filter_mode == "no-tools"
    harness.run("\x01", ESC)  # Ctrl+A
    assert harness.view.filter_mode == "all"
    harness.run("\x0c", ESC)  # Ctrl+L
    assert harness.view.filter_mode == "labeled-only"
    harness.run("\x04", ESC)  # Ctrl+D
    assert harness.view.filter_mode == "default"


def test_shift_l_labels_the_selection(harness: Harness) -> None:
    chosen, selector = harness.run(UP, "L", "  first try ", ENTER, ESC)
    assert chosen is None
    labels = harness.built.session.labels
    assert labels[harness.built.u3] == "first try"
    assert selector.status == ""  # Esc cleared the notice
    # empty removes it
    harness.run("L", "\x15", ENTER, ESC)  # Ctrl+U in the label line clears it
    assert harness.built.u3 not in harness.built.session.labels


def test_ctrl_x_copies_the_whole_text(harness: Harness) -> None:
    harness.run("README", UP, "\x18", ESC, ESC)  # the search keeps u2 (on the path) selected
    assert harness.copied == ["README\nsetup.py"]
    assert "Copied selected message to clipboard" in harness.written.getvalue()


def test_no_clipboard_is_said(harness: Harness) -> None:
    harness.copy = lambda text: False  # type: ignore[method-assign]
    harness.run("\x18", ESC)
    assert "No clipboard available" in harness.written.getvalue()


def test_fold_keys(harness: Harness) -> None:
    harness.run(CTRL_LEFT, CTRL_LEFT, ESC)
    row = next(r for r in harness.view.rows if r.entry_id == harness.built.u2)
    assert row.folded
    harness.run(ALT_RIGHT, ESC)
    assert not next(r for r in harness.view.rows if r.entry_id == harness.built.u2).folded


def test_shift_t_shows_label_times(harness: Harness) -> None:
    harness.run("T", ESC)
    assert harness.view.show_label_times
    assert "[readme 2026-01-01 00:14]" in harness.written.getvalue()


def test_control_sequences_in_entries_never_reach_the_terminal(
    tmp_path: Path, pipe: PipeInput
) -> None:
    built = Built(tmp_path)
    hostile = "pwn \x1b]52;c;ZWNobyBoaQ==\x07 \x1b[2J done"
    built.session.append_message(raw_user(hostile))
    built.session.append_label(built.u1, "\x1b]0;title\x07")
    harness = Harness(built, pipe)
    harness.run("\x01", ESC)
    shown = harness.written.getvalue()
    assert "\x1b]52" not in shown
    assert "\x1b]0;" not in shown
    assert "\x1b[2J" not in shown
    assert "␛]52;c;ZWNobyBoaQ==␇" in shown


def _dialog(pipe: PipeInput, keys: list[str]) -> int | None:
    output, _ = _screen()

    async def go() -> int | None:
        task = asyncio.ensure_future(choose_summary(pipe, output))
        for key in keys:
            await asyncio.sleep(0)
            pipe.send_text(key)
            await asyncio.sleep(0.1 if key == ESC else 0)
        return await asyncio.wait_for(task, 30)

    return asyncio.run(go())


def test_summary_dialog(pipe: PipeInput) -> None:
    assert SUMMARY_CHOICES == ("No summary", "Summarize", "Summarize with custom prompt")
    assert _dialog(pipe, [ENTER]) == 0
    assert _dialog(pipe, [DOWN, ENTER]) == 1
    assert _dialog(pipe, [UP, ENTER]) == 2  # wraps
    assert _dialog(pipe, ["j", "j", "k", ENTER]) == 1
    assert _dialog(pipe, [ESC]) is None


def test_instructions_editor(pipe: PipeInput) -> None:
    output, written = _screen()

    async def go(keys: list[str]) -> str | None:
        task = asyncio.ensure_future(edit_instructions(pipe, output))
        for key in keys:
            await asyncio.sleep(0)
            pipe.send_text(key)
            await asyncio.sleep(0.1 if key == ESC else 0)
        return await asyncio.wait_for(task, 30)

    assert asyncio.run(go(["focus on ", "\x1b\r", "tests", ENTER])) == "focus on \ntests"
    assert "Custom summarization instructions" in written.getvalue()
    assert asyncio.run(go(["never mind", ESC])) is None


def test_empty_view_draws_a_notice(tmp_path: Path, pipe: PipeInput) -> None:
    built = Built(tmp_path)
    harness = Harness(built, pipe)
    harness.view = TreeView(built.doc())
    chosen, _ = harness.run("zzzz-nothing", ENTER, ESC, ESC)
    assert chosen is None
    assert "No entries match" in harness.written.getvalue()
