"""``/clone``, ``/login`` and ``/logout`` typed in a real pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from tests.cli.interactive.pty_terminal import PROMPT


def test_clone_copies_the_conversation_into_a_new_session(terminal: Any) -> None:
    term = terminal(["A1", "A2"])
    term.command("hello", "A1")
    term.command("/clone", "Cloned to new session")
    term.command("in the clone", "A2")
    assert term.quit() == 0
    files = term.session_files()
    assert len(files) == 2
    sessions = [[json.loads(x) for x in f.read_text().splitlines()] for f in files]
    [clone] = [s for s in sessions if s[0].get("parentSession")]
    [original] = [s for s in sessions if s is not clone]
    original_file = next(f for f, s in zip(files, sessions, strict=True) if s is original)
    assert clone[0]["parentSession"] == str(original_file)
    users = [
        e["message"]["content"][0]["text"]
        for e in clone
        if e.get("message", {}).get("role") == "user"
    ]
    assert users == ["hello", "in the clone"]


def test_login_stores_a_hidden_key_and_logout_removes_it(terminal: Any) -> None:
    term = terminal([])
    term.command("/login nosuchprovider", "Unknown provider")
    term.say("/login openai")
    term.expect("API key for openai (input hidden):")
    term.say("sk-very-secret-42")
    term.expect("Stored an API key for openai in")
    term.expect(PROMPT)
    auth = term.agent_dir / "auth.json"
    assert json.loads(auth.read_text()) == {
        "openai": {"type": "api_key", "key": "sk-very-secret-42"}
    }
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    term.command("/logout openai", "Removed the stored credential for openai.")
    term.command("/logout openai", "No stored credential for openai.")
    assert term.quit() == 0
    assert json.loads(auth.read_text()) == {}
    shown = Path(term.log.name).read_text(encoding="utf-8")
    assert "sk-very-secret-42" not in shown  # never echoed
