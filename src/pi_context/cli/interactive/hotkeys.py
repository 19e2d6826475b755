"""``/hotkeys``: the key bindings of interactive mode and of its pickers, as a table.

pictx has no ``keybindings.json`` (its keys are fixed), so the effective bindings are the ones
listed here; the table is display only. Keep it in step with the bindings of
:mod:`pi_context.cli.interactive.mode` and of the picker sources.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

__all__ = ["HOTKEYS", "hotkeys_table"]

HOTKEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Editing",
        (
            ("Enter", "send the message (while an answer runs: queue it as steering)"),
            ("Alt+Enter, Esc Enter", "new line (while an answer runs: queue a follow-up)"),
            ("\\ then Enter", "new line"),
            ("Up / Down", "walk the input history"),
            ("Tab", "complete a /command or /skill:name"),
            ("Ctrl+C", "clear the line"),
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
