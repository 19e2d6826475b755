"""Copying text to the system clipboard through the platform's own tool.

This module writes no control sequence to the terminal (see
:mod:`pi_context.cli.terminal_text`; ``/copy`` adds pi's OSC 52 route where pi takes it, in
:mod:`pi_context.cli.interactive.editor_habits`): the text goes to the first of
``wl-copy`` (Wayland), ``xclip``/``xsel`` (X11), ``pbcopy`` (macOS) or ``clip.exe``
(Windows, WSL) that is installed and succeeds. No tool → :func:`copy_to_clipboard` says so
by returning ``False``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = ["CLIPBOARD_TOOLS", "copy_to_clipboard"]

CLIPBOARD_TOOLS: Final[Sequence[tuple[str, ...]]] = (
    ("wl-copy",),
    ("xclip", "-selection", "clipboard"),
    ("xsel", "--clipboard", "--input"),
    ("pbcopy",),
    ("clip.exe",),
)
"""Tried in this order: the command and its arguments; the text is written to its stdin."""

_TIMEOUT: Final = 5.0
"""Seconds a clipboard tool may take before it counts as failed."""


def copy_to_clipboard(text: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Put ``text`` on the clipboard; ``False`` when no tool is installed or none succeeded.

    The tools' output goes to ``/dev/null``: ``wl-copy`` and ``xclip`` stay in the background
    to serve the selection, and would otherwise keep a pipe of ours open.
    """
    path = env.get("PATH") if env is not None else None
    data = text.encode("utf-8", errors="replace")
    for command, *arguments in CLIPBOARD_TOOLS:
        program = shutil.which(command, path=path)
        if program is None:
            continue
        try:
            done = subprocess.run(
                [program, *arguments],
                input=data,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=dict(env) if env is not None else None,
                timeout=_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return True
    return False
