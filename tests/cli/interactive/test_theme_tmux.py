"""``"theme": "light"`` in a real terminal (tmux): the colors pictx prints are pi's light
palette (read back with ``tmux capture-pane -e``), not the dark one and not the terminal's own
ANSI colors; without the setting they stay the terminal's own."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.color import Color, ColorSystem

from pi_context.cli.interactive.theme import BUILTIN_THEMES, REQUIRED_TOKENS
from tests.cli.interactive.tmux_screen import NEEDS_TMUX, Screen, tmux_pictx

pytestmark = NEEDS_TMUX


def _colored(screen: Screen) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-e", "-p", "-t", screen.name],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _sgr(hex_color: str) -> str:
    """The foreground code a 256-color terminal (this tmux pane) gets for ``hex_color``."""
    number = Color.parse(hex_color).downgrade(ColorSystem.EIGHT_BIT).number
    return f"38;5;{number}"


def _foreground_at(text: str, marker: str) -> str | None:
    """The foreground code in effect where ``marker`` is shown (``tmux capture-pane -e``
    writes a code only where the color changes, so it is followed from the start)."""
    foreground: str | None = None
    position = text.index(marker)
    for match in re.finditer(r"\x1b\[([0-9;]*)m", text[:position]):
        params = match.group(1).split(";")
        i = 0
        while i < len(params):
            code = params[i]
            if code in ("", "0", "39"):
                foreground = None
            elif code == "38" and i + 2 < len(params) and params[i + 1] == "5":
                foreground = f"38;5;{params[i + 2]}"
                i += 2
            elif code == "38" and i + 4 < len(params) and params[i + 1] == "2":
                foreground = "38;2;" + ";".join(params[i + 2 : i + 5])
                i += 4
            elif code.isdigit() and (30 <= int(code) <= 37 or 90 <= int(code) <= 97):
                foreground = code
            elif code in ("48", "58") and i + 1 < len(params):
                i += 2 if params[i + 1] == "5" else 4
            i += 1
    return foreground


@contextmanager
def _pictx(tmp_path: Path, settings: dict[str, object]) -> Iterator[Screen]:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["ANSWER"]))
    args = ["--session-dir", str(tmp_path / "sessions"), "--model", f"scripted:{script}"]
    with tmux_pictx(tmp_path, "theme", args, agent_dir=agent, size=(120, 30)) as screen:
        screen.wait_for(lambda s: "›" in s, "the prompt")
        yield screen


def _error_shown(screen: Screen, name: str) -> str:
    """Type an unknown command; the screen with colors once its error shows."""
    screen.type_line(f"/{name}")
    screen.wait_for(lambda s: f"Unknown command /{name}" in s, "the error")
    return _colored(screen)


def _run(tmp_path: Path, settings: dict[str, object]) -> str:
    with _pictx(tmp_path, settings) as screen:
        return _error_shown(screen, "nosuchcommand")


def test_the_light_theme_colors_the_terminal(tmp_path: Path) -> None:
    shown = _run(tmp_path, {"theme": "light"})
    light, dark = BUILTIN_THEMES["light"].colors, BUILTIN_THEMES["dark"].colors
    assert _sgr(light["muted"]) != _sgr(dark["muted"])
    assert _foreground_at(shown, "Type /help for commands") == _sgr(light["muted"])
    assert _sgr(light["error"]) != _sgr(dark["error"])
    assert _foreground_at(shown, "Unknown command /nosuchcommand") == _sgr(light["error"])
    assert _foreground_at(shown, "pictx ·") == _sgr(light["text"])  # the bold title


def test_without_a_theme_the_terminals_own_colors_stay(tmp_path: Path) -> None:
    shown = _run(tmp_path, {})
    assert _foreground_at(shown, "Unknown command /nosuchcommand") == "31"
    assert _foreground_at(shown, "Type /help for commands") is None


def test_editing_the_active_theme_file_recolors_at_the_next_prompt(tmp_path: Path) -> None:
    tokens = BUILTIN_THEMES["dark"].colors  # any values will do for the tokens not looked at
    path = tmp_path / "agent" / "themes" / "sea.json"
    path.parent.mkdir(parents=True)

    def write(error: str, stamp: int) -> None:
        colors = {t: tokens.get(t, "#808080") for t in REQUIRED_TOKENS} | {"error": error}
        path.write_text(json.dumps({"name": "sea", "colors": colors}), encoding="utf-8")
        os.utime(path, (stamp, stamp))

    write("#ff0000", 1_000_000)
    with _pictx(tmp_path, {"theme": "sea"}) as screen:
        first = _error_shown(screen, "first")
        assert _foreground_at(first, "Unknown command /first") == _sgr("#ff0000")
        write("#00ff00", 2_000_000)
        screen.type_line("")  # a new prompt: the file is read again
        second = _error_shown(screen, "second")
        assert _foreground_at(second, "Unknown command /second") == _sgr("#00ff00")
