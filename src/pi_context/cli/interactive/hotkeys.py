"""``/hotkeys``: the key bindings of interactive mode and of its pickers, as a table.

pictx has no ``keybindings.json`` (its keys are fixed), so the effective bindings are the ones
listed here. A test walks the key bindings of the interactive prompt and fails when one of them
is missing here (:func:`key_name` names a binding's keys as the table writes them).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

__all__ = ["HOTKEYS", "hotkeys_table", "key_name", "listed_keys"]

_NAMES = {
    "c-m": "Enter",
    "s-tab": "Shift+Tab",
    "f24": "Shift+Ctrl+P",  # how the prompt reads Shift+Ctrl+P (see interactive.mode)
    "up": "Up",
    "down": "Down",
    "tab": "Tab",
    "c-i": "Tab",
    "escape": "Esc",
}

HOTKEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Editing",
        (
            ("Enter", "send the message (while an answer runs: queue it as steering)"),
            ("Alt+Enter, Esc Enter", "new line (while an answer runs: queue a follow-up)"),
            ("\\ then Enter", "new line"),
            ("Up / Down", "walk the input history"),
            ("Tab", "complete a /command, /skill:name or the path before the cursor"),
            ("@", "search the working tree for a file to reference (Tab or Enter picks)"),
            ("Ctrl+C", "clear the line (twice within half a second: leave)"),
            ("Esc", "twice on an empty line: /tree, or as doubleEscapeAction says"),
            ("Ctrl+D", "leave (on an empty line)"),
        ),
    ),
    (
        "Application",
        (
            ("Esc / Ctrl+C", "abort the running answer (twice: cancel outright)"),
            ("Alt+Up", "take the queued messages back into the editor"),
            ("Shift+Tab", "next thinking level"),
            ("Ctrl+P", "next model of the scope"),
            ("Shift+Ctrl+P, Alt+P", "previous model of the scope"),
            ("Ctrl+L", "open the model picker"),
            ("Ctrl+V, Alt+V", "paste from the clipboard (an image, file paths or text)"),
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
"""``(group, ((key, action), ...))``."""


def hotkeys_table() -> Table:
    table = Table(title="Keyboard shortcuts", title_justify="left", box=None, show_header=True)
    table.add_column("Key", style="bold")
    table.add_column("Action")
    for group, rows in HOTKEYS:
        table.add_row(Text(group, style="underline"), "")
        for key, action in rows:
            table.add_row(key, action)
    return table


def key_name(keys: tuple[str, ...]) -> str:
    """A binding's key sequence as the table writes it: ``("c-p",)`` is ``Ctrl+P``,
    ``("escape", "p")`` is ``Alt+P`` (a terminal sends Alt+key as Esc, key)."""
    if len(keys) == 2 and keys[0] == "escape":
        return "Alt+" + key_name(keys[1:])
    (key,) = keys
    if key in _NAMES:
        return _NAMES[key]
    if key.startswith("c-"):
        return "Ctrl+" + key[2:].upper()
    return key.upper() if len(key) == 1 else key.capitalize()


def listed_keys() -> set[str]:
    """Every key the table names (cells like ``Shift+Ctrl+P, Alt+P`` or ``Up / Down`` split)."""
    names: set[str] = set()
    for _, rows in HOTKEYS:
        for cell, _ in rows:
            for part in cell.replace(" / ", ", ").split(", "):
                names.add(part.strip())
    return names
