"""/thinking, /fork and /hotkeys: their pure parts."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from pi_context.cli.app.session_replacement import fork_messages
from pi_context.cli.interactive.hotkeys import HOTKEYS, hotkeys_table
from pi_context.cli.interactive.pickers.fork import ForkPicker
from pi_context.cli.interactive.pickers.list import Close
from pi_context.cli.interactive.pickers.thinking import (
    LevelPick,
    ThinkingPicker,
    match_thinking_level,
    unknown_level_message,
)
from pi_context.session.store import Session

LEVELS = ("minimal", "low", "medium", "high")


def test_thinking_level_matches_exactly_ignoring_case() -> None:
    assert match_thinking_level(LEVELS, "HIGH") == "high"
    assert match_thinking_level(LEVELS, " low ") == "low"
    assert match_thinking_level(LEVELS, "hi") is None
    assert match_thinking_level(("off",), "high") is None
    assert unknown_level_message(LEVELS, "max") == (
        'Unknown thinking level "max". Available levels: minimal, low, medium, high.'
    )


def test_thinking_picker_starts_on_the_current_level_and_saves_with_ctrl_s() -> None:
    picker = ThinkingPicker(LEVELS, "medium")
    rows = picker.rows("")
    assert [row.value.level for row in rows] == list(LEVELS)
    assert picker.initial(rows) == 2
    assert rows[2].note == "current"
    [save] = picker.bindings()
    assert save.action(LevelPick("high"), "") == Close(LevelPick("high", save=True))
    assert picker.choose(LevelPick("low"), "") == Close(LevelPick("low"))


def test_fork_lists_every_user_message_of_the_file_last_selected(tmp_path: Path) -> None:
    session = Session.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    first = session.append_message({"role": "user", "content": "one", "timestamp": 1})
    session.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "A"}], "timestamp": 2}
    )
    session.append_message(
        {"role": "user", "content": [{"type": "text", "text": "two"}], "timestamp": 3}
    )
    session.move_leaf(first.id)  # a second branch from the first message
    session.append_message({"role": "user", "content": "three", "timestamp": 4})
    messages = fork_messages(session)
    assert [m.text for m in messages] == ["one", "two", "three"]
    assert messages[0].entry_id == first.id
    picker = ForkPicker(messages)
    rows = picker.rows("")
    assert picker.initial(rows) == 2
    assert [row.value.text for row in picker.rows("tw")] == ["two"]
    assert picker.initial([]) == 0


def test_hotkeys_table_lists_every_group_and_the_picker_keys() -> None:
    screen = io.StringIO()
    Console(file=screen, width=120, color_system=None).print(hotkeys_table())
    text = screen.getvalue()
    for group, rows in HOTKEYS:
        assert group in text
        for key, _ in rows:
            assert key in text
    for key in ("Ctrl+L", "Shift+Ctrl+P, Alt+P", "Shift+Tab", "Alt+Up"):
        assert key in text
