"""``/hotkeys``: the key bindings of interactive mode and of its pickers, as a table.

The keys of pi's actions are the ones in effect: ``keybindings.json`` applied (see
:mod:`pi_context.cli.interactive.keymap`). A test walks the key bindings of the interactive
prompt and fails when one of them is missing here (:func:`key_name` names a binding's keys as
the table writes them).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from pi_context.cli.interactive.keymap import Keymap, default_keymap, sentinel_name

__all__ = ["HOTKEYS", "hotkey_rows", "hotkeys_table", "key_name", "listed_keys"]

_NAMES = {
    "c-m": "Enter",
    "s-tab": "Shift+Tab",
    "up": "Up",
    "down": "Down",
    "tab": "Tab",
    "c-i": "Tab",
    "escape": "Esc",
}

Rows = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def hotkey_rows(keymap: Keymap | None = None) -> Rows:
    """``(group, ((keys, action), ...))`` with the keys of ``keymap`` (the defaults)."""
    km = keymap if keymap is not None else default_keymap()
    key = km.label
    return (
        (
            "Editing",
            (
                (key("tui.input.submit"), "send the message (while an answer runs: steer)"),
                (key("tui.input.newLine"), "new line"),
                (
                    key("app.message.followUp") + ", Esc Enter",
                    "new line (while an answer runs: queue a follow-up)",
                ),
                ("\\ then Enter", "new line"),
                ("Up / Down", "walk the input history"),
                ("Tab", "complete a /command, /skill:name or the path before the cursor"),
                ("@", "search the working tree for a file to reference (Tab or Enter picks)"),
                (key("app.editor.external"), "edit the input in $VISUAL / $EDITOR"),
                ("Ctrl+C", "clear the line (twice within half a second: leave)"),
                ("Esc", "twice on an empty line: /tree, or as doubleEscapeAction says"),
                ("Ctrl+D", "leave (on an empty line)"),
            ),
        ),
        (
            "Application",
            (
                (key("app.interrupt") + " / Ctrl+C", "abort the running answer (twice: cancel)"),
                (key("app.message.dequeue"), "take the queued messages back into the editor"),
                (key("app.thinking.cycle"), "next thinking level"),
                (key("app.model.cycleForward"), "next model of the scope"),
                (key("app.model.cycleBackward"), "previous model of the scope"),
                (key("app.model.select"), "open the model picker"),
                (
                    key("app.clipboard.pasteImage"),
                    "paste from the clipboard (an image, file paths or text)",
                ),
                (key("app.tools.expand"), "tool output in full / collapsed"),
                (key("app.thinking.toggle"), "hide / show thinking blocks"),
                (key("app.message.copy"), "copy the last answer (also /copy)"),
                (key("app.suspend"), "suspend pictx (fg resumes it)"),
            ),
        ),
        (
            "Pickers",
            (
                ("Up / Down", "move (wraps)"),
                ("PageUp / PageDown", "move by a page"),
                ("typing / Backspace", "search"),
                ("Enter", "choose"),
                ("Esc", "clear the search, else close"),
                ("Tab", "/model: scoped or all · /resume: this folder or all"),
                ("Ctrl+S", "/model, /thinking: choose and save as default · /resume: sort"),
                ("Ctrl+P / Ctrl+N", "/resume: show paths / named sessions only"),
                ("Ctrl+R / Ctrl+D", "/resume: rename / delete the session"),
                ("Space, Ctrl+A, Ctrl+X", "/scoped-models: toggle, enable all, clear all"),
            ),
        ),
    )


HOTKEYS: Rows = hotkey_rows()
"""``(group, ((key, action), ...))`` with the default keys."""


def hotkeys_table(keymap: Keymap | None = None) -> Table:
    table = Table(title="Keyboard shortcuts", title_justify="left", box=None, show_header=True)
    table.add_column("Key", style="bold")
    table.add_column("Action")
    for group, rows in hotkey_rows(keymap):
        table.add_row(Text(group, style="underline"), "")
        for key, action in rows:
            table.add_row(key, action)
    return table


def key_name(keys: tuple[str, ...]) -> str:
    """A binding's key sequence as the table writes it: ``("c-p",)`` is ``Ctrl+P``,
    ``("escape", "p")`` is ``Alt+P`` (a terminal sends Alt+key as Esc, key)."""
    if keys == ("escape", "escape"):  # Esc pressed twice quickly (the table's Esc row)
        return "Esc"
    if len(keys) == 2 and keys[0] == "escape":
        return "Alt+" + key_name(keys[1:])
    (key,) = keys
    if key in _NAMES:
        return _NAMES[key]
    sentinel = sentinel_name(key)
    if sentinel is not None:  # a modified key read from its extended-key sequences
        return sentinel
    if key.startswith("c-"):
        return "Ctrl+" + key[2:].upper()
    return key.upper() if len(key) == 1 else key.capitalize()


def listed_keys(keymap: Keymap | None = None) -> set[str]:
    """Every key the table names (cells like ``Shift+Ctrl+P, Alt+P`` or ``Up / Down`` split)."""
    names: set[str] = set()
    for _, rows in hotkey_rows(keymap):
        for cell, _ in rows:
            for part in cell.replace(" / ", ", ").split(", "):
                names.add(part.strip())
    return names
