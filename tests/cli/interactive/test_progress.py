"""The run indicator in a real terminal (tmux): it appears from Enter on, names what the run
is doing (waiting for the model, a tool running), keeps the status line under it, and is
erased when the run ends. The screen is read with ``tmux capture-pane``; every wait is for
something to appear on it, and the run only moves on when the test says so (a file)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.cli.interactive.progress import output_tail
from tests.cli.interactive.tmux_screen import NEEDS_TMUX, Screen, tmux_pictx

pytestmark = NEEDS_TMUX


def _start(tmp_path: Path, replies: list[Any]) -> Iterator[Screen]:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(replies))
    with tmux_pictx(
        tmp_path,
        "progress",
        ["--no-session", "--model", f"scripted:{script}"],
        agent_dir=tmp_path / "agent",
    ) as screen:
        yield screen


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[Screen]:
    gate = tmp_path / "go"
    replies = [
        {"text": "never shown", "delay": 600},
        {
            "text": "",
            "toolCalls": [
                {
                    "name": "bash",
                    "arguments": {"command": f"until [ -f {gate} ]; do sleep 0.1; done"},
                }
            ],
        },
        "ALL-DONE-ANSWER",
    ]
    yield from _start(tmp_path, replies)


LIVE_COMMAND = (
    "printf 'line %s\\n' 1 2 3 4 5 6 7; printf 'pct 10%%\\rpct 99%%\\n';"
    " printf '\\033]52;c;SGVsbG8=\\007clip\\n'; until [ -f {gate} ]; do sleep 0.1; done"
)


@pytest.fixture
def live_screen(tmp_path: Path) -> Iterator[Screen]:
    command = LIVE_COMMAND.format(gate=tmp_path / "go")
    replies = [
        {"text": "", "toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
        "ALL-DONE-ANSWER",
    ]
    yield from _start(tmp_path, replies)


def _status_under(label: str) -> Callable[[str], bool]:
    def ok(shown: str) -> bool:
        lines = [line for line in shown.splitlines() if line.strip()]
        at = next((n for n, line in enumerate(lines) if label in line), None)
        return at is not None and at + 1 < len(lines) and "scripted/replies" in lines[at + 1]

    return ok


def test_the_indicator_shows_each_phase_with_the_status_and_is_erased(
    screen: Screen, tmp_path: Path
) -> None:
    screen.wait_for(lambda s: "›" in s, "the input prompt")
    screen.keys("first question", "Enter")
    shown = screen.wait_for(_status_under("Waiting for the model…"), "waiting + status line")
    assert "Esc to abort" in shown
    screen.keys("Escape")
    shown = screen.wait_for(lambda s: "Aborting" in s and s.rstrip().endswith("›"), "the abort")
    assert "Waiting for the model" not in shown

    screen.keys("second question", "Enter")
    screen.wait_for(_status_under("Running bash…"), "the running tool + status line")
    (tmp_path / "go").touch()
    shown = screen.wait_for(
        lambda s: "ALL-DONE-ANSWER" in s and s.rstrip().endswith("›"), "the answer and a prompt"
    )
    assert "Running bash" not in shown
    assert "Waiting for the model" not in shown


def test_a_running_commands_last_lines_show_under_the_indicator_until_it_ends(
    live_screen: Screen, tmp_path: Path
) -> None:
    """Live tool output: while the command waits, its last five lines are on screen (a
    carriage return starts a line over, an escape sequence is shown, never obeyed), then the
    result replaces them."""
    live_screen.wait_for(lambda s: "›" in s, "the input prompt")
    live_screen.keys("run it", "Enter")
    shown = live_screen.wait_for(
        lambda s: "Running bash…" in s and "clip" in s, "the running command's output"
    )
    rows = [line.strip() for line in shown.splitlines()]
    at = rows.index(next(r for r in rows if "Running bash…" in r))
    assert rows[at + 1 : at + 6] == ["… 4 earlier lines", "line 5", "line 6", "line 7", "pct 99%"]
    clip = rows[at + 6]  # the escape is shown as a character (the bell dropped), not obeyed
    assert clip.startswith("␛]52;c;SGVsbG8=")
    assert clip.endswith("clip")
    (tmp_path / "go").touch()
    shown = live_screen.wait_for(
        lambda s: "ALL-DONE-ANSWER" in s and s.rstrip().endswith("›"), "the answer"
    )
    assert "earlier lines" not in shown
    assert "line 1" in shown  # the finished result, printed in full (collapsed after 8 lines)


def test_output_tail_is_bounded_and_reads_like_a_terminal() -> None:
    assert output_tail("") == ([], 0)
    assert output_tail("a\nb\n") == (["a", "b"], 0)
    assert output_tail("10%\r50%\r100%\ndone\n") == (["100%", "done"], 0)
    many = "".join(f"row {n}\n" for n in range(100_000))
    rows, hidden = output_tail(many)
    assert rows == [f"row {n}" for n in range(99_995, 100_000)]
    assert hidden == 99_995
    assert output_tail("x" * 1_000_000) == (["x" * 4096], 0)
