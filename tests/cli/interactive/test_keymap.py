"""pi's ``keybindings.json``: key syntax, remapping, the entries reported, and conflicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES

from pi_context.cli.interactive.keymap import (
    DEFAULT_KEYS,
    KeySpecError,
    default_keymap,
    display_key,
    load_keymap,
    parse_key,
    sentinel_name,
)


def _write(agent: Path, data: object) -> Path:
    agent.mkdir(exist_ok=True)
    path = agent / "keybindings.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("spec", "keys"),
    [
        ("ctrl+g", ("c-g",)),
        ("Ctrl+G", ("c-g",)),
        ("alt+enter", ("escape", "c-m")),
        ("alt+v", ("escape", "v")),
        ("shift+tab", ("s-tab",)),
        ("escape", ("escape",)),
        ("esc", ("escape",)),
        ("enter", ("c-m",)),
        ("pageUp", ("pageup",)),
        ("ctrl+up", ("c-up",)),
        ("ctrl+shift+down", ("c-s-down",)),
        ("shift+x", ("X",)),
        ("ctrl+]", ("c-]",)),
        ("f5", ("f5",)),
        ("alt+ctrl+x", ("escape", "c-x")),
    ],
)
def test_pi_key_syntax(spec: str, keys: tuple[str, ...]) -> None:
    assert parse_key(spec) == keys


def test_keys_without_a_terminal_name_are_read_from_their_extended_sequences() -> None:
    (shift_enter,) = parse_key("shift+enter")
    assert sentinel_name(shift_enter) == "Shift+Enter"
    assert ANSI_SEQUENCES["\x1b[13;2u"] == shift_enter  # CSI u, as tmux forwards it
    assert ANSI_SEQUENCES["\x1b[27;2;13~"] == shift_enter  # xterm's modifyOtherKeys
    (ctrl_1,) = parse_key("ctrl+1")
    assert ANSI_SEQUENCES["\x1b[49;5u"] == ctrl_1
    assert sentinel_name(ctrl_1) == "Ctrl+1"
    assert parse_key("ctrl+1") == (ctrl_1,)  # the same key each time
    # Alt+key in a terminal's extended form reads as Esc, key
    assert parse_key("alt+e") == ("escape", "e")
    assert ANSI_SEQUENCES["\x1b[101;3u"] == ("escape", "e")
    assert ANSI_SEQUENCES["\x1b[27;3;101~"] == ("escape", "e")


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("hyper+x", "unknown modifier 'hyper'"),
        ("ctrl+ctrl+x", "repeated"),
        ("ctrl+banana", "unknown key 'banana'"),
        ("super+k", "kitty keyboard protocol"),
        ("", "non-empty"),
    ],
)
def test_keys_pictx_cannot_read(spec: str, why: str) -> None:
    with pytest.raises(KeySpecError, match=why):
        parse_key(spec)


def test_display_names() -> None:
    assert display_key("shift+ctrl+p") == "Shift+Ctrl+P"
    assert display_key("escape") == "Esc"
    assert display_key("pageDown") == "PageDown"


def test_no_file_is_the_defaults(tmp_path: Path) -> None:
    keymap = load_keymap(tmp_path)
    assert keymap.problems == ()
    assert keymap.label("app.editor.external") == "Ctrl+G"
    assert keymap.label("tui.input.newLine") == "Shift+Enter, Ctrl+J"
    assert keymap.sequences("app.message.followUp") == (("escape", "c-m"),)
    assert set(default_keymap().keys) == set(DEFAULT_KEYS)


def test_a_file_remaps_unbinds_and_reads_older_names(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "$schema": "https://example.invalid/schema.json",
            "app.editor.external": ["alt+e", "f2"],
            "app.suspend": [],
            "expandTools": "ctrl+y",  # pi's older name
            "toggleThinking": "ctrl+b",
            "app.thinking.toggle": "ctrl+q",  # the new id wins over the older name
        },
    )
    keymap = load_keymap(tmp_path)
    assert keymap.problems == ()
    assert keymap.sequences("app.editor.external") == (("escape", "e"), ("f2",))
    assert keymap.sequences("app.suspend") == ()
    assert keymap.label("app.suspend") == "(none)"
    assert keymap.sequences("app.tools.expand") == (("c-y",),)
    assert keymap.sequences("app.thinking.toggle") == (("c-q",),)
    assert keymap.remapped == {
        "app.editor.external",
        "app.suspend",
        "app.tools.expand",
        "app.thinking.toggle",
    }


def test_every_entry_not_applied_is_reported_once_with_the_file(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "app.no.such": "ctrl+k",
            "app.session.tree": "ctrl+w",  # pi's, but not remappable in pictx
            "app.tools.expand": ["ctrl+y", "super+y"],
            "app.message.copy": 7,
        },
    )
    keymap = load_keymap(tmp_path)
    assert keymap.problems == (
        f"{path}: app.no.such: unknown action; not applied",
        f"{path}: app.session.tree: pictx cannot remap this action; not applied",
        f"{path}: app.message.copy: a key or a list of keys expected; not applied",
        f"{path}: app.tools.expand: key 'super+y': super needs the kitty keyboard protocol, "
        "which pictx does not read",
    )
    assert keymap.sequences("app.tools.expand") == (("c-y",),)  # the good key still applies
    assert keymap.sequences("app.message.copy") == (("c-x",),)


@pytest.mark.parametrize(
    ("text", "why"),
    [("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object")],
)
def test_a_broken_file_is_reported_and_ignored(tmp_path: Path, text: str, why: str) -> None:
    path = _write(tmp_path, text)
    keymap = load_keymap(tmp_path)
    assert len(keymap.problems) == 1
    assert keymap.problems[0].startswith(f"{path}: {why}")
    assert keymap.specs == default_keymap().specs


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    _write(tmp_path, '\ufeff{"app.editor.external": "alt+e"}')
    assert load_keymap(tmp_path).sequences("app.editor.external") == (("escape", "e"),)


def test_conflicts_go_to_the_action_pi_checks_first(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            # Ctrl+P stays "next model": pi checks that action before app.tools.expand
            "app.tools.expand": "ctrl+p",
            # an application action takes a key from the editor's new-line action
            "app.thinking.toggle": "ctrl+j",
        },
    )
    keymap = load_keymap(tmp_path)
    assert keymap.sequences("app.tools.expand") == ()
    assert keymap.sequences("app.model.cycleForward") == (("c-p",),)
    assert keymap.sequences("app.thinking.toggle") == (("c-j",),)
    assert keymap.label("tui.input.newLine") == "Shift+Enter"
    assert keymap.problems == (
        f"{path}: app.tools.expand: key 'ctrl+p' is also bound to app.model.cycleForward, "
        "which takes it",
        f"{path}: tui.input.newLine: key 'ctrl+j' is also bound to app.thinking.toggle, "
        "which takes it",
    )
