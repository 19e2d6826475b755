"""A pi user's editor habits in a real terminal (tmux): Ctrl+G opens ``$EDITOR`` on the input,
Shift+Enter (through tmux's extended keys) and Ctrl+J add lines, Ctrl+O and Ctrl+T expand tool
output and hide thinking, ``/copy`` and Ctrl+X copy the last answer (OSC 52 caught by tmux, or
a clipboard command), Ctrl+Z suspends and ``fg`` resumes, and ``keybindings.json`` remaps the
keys. Every wait is for something on the screen, under a generous deadline that is only
reached when something is wrong."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from pi_context.cli.interactive.mode import CLEAR_TWICE_SECONDS
from tests.cli.interactive.tmux_screen import NEEDS_TMUX, Screen, tmux_pictx

pytestmark = NEEDS_TMUX

PI = json.loads(
    (Path(__file__).parents[2] / "data" / "editor_habits" / "pi-1.6.0.json").read_text("utf-8")
)
"""What pi 1.6.0 did with the same keys (``record_pi_editor_habits``, run by hand)."""

REPLIES = [
    {
        "thinking": "PONDERING-HARD",
        "toolCalls": [{"name": "bash", "arguments": {"command": "seq 1 30"}}],
    },
    "ANSWER-ONE",
    {"thinking": "SECOND-PONDER", "text": "ANSWER-TWO"},
    {"text": "NEVER-SHOWN", "delay": 600},
]


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _users(sessions: Path) -> list[str]:
    (path,) = sessions.rglob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    return [
        "".join(b.get("text", "") for b in m["content"]) for m in messages if m["role"] == "user"
    ]


def _prompt_line(shown: str) -> str:
    lines = [line for line in shown.splitlines() if line.startswith("› ")]
    return lines[-1] if lines else ""


def test_editor_keys_copy_and_suspend(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES), encoding="utf-8")
    editor = _script(tmp_path / "edit.sh", "printf ' EDITED' >> \"$1\"")
    sessions = tmp_path / "sessions"
    args = ["--session-dir", str(sessions), "--model", f"scripted:{replies}"]
    # no display and no clipboard tool: /copy goes through the terminal (OSC 52)
    env = {"EDITOR": str(editor), "VISUAL": "", "PATH": "/usr/bin:/bin"}
    env |= {"DISPLAY": "", "WAYLAND_DISPLAY": "", "PI_CLIPBOARD_OSC52": ""}
    with tmux_pictx(
        tmp_path,
        "habits",
        args,
        agent_dir=agent,
        size=(120, 60),
        extra_env=env,
        # as pi's tmux doc sets it up; set-clipboard keeps what OSC 52 copies in a buffer
        server_options=(("extended-keys", "on"), ("set-clipboard", "on")),
    ) as screen:
        screen.wait_for(lambda s: "›" in s, "the prompt")
        # Ctrl+G: the editor edits the input, which comes back to the prompt, not sent
        screen.keys("-l", "draft")
        screen.keys("C-g")
        screen.wait_for(lambda s: "› draft EDITED" in s, "the edited input")
        # Shift+Enter (an extended key through tmux) and Ctrl+J add lines; Enter sends
        screen.keys("S-Enter")
        screen.keys("-l", "line two")
        screen.keys("C-j")
        screen.keys("-l", "line three")
        screen.wait_for(lambda s: "line three" in s, "the third line")
        assert "ANSWER-ONE" not in screen.text()
        screen.keys("Enter")
        shown = screen.wait_for(lambda s: "ANSWER-ONE" in s, "the answer")
        assert "PONDERING-HARD" in shown
        assert "22 more lines (collapsed) · Ctrl+O to expand" in shown
        assert "\n30\n" not in shown
        assert _users(sessions) == ["draft EDITED\nline two\nline three"]
        assert _users(sessions) == [PI["sent"]]  # pi sent the same text
        # Ctrl+O: the collapsed output in full; Ctrl+T: thinking hidden, and saved
        screen.keys("C-o")
        shown = screen.wait_for(lambda s: "Tool output: expanded" in s, "the expanded output")
        assert "\n30\n" in shown
        screen.keys("C-t")
        screen.wait_for(lambda s: "Thinking blocks: hidden" in s, "thinking hidden")
        settings = json.loads((agent / "settings.json").read_text(encoding="utf-8"))
        assert settings["hideThinkingBlock"] is True
        assert settings["hideThinkingBlock"] == PI["hideThinkingBlock"]
        screen.type_line("next")
        shown = screen.wait_for(lambda s: "ANSWER-TWO" in s, "the second answer")
        assert "SECOND-PONDER" not in shown
        assert "Thinking..." in shown
        # /copy: no display and no clipboard tool here, so OSC 52, which tmux keeps
        screen.type_line("/copy")
        screen.wait_for(lambda s: "Copied last agent message to clipboard" in s, "the copy")
        buffer = subprocess.run(
            [*screen.tmux, "show-buffer"], capture_output=True, text=True, check=True
        ).stdout
        assert buffer == "ANSWER-TWO"  # the answer's text alone, as pi copies it
        assert PI["copied"] == "PI-ANSWER"
        # Ctrl+Z suspends (the shell takes the terminal), fg resumes with the input redrawn
        screen.keys("-l", "kept input")
        screen.keys("C-z")
        screen.wait_for(lambda s: "Stopped" in s, "the suspended job")
        screen.type_line("echo SHELL-$((40 + 2))")
        screen.wait_for(lambda s: "SHELL-42" in s, "the shell working meanwhile")
        screen.type_line("fg")
        screen.wait_for(lambda s: _prompt_line(s) == "› kept input", "the input after fg")
        screen.keys("S-Enter")  # extended keys are on again
        screen.keys("-l", "after")
        screen.wait_for(lambda s: "  after" in s, "a new line after fg")
        screen.keys("C-c")  # clears the input
        # an editor that cannot start: a one-line notice, the input kept
        settings["externalEditor"] = "no-such-editor-here"
        (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        screen.type_line("/reload")
        screen.wait_for(lambda s: "Reloaded" in s, "the reload")
        screen.keys("-l", "keep me")
        screen.keys("C-g")
        shown = screen.wait_for(
            lambda s: "Failed to launch external editor: no-such-editor-here" in s,
            "the notice",
        )
        screen.wait_for(lambda s: _prompt_line(s).startswith("› keep me"), "the input kept")
        # Ctrl+Z while an answer runs suspends at once; after fg the run goes on (Esc aborts it)
        time.sleep(CLEAR_TWICE_SECONDS + 0.1)  # a second Ctrl+C within the window would exit
        screen.keys("C-c")
        screen.type_line("slow")
        screen.wait_for(lambda s: "Waiting for the model" in s, "the run")
        screen.keys("C-z")
        shown = screen.wait_for(lambda s: s.count("Stopped") == 2, "suspended during the run")
        assert "NEVER-SHOWN" not in shown
        screen.type_line("fg")
        screen.wait_for(lambda s: s.count("Waiting for the model") >= 2, "the run resumed")
        screen.keys("Escape")
        screen.wait_for(lambda s: "Aborting" in s, "the resumed run aborted")


def test_a_keybindings_file_remaps_and_reports(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "keybindings.json").write_text(
        json.dumps(
            {
                "$schema": "https://example.invalid/keybindings.schema.json",
                "app.editor.external": "alt+e",
                "expandTools": ["ctrl+y"],  # pi's older name of app.tools.expand
                "app.message.copy": "ctrl+k",
                "app.no.such.action": "ctrl+w",
                "app.thinking.toggle": "hyper+q",
            }
        ),
        encoding="utf-8",
    )
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(REPLIES), encoding="utf-8")
    editor = _script(tmp_path / "edit.sh", "printf 'FROM-ALT-E' > \"$1\"")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    copied = tmp_path / "copied.txt"
    _script(bin_dir / "xclip", f"cat > {copied}")  # a clipboard command that works
    env = {"EDITOR": str(editor), "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    args = ["--no-session", "--model", f"scripted:{replies}"]
    with tmux_pictx(tmp_path, "keymap", args, agent_dir=agent, size=(160, 50), extra_env=env) as (
        screen
    ):
        shown = screen.wait_for(lambda s: "›" in s, "the prompt")
        flat = _flat(screen)
        assert flat.count("app.no.such.action: unknown action; not applied") == 1
        assert flat.count("app.thinking.toggle: key 'hyper+q': unknown modifier 'hyper'") == 1
        assert str(agent / "keybindings.json") in flat
        screen.keys("-l", "x")
        screen.keys("M-e")
        screen.wait_for(lambda s: "› FROM-ALT-E" in s, "the editor on Alt+E")
        screen.keys("C-u")
        screen.type_line("go")
        shown = screen.wait_for(lambda s: "ANSWER-ONE" in s, "the answer")
        assert "Ctrl+Y to expand" in shown
        screen.keys("C-y")
        shown = screen.wait_for(lambda s: "Tool output: expanded" in s, "expanded by Ctrl+Y")
        screen.keys("C-k")
        screen.wait_for(lambda s: "Copied last agent message" in s, "the copy on Ctrl+K")
        assert copied.read_text(encoding="utf-8") == "ANSWER-ONE"
        screen.type_line("/hotkeys")
        hotkeys = screen.wait_for(lambda s: "hide / show thinking" in s, "the hotkeys table")
        assert _row(hotkeys, "edit the input") == "Alt+E"
        assert _row(hotkeys, "tool output in full") == "Ctrl+Y"
        assert _row(hotkeys, "copy the last answer") == "Ctrl+K"
        assert _row(hotkeys, "hide / show thinking") == "(none)"
        # /reload reads the file again
        (agent / "keybindings.json").write_text(
            json.dumps({"app.editor.external": "ctrl+e", "app.other.action": "ctrl+w"}),
            encoding="utf-8",
        )
        screen.type_line("/reload")
        screen.wait_for(lambda s: "Reloaded" in s, "the reload")
        assert _flat(screen).count("app.other.action: unknown action; not applied") == 1
        screen.keys("-l", "y")
        screen.keys("C-e")
        screen.wait_for(lambda s: _prompt_line(s) == "› FROM-ALT-E", "the editor on Ctrl+E")


def _flat(screen: Screen) -> str:
    """The screen with wrapped lines joined (a long problem line wraps)."""
    return screen.text().replace("\n", "")


def _row(table: str, action: str) -> Any:
    (line,) = [line for line in table.splitlines() if action in line]
    return line.split(action)[0].strip().rsplit("  ", 1)[-1].strip()
