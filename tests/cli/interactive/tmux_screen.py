"""``pictx`` in a real terminal under tmux, for the tests that read its screen: start it in a
detached tmux session, type into it, wait for what it shows (``tmux capture-pane``).

Every wait is for something to appear on the screen, under a generous deadline that is only
reached when something is wrong. Test modules that use this are run one after another on one
xdist worker (tests/conftest.py groups them as terminal tests).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["DEADLINE", "NEEDS_TMUX", "Screen", "tmux_pictx"]

NEEDS_TMUX = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

DEADLINE = 90.0
"""Seconds a screen may take to show what is expected: only reached when something is wrong."""


class Screen:
    """One tmux session: its screen as text, keys sent to it."""

    def __init__(self, name: str, socket: str | None = None) -> None:
        self.name = name
        self.tmux = ["tmux"] if socket is None else ["tmux", "-L", socket]
        """The tmux command, on the session's own server when it has one."""

    def text(self) -> str:
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def wait_for(self, ok: Callable[[str], bool], what: str) -> str:
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            shown = self.text()
            if ok(shown):
                return shown
            time.sleep(0.1)
        raise AssertionError(f"never shown: {what}\n{self.text()}")

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def type_line(self, text: str) -> None:
        self.keys("-l", text)
        self.keys("Enter")


@contextmanager
def tmux_pictx(
    tmp_path: Path,
    label: str,
    args: Sequence[str],
    *,
    agent_dir: Path,
    size: tuple[int, int] = (100, 30),
    extra_env: Mapping[str, str] | None = None,
    server_options: Sequence[tuple[str, str]] = (),
) -> Iterator[Screen]:
    """``pictx ARGS`` started in a new tmux session (``label`` names it), in ``tmp_path/proj``
    with ``HOME`` at ``tmp_path`` and ``PI_CODING_AGENT_DIR`` at ``agent_dir`` (and
    ``extra_env``); the session is killed at the end. With ``server_options`` (e.g.
    ``("extended-keys", "on")``) the session runs on a tmux server of its own, started with
    them and killed at the end, so the shared server's options stay as they are."""
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    env: Mapping[str, str] = {
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        **(extra_env or {}),
    }
    command = " ".join(
        [
            "env",
            *(shlex.quote(f"{k}={v}") for k, v in env.items()),
            shlex.quote(sys.executable),
            "-m pi_context.cli.main",
            *(shlex.quote(a) for a in args),
        ]
    )
    name = f"pictx-{label}-{os.getpid()}-{tmp_path.name}"
    width, height = size
    where = ["-x", str(width), "-y", str(height), "-c", str(project)]
    socket = name if server_options else None
    tmux = ["tmux"] if socket is None else ["tmux", "-L", socket, "-f", os.devnull]
    subprocess.run([*tmux, "new-session", "-d", "-s", name, *where], check=True)
    try:
        screen = Screen(name, socket)
        for option, value in server_options:
            subprocess.run([*screen.tmux, "set-option", "-s", option, value], check=True)
        screen.keys(command, "Enter")
        yield screen
    finally:
        subprocess.run([*tmux, "kill-session", "-t", name], check=False)
        if socket is not None:
            subprocess.run([*screen.tmux, "kill-server"], check=False)
