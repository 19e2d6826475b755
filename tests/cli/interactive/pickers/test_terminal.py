"""The pickers in a real pseudo-terminal (pexpect): ``/model`` (and Ctrl+L),
``/scoped-models`` with Ctrl+P / Alt+P / Shift+Ctrl+P, ``/thinking``, ``/resume``, ``/fork``
and ``/hotkeys``. Models are served by a 127.0.0.1 replay server (``replay/tiny``,
``replay/thinker``); built-in models have no key here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_context.session_dirs import default_session_dir, session_file_name
from tests.cli.replay_world import HANG_GUARD, PICTX, ReplayWorld, text_reply

pexpect = pytest.importorskip("pexpect")


class Pty:
    def __init__(self, replay_world: ReplayWorld, *args: str) -> None:
        self.replay_world = replay_world
        self.child = pexpect.spawn(
            PICTX[0],
            [*PICTX[1:], *args],
            cwd=str(replay_world.project),
            env={**replay_world.env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"},
            encoding="utf-8",
            dimensions=(40, 120),
            timeout=HANG_GUARD,
        )
        self.log = (replay_world.project.parent / "terminal.log").open("a", encoding="utf-8")
        self.child.logfile_read = self.log
        self.expect("›")

    def expect(self, text: str) -> None:
        """Wait for ``text`` on the screen; prompt_toolkit redraws only what changed, so
        cursor moves may sit between its characters, and a character already on the screen
        may be skipped over (cursor forward)."""
        between = r"(?:\x1b\[[0-9;?]*[A-Za-z]|[\r\n\x08])*"
        self.child.expect(between.join(f"(?:{re.escape(c)}|\x1b\\[C)" for c in text))

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str, until: str) -> None:
        self.send(text + "\r")
        self.expect(until)

    def quit(self) -> None:
        self.expect("›")
        self.send("/quit\r")
        self.child.expect(pexpect.EOF)
        self.child.close()

    def settings(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(
            (self.replay_world.agent_dir / "settings.json").read_text(encoding="utf-8")
        )
        return data


@pytest.fixture
def pty(replay_world: ReplayWorld) -> Iterator[Any]:
    started: list[Pty] = []

    def start(*args: str) -> Pty:
        term = Pty(replay_world, *args)
        started.append(term)
        return term

    yield start
    for term in started:
        if term.child.isalive():
            term.child.terminate(force=True)
        term.log.close()


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_model_picker_exact_search_save_and_missing_key(
    pty: Any, replay_world: ReplayWorld
) -> None:
    replay_world.write_settings({"theme": "dark"})
    replay_world.server.add(text_reply("From tiny."))
    term = pty("--model", "replay/tiny")
    term.line("/model thinker", "Model: thinker")  # an exact id switches at once
    term.expect("›")
    term.send("/model\r")
    term.expect("Select model (all)")
    term.send("tiny")
    term.send("\x13")  # Ctrl+S: switch and save as the default
    term.expect("Default model: replay/tiny")
    term.expect("›")
    term.send("\x0c")  # Ctrl+L opens the picker too
    term.expect("Select model")
    term.send("claude-sonnet-4-5\r")
    term.expect("No API key for anthropic/claude-sonnet-4-5")
    term.send("\x03")  # closes the picker, nothing changes
    term.expect("›")
    term.line("/model claude-haiku-4-5", "Select model")  # no key: the picker, searching
    term.send("\x03")
    term.expect("›")
    term.line("hello", "From tiny.")
    term.quit()
    assert replay_world.server.requests[0].json()["model"] == "tiny"
    changes = [e["modelId"] for e in replay_world.entries() if e["type"] == "model_change"]
    assert changes == ["tiny", "thinker", "tiny"]
    assert term.settings() == {"theme": "dark", "defaultProvider": "replay", "defaultModel": "tiny"}


def test_scoped_models_saves_the_scope_and_cycling_goes_both_ways(
    pty: Any, replay_world: ReplayWorld
) -> None:
    term = pty("--model", "replay/tiny")
    term.send("/scoped-models\r")
    term.expect("Model scope (0 enabled")
    term.send("tiny ")  # search, then Space toggles the selected model
    term.send("\x7f" * 4 + "thinker ")
    term.send("\x13")  # Ctrl+S saves to settings
    term.expect("Model scope (saved to settings): replay/tiny, replay/thinker")
    term.expect("›")
    term.send("\x10")  # Ctrl+P
    term.expect("Switched to thinker")
    term.send("\x1bp")  # Alt+P: backward
    term.expect("Switched to tiny")
    term.send("\x1b[112;6u")  # Shift+Ctrl+P as the kitty keyboard protocol reports it
    term.expect("Switched to thinker")
    term.quit()
    assert term.settings()["enabledModels"] == ["replay/tiny", "replay/thinker"]


def test_thinking_command_and_picker(pty: Any, replay_world: ReplayWorld) -> None:
    replay_world.server.add(text_reply("Thought."))
    term = pty("--model", "replay/thinker")
    term.line("/thinking HIGH", "Thinking level: high")
    term.line(
        "/thinking max",
        'Unknown thinking level "max". Available levels: off, minimal, low, medium, high.',
    )
    term.expect("›")
    term.send("/thinking\r")
    term.expect("Thinking level (now high)")
    term.send("\x1b[A")  # Up: medium
    term.send("\x13")  # Ctrl+S: set and save as the default
    term.expect("Thinking level: medium (saved as default)")
    term.line("think", "Thought.")
    term.quit()
    assert replay_world.server.requests[0].json()["reasoning_effort"] == "medium"
    assert term.settings() == {"defaultThinkingLevel": "medium"}
    levels = [
        e["thinkingLevel"] for e in replay_world.entries() if e["type"] == "thinking_level_change"
    ]
    assert levels == ["medium", "high", "medium"]


def _saved_session(replay_world: ReplayWorld, sid: str, cwd: Path, *extra: dict[str, Any]) -> Path:
    directory = default_session_dir(replay_world.project, replay_world.agent_dir)
    directory.mkdir(parents=True, exist_ok=True)
    stamp = "2026-01-05T10:00:00.000Z"
    header = {"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": str(cwd)}
    user = {
        "type": "message",
        "id": "00000001",
        "parentId": None,
        "timestamp": stamp,
        "message": {"role": "user", "content": "an old question", "timestamp": 1},
    }
    path = directory / session_file_name(stamp, sid)
    lines = [json.dumps(e) for e in (header, user, *extra)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_resume_picker_renames_deletes_and_resumes(pty: Any, replay_world: ReplayWorld) -> None:
    hostile = {"type": "session_info", "id": "00000002", "parentId": "00000001"}
    hostile["name"] = "Old \x1b]0;owned\x07 name"
    saved = _saved_session(replay_world, "saved-1", replay_world.project, hostile)
    for text in ("First answer.", "Second answer."):
        replay_world.server.add(text_reply(text))
    term = pty("--model", "replay/tiny")
    term.line("first question", "First answer.")
    term.expect("›")
    term.line("/new", "New session.")
    term.expect("›")
    term.line("second question", "Second answer.")
    term.expect("›")
    first, second = [p for p in replay_world.sessions_by_message() if p != saved]
    term.send("/resume\r")
    term.expect("Resume Session (Current Folder)")
    term.expect("Old ␛]0;owned␇ name")  # shown, not obeyed
    term.send("first")
    term.send("\x12")  # Ctrl+R
    term.expect("New name:")
    term.send("Alpha\r")
    term.expect("Renamed to Alpha")
    term.send("\x7f" * 5 + "Old")
    term.send("\x04")  # Ctrl+D
    term.expect("[y/N]")
    term.send("y")
    term.expect("Session deleted")
    term.send("\x7f" * 3 + "Alpha\r")
    term.expect("Resumed session")
    term.expect("first question")
    term.quit()
    assert not saved.exists()
    assert second.exists()
    names = [e["name"] for e in _entries(first) if e["type"] == "session_info"]
    assert names == ["Alpha"]


def test_resume_of_a_session_whose_folder_is_gone_forks_it_here(
    pty: Any, replay_world: ReplayWorld
) -> None:
    old = _saved_session(replay_world, "gone-1", replay_world.project.parent / "deleted-folder")
    directory = old.parent
    term = pty("--model", "replay/tiny")
    term.send("/resume\r")
    term.expect("an old question")
    term.send("\r")
    term.expect("does not exist any more")
    term.expect("Fork into")
    term.send("\x1b[B\r")  # Down: "Fork into <here>"
    term.expect("Resumed session")
    term.quit()
    [forked] = [p for p in directory.glob("*.jsonl") if p != old]
    entries = _entries(forked)
    assert entries[0]["cwd"] == str(replay_world.project)
    assert entries[0]["parentSession"] == str(old)
    assert entries[1]["message"]["content"] == "an old question"
    assert _entries(old)[0]["cwd"].endswith("deleted-folder")  # the original is kept


def test_fork_picker_forks_before_the_chosen_message(pty: Any, replay_world: ReplayWorld) -> None:
    for text in ("Answer one.", "Answer two.", "Answer again."):
        replay_world.server.add(text_reply(text))
    term = pty("--model", "replay/tiny")
    term.line("/fork", "No messages to fork from")
    term.expect("›")
    term.line("one", "Answer one.")
    term.expect("›")
    term.line("two", "Answer two.")
    term.expect("›")
    term.send("/fork\r")
    term.expect("Fork from which message?")
    term.send("\x1b[A\r")  # the last message is selected first: Up picks "one"
    term.expect("Forked to new session")
    term.expect("›")
    term.send("\r")  # the chosen message's text is back in the editor: send it again
    term.expect("Answer again.")
    term.quit()
    files = replay_world.sessions()
    [fork] = [f for f in files if _entries(f)[0].get("parentSession")]
    users = [
        e["message"]["content"][0]["text"]
        for e in _entries(fork)
        if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    assert users == ["one"]


def test_hotkeys_lists_the_bindings(pty: Any) -> None:
    term = pty("--model", "replay/tiny")
    term.line("/hotkeys", "Keyboard shortcuts")
    term.expect("Ctrl+L")
    term.expect("/resume: rename / delete the session")
    term.quit()
