"""``@`` file references and Tab path completion in a real terminal (tmux), as a pi user types
them: the ``@`` list shows the working tree's files without the ignored ones, Enter or Tab
inserts the chosen reference (quoted when the path has a space), and the message the session
records (the text the model gets) holds the reference exactly as inserted; Tab completes a path
in a ``!command`` line, a list of several narrowing as the word is typed on. Every wait is for something on the screen, under a generous deadline
that is only reached when something is wrong."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.interactive.tmux_screen import DEADLINE, NEEDS_TMUX, Screen, tmux_pictx

pytestmark = NEEDS_TMUX


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Screen, Path]]:
    project = tmp_path / "proj"
    for name, text in {
        "README.md": "# the project\n",
        "src/app.py": "print('APP-CONTENT')\n",
        "src/notes on parsing.md": "notes\n",
        "node_modules/readme-lib/README.md": "ignored\n",
        ".gitignore": "node_modules/\n",
    }.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    (project / ".git").mkdir()
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["FIRST-ANSWER", "SECOND-ANSWER"]))
    agent = tmp_path / "agent"
    agent.mkdir()
    args = ["--session-dir", str(tmp_path / "sessions"), "--model", f"scripted:{script}"]
    with tmux_pictx(tmp_path, "complete", args, agent_dir=agent, size=(120, 40)) as screen:
        yield screen, tmp_path / "sessions"


def _messages(sessions: Path) -> list[dict[str, Any]]:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and not list(sessions.rglob("*.jsonl")):
        time.sleep(0.1)
    (path,) = sessions.rglob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    return [m for m in messages if m["role"] != "system"]  # pictx records its system prompt


def test_at_references_and_tab_paths_typed_in_the_terminal(world: tuple[Screen, Path]) -> None:
    screen, sessions = world
    screen.wait_for(lambda s: "›" in s, "the prompt")

    screen.keys("-l", "@rea")
    shown = screen.wait_for(lambda s: "README.md" in s, "the @ list")
    assert "node_modules" not in shown  # ignored by .gitignore
    screen.keys("Enter")  # inserts the first entry, does not send
    screen.wait_for(lambda s: "› @README.md" in s, "the inserted reference")
    screen.type_line("summarize it")
    screen.wait_for(lambda s: "FIRST-ANSWER" in s, "the first answer")

    screen.keys("-l", "and @pars")
    screen.wait_for(lambda s: "notes on parsing.md" in s, "the @ list with a spaced name")
    screen.keys("Tab")
    screen.wait_for(lambda s: '› and @"src/notes on parsing.md"' in s, "the quoted reference")
    screen.type_line("too")
    screen.wait_for(lambda s: "SECOND-ANSWER" in s, "the second answer")

    screen.keys("-l", "!cat ./sr")
    screen.keys("Tab")  # one candidate: inserted at once
    screen.wait_for(lambda s: "› !cat ./src/" in s, "the completed directory")
    screen.keys("-l", "ap")
    screen.keys("Tab")
    screen.wait_for(lambda s: "› !cat ./src/app.py" in s, "the completed file")
    screen.keys("Enter")
    screen.wait_for(lambda s: "APP-CONTENT" in s, "the command's output")
    screen.keys("-l", "!ls ")
    screen.keys("Tab")  # several candidates: a list
    screen.wait_for(lambda s: "node_modules/" in s and ".gitignore" in s, "the Tab list")
    screen.keys("-l", "RE")
    screen.wait_for(lambda s: "node_modules/" not in s, "the list narrowed")
    screen.keys("Enter")  # inserts the entry, does not run the line
    screen.wait_for(lambda s: "› !ls README.md" in s, "the chosen entry")
    screen.keys("Enter")
    screen.wait_for(lambda s: s.count("README.md") >= 2, "the listing")
    screen.keys("-l", "!wc -c ./src/notes")
    screen.keys("Tab")  # one candidate that needs quotes: inserted at once, no list to choose from
    screen.wait_for(lambda s: '› !wc -c "./src/notes on parsing.md"' in s, "the quoted path")
    screen.keys("Enter")  # runs the line at once
    screen.wait_for(lambda s: "6 ./src/notes on parsing.md" in s, "the command's output")
    screen.type_line("/quit")

    messages = _messages(sessions)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "bashExecution",
        "bashExecution",
        "bashExecution",
    ]
    # the message holds the reference as inserted (pi sends the text; the model reads the file)
    assert messages[0]["content"] == [{"type": "text", "text": "@README.md summarize it"}]
    assert messages[2]["content"] == [
        {"type": "text", "text": 'and @"src/notes on parsing.md" too'}
    ]
    assert messages[4]["command"] == "cat ./src/app.py"
    assert (messages[5]["command"], messages[5]["output"]) == ("ls README.md", "README.md\n")
    assert messages[6]["command"] == 'wc -c "./src/notes on parsing.md"'
