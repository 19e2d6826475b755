"""Text from files, models and tools made safe to show in a terminal.

A terminal obeys control sequences in what it prints: OSC 52 writes the clipboard, OSC 0
retitles the window, CSI moves the cursor or clears the screen, and a lone UTF-16 surrogate (valid
in a JSON string) cannot even be encoded. Everything shown in a terminal passes through
:func:`terminal_safe`:

* complete CSI sequences (``ESC [ … final`` or C1 ``CSI``: colours, cursor motion) are removed;
* every other C0 control but tab and newline, DEL and every C1 control is shown as a visible,
  inert character: C0 as its Unicode control picture (``ESC`` → ``␛``, ``BEL`` → ``␇``), DEL as
  ``␡``, C1 as ``\\x9d``-style text; so an OSC 52 attempt is shown as ``␛]52;c;…␇`` and does
  nothing; ``\\r\\n`` becomes ``\\n``;
* lone surrogates are shown as U+FFFD (stored text is never changed; only what is shown).

JSON output escapes C0 controls as JSON does; :func:`json_for_terminal` also writes C1 controls
and DEL as ``\\u`` escapes (same JSON value), so JSON read in a terminal is inert too.
Output that is data rather than a display (``pictx -p`` or ``pictx prompt`` into a pipe or a
file) keeps its text: :func:`text_for_stream` only replaces lone surrogates there.

:class:`~pi_context.cli.interactive.terminal_console.TerminalConsole` applies the same rule to
every text segment rich renders (kept apart, so that commands that only print load no rich).
"""

from __future__ import annotations

import re
from typing import TextIO

import click

__all__ = [
    "UNSAFE",
    "echo",
    "json_for_terminal",
    "one_line",
    "terminal_safe",
    "text_for_stream",
    "well_formed",
]

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""Anything :func:`terminal_safe` changes (tab and newline are kept)."""
_CSI = re.compile("(?:\x1b\\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_C1 = re.compile("[\x7f-\x9f]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"\\x{code:02x}"


def well_formed(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (encodable as UTF-8)."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def terminal_safe(text: str) -> str:
    """``text`` as it may be shown in a terminal: no control sequence survives (see module)."""
    if not UNSAFE.search(text):
        return text
    text = well_formed(text).replace("\r\n", "\n")
    text = _CSI.sub("", text)
    return _CONTROL.sub(_shown, text)


def one_line(text: str, width: int | None = None) -> str:
    """``text`` on one terminal-safe line: runs of whitespace become one space; longer than
    ``width`` characters it is cut, ending in ``…``. Every one-line display of the CLI (error
    lines, warnings, list rows, tree rows) uses this."""
    flat = terminal_safe(" ".join(text.split()))
    if width is not None and len(flat) > width:
        return flat[: max(width - 1, 0)] + "…"
    return flat


def text_for_stream(text: str, stream: TextIO) -> str:
    """``text`` for ``stream``: terminal-safe on a terminal, else unchanged but encodable."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError, OSError):
        tty = False
    return terminal_safe(text) if tty else well_formed(text)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of display text, made terminal-safe."""
    click.echo(terminal_safe(text), err=err, nl=nl)


def json_for_terminal(text: str) -> str:
    """JSON text with DEL and C1 controls written as ``\\u`` escapes (the same JSON value).

    Outside strings JSON holds only ASCII structure, so every such character is inside a
    string, where the escape means the same character.
    """
    return _JSON_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
