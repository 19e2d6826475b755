"""The editor habits of pi's interactive mode, as key bindings for the prompt.

* ``app.editor.external`` (Ctrl+G): the input goes to ``<tmp>/pi-editor-*/prompt.md`` and the
  editor opens on it: the ``externalEditor`` setting, else ``$VISUAL``, else ``$EDITOR``, else
  ``nano`` (the command is split on spaces; the file is its last argument). When the editor
  exits with 0 the file's text (a byte-order mark and one trailing newline removed) replaces
  the input, not sent; an editor that cannot start or exits otherwise leaves the input as it
  was, with a one-line notice.
* ``app.suspend`` (Ctrl+Z): the terminal is put back as it was and pictx stops (SIGTSTP to
  its process group); ``fg`` resumes it and the prompt is drawn again.
* ``tui.input.newLine`` (Shift+Enter, Ctrl+J) inserts a newline; ``tui.input.submit`` (Enter)
  sends.
* ``app.tools.expand`` (Ctrl+O) shows tool output in full from now on, and prints in full the
  outputs of the last run that were collapsed; again, collapses them again. Not saved (as in
  pi, every start is collapsed).
* ``app.thinking.toggle`` (Ctrl+T) hides or shows thinking blocks (a hidden one is a
  ``Thinking...`` line), saved as ``hideThinkingBlock`` in the global settings as pi saves it.
* ``app.message.copy`` (Ctrl+X) and ``/copy`` copy the last assistant answer (see
  :func:`copy_last_answer`).

The bindings come from the keymap (:mod:`pi_context.cli.interactive.keymap`), so
``keybindings.json`` remaps them.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output

from pi_context.cli.interactive.clipboard import copy_to_clipboard
from pi_context.cli.interactive.keymap import Keymap

__all__ = [
    "ENABLE_EXTENDED_KEYS",
    "HIDDEN_THINKING",
    "MAX_OSC52_CHARS",
    "RESET_EXTENDED_KEYS",
    "DisplayState",
    "HabitActions",
    "ShownOutput",
    "copy_last_answer",
    "edit_externally",
    "editor_habit_bindings",
    "external_editor_command",
    "last_answer_text",
    "osc52",
]

ENABLE_EXTENDED_KEYS: Final = "\x1b[>4;1m"
"""xterm's modifyOtherKeys level 1: Shift+Enter and other modified keys arrive told apart
(tmux forwards them with ``extended-keys on``); plain and Ctrl keys are sent as before."""
RESET_EXTENDED_KEYS: Final = "\x1b[>4;0m"

MAX_OSC52_CHARS: Final = 100_000
"""The longest base64 payload written as OSC 52 (pi's limit)."""

HIDDEN_THINKING: Final = "Thinking..."


@dataclass(frozen=True, slots=True)
class ShownOutput:
    """A tool output shown collapsed: what it said in full, for ``app.tools.expand``."""

    title: str
    text: str
    is_error: bool


@dataclass(slots=True)
class DisplayState:
    """What the transcript shows: tool output in full or collapsed, thinking or its label."""

    tools_expanded: bool = False
    hide_thinking: bool = False
    expand_key: str = "Ctrl+O"
    """The key named in the hint under a collapsed output."""
    collapsed: list[ShownOutput] = field(default_factory=list)
    """The outputs of the last run shown collapsed (printed in full on expanding)."""


# -- the external editor ----------------------------------------------------------------------


def external_editor_command(
    settings: Mapping[str, object], env: Mapping[str, str] | None = None
) -> str:
    """``externalEditor`` (a non-blank string), else ``$VISUAL``, else ``$EDITOR``, else ``nano``."""
    configured = settings.get("externalEditor")
    if isinstance(configured, str) and configured.strip():
        return configured
    environ = os.environ if env is None else env
    return environ.get("VISUAL") or environ.get("EDITOR") or "nano"


_CAN_IGNORE_CTRL_C: Final = os.name == "posix"


def _default_ctrl_c() -> None:
    """In the editor's process: Ctrl-C acts as it normally does there."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def _ctrl_c_left_to_the_editor() -> Iterator[None]:
    """Ctrl-C pressed in the editor signals the whole foreground job: pictx ignores it while
    the editor runs, so it does not also act as pictx's Ctrl-C (clearing the input)."""
    if not _CAN_IGNORE_CTRL_C or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def edit_externally(
    command: str,
    content: str,
    *,
    say: Callable[[str], None] = lambda text: print(text, flush=True),
    cwd: Path | None = None,
) -> tuple[str | None, str | None]:
    """Run ``command`` on a temporary ``prompt.md`` holding ``content``; ``(text, None)`` with
    the edited text, or ``(None, notice)`` when the editor failed (the input stays)."""
    directory = Path(tempfile.mkdtemp(prefix="pi-editor-"))
    path = directory / "prompt.md"
    try:
        path.write_text(content, encoding="utf-8")
        argv = command.split()
        say(f"Opening {command} on the input; pictx continues when it exits.")
        program = shutil.which(argv[0]) if argv else None
        if program is None:
            return None, f"Failed to launch external editor: {command}"
        try:
            with _ctrl_c_left_to_the_editor():
                done = subprocess.run(
                    [program, *argv[1:], str(path)],
                    cwd=cwd,
                    check=False,
                    preexec_fn=_default_ctrl_c if _CAN_IGNORE_CTRL_C else None,
                )
        except OSError:
            return None, f"Failed to launch external editor: {command}"
        if done.returncode != 0:
            how = (
                f"signal {signal.Signals(-done.returncode).name}"
                if done.returncode < 0
                else f"code {done.returncode}"
            )
            return None, f"External editor exited with {how}; input unchanged"
        text = path.read_text(encoding="utf-8", errors="replace").removeprefix("\ufeff")
        return text.removesuffix("\n"), None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# -- copying the last answer ------------------------------------------------------------------


def last_answer_text(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The text of the last assistant message, as pi picks it: an answer that did not end
    normally (aborted, failed, or only calling tools) counts only when it has text; ``None``
    when there is none or it is blank."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        if message.get("stopReason") != "stop" and not any(t.strip() for t in texts):
            continue
        return "".join(texts).strip() or None
    return None


def osc52(text: str) -> str | None:
    """The OSC 52 sequence that puts ``text`` on the terminal's clipboard; ``None`` when it
    is longer than :data:`MAX_OSC52_CHARS` once encoded."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return None if len(encoded) > MAX_OSC52_CHARS else f"\x1b]52;c;{encoded}\x07"


def copy_last_answer(
    text: str | None,
    write_terminal: Callable[[str], None] | None,
    *,
    env: Mapping[str, str] | None = None,
    platform: str = sys.platform,
) -> tuple[bool, str]:
    """Copy ``text``: a clipboard tool first; OSC 52 to the terminal (``write_terminal``)
    in a remote session (``SSH_CONNECTION``, ``SSH_CLIENT``, ``MOSH_CONNECTION``,
    ``PI_CLIPBOARD_OSC52=1``), and on Linux without a display when no tool worked. Returns
    ``(copied, the line to show)``."""
    if text is None:
        return False, "No agent messages to copy yet."
    environ = os.environ if env is None else env
    copied = copy_to_clipboard(text, env=env)
    remote = any(environ.get(k) for k in ("SSH_CONNECTION", "SSH_CLIENT", "MOSH_CONNECTION"))
    remote = remote or environ.get("PI_CLIPBOARD_OSC52") == "1"
    headless = platform.startswith("linux") and not any(
        environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "TERMUX_VERSION")
    )
    oversized = False
    if write_terminal is not None and (remote or (not copied and headless)):
        sequence = osc52(text)
        if sequence is None:
            oversized = True
        else:
            write_terminal(sequence)
            copied = True
    if copied:
        return True, "Copied last agent message to clipboard"
    if oversized:
        return False, "Clipboard unavailable: text exceeds the OSC 52 size limit"
    if environ.get("WAYLAND_DISPLAY"):
        return False, "Clipboard unavailable: install `wl-clipboard` (`wl-copy`) or check Wayland"
    if environ.get("DISPLAY"):
        return False, "Clipboard unavailable: install `xclip` or `xsel`, or check X11 access"
    return False, "Clipboard unavailable: no clipboard tool and no terminal to copy through"


# -- the key bindings ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HabitActions:
    """What the bindings call into (the interactive shell provides them)."""

    notice: Callable[[str, str], None]
    """``(line, style)`` shown above the prompt."""
    editor_command: Callable[[], str]
    toggle_tools: Callable[[], None]
    toggle_thinking: Callable[[], None]
    copy: Callable[[], None]
    output: Callable[[], Output | None]
    """The terminal (``None`` when the input is not one): extended keys are switched off
    around a suspend and the external editor."""
    cwd: Callable[[], Path]


def _extended_keys(output: Output | None, on: bool) -> None:
    if output is not None:
        output.write_raw(ENABLE_EXTENDED_KEYS if on else RESET_EXTENDED_KEYS)
        output.flush()


def editor_habit_bindings(keymap: Keymap, actions: HabitActions) -> KeyBindings:
    """Ctrl+G, Ctrl+Z, Shift+Enter/Ctrl+J, Ctrl+O, Ctrl+T and Ctrl+X, on the keys of
    ``keymap``."""
    bindings = KeyBindings()

    on = keymap.binder(bindings)

    if not any(keys == ("c-z",) for bound in keymap.keys.values() for keys in bound):

        @bindings.add("c-z")
        def _unbound_ctrl_z(_event: KeyPressEvent) -> None:
            """Bound to nothing, Ctrl+Z does nothing (as in pi), where prompt_toolkit would
            type a raw ^Z into the input."""

    @on("tui.input.newLine")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @on("app.editor.external")
    def _external(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        command = actions.editor_command()
        output = actions.output()

        def run() -> None:
            _extended_keys(output, False)
            try:
                text, problem = edit_externally(command, buffer.text, cwd=actions.cwd())
            finally:
                _extended_keys(output, True)
            if text is not None:
                buffer.text = text
                buffer.cursor_position = len(text)
            else:
                actions.notice(problem or "", "yellow")

        run_in_terminal(run)

    @on("app.suspend")
    def _suspend(event: KeyPressEvent) -> None:
        output = actions.output()

        def stop() -> None:
            _extended_keys(output, False)
            try:
                os.kill(0, signal.SIGTSTP)  # the whole job, as the shell's Ctrl+Z would
            finally:
                _extended_keys(output, True)

        if hasattr(signal, "SIGTSTP"):
            run_in_terminal(stop)
        else:
            actions.notice("Suspend to background is not supported here", "yellow")

    @on("app.tools.expand")
    def _tools(_event: KeyPressEvent) -> None:
        actions.toggle_tools()

    @on("app.thinking.toggle")
    def _thinking(_event: KeyPressEvent) -> None:
        actions.toggle_thinking()

    @on("app.message.copy")
    def _copy(_event: KeyPressEvent) -> None:
        actions.copy()

    return bindings
