"""Prompt templates and ``!command`` / ``!!command`` in a real terminal (tmux), as a pi user
types them: the template's expanded text is what the session records and the model gets, a
shell command's output appears on the screen, and both kinds of command are recorded as
``bashExecution`` messages. Every wait is for something on the screen, under a generous
deadline that is only reached when something is wrong."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.interactive.tmux_screen import DEADLINE, NEEDS_TMUX, Screen, tmux_pictx

pytestmark = NEEDS_TMUX

REVIEW = """---
description: Review staged git changes
argument-hint: "[focus]"
---
Review the staged changes. Focus on ${1:-correctness}; then $2.
"""


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Screen, Path]]:
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "review.md").write_text(REVIEW, encoding="utf-8")
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["TEMPLATE-ANSWER", "SECOND-ANSWER"]))
    args = ["--session-dir", str(tmp_path / "sessions"), "--model", f"scripted:{script}"]
    with tmux_pictx(tmp_path, "daily", args, agent_dir=agent, size=(120, 40)) as screen:
        yield screen, tmp_path / "sessions"


def _messages(sessions: Path) -> list[dict[str, Any]]:
    (path,) = sessions.rglob("*.jsonl")
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    return [m for m in messages if m["role"] != "system"]  # pictx records its system prompt


def test_a_template_and_shell_commands_typed_in_the_terminal(
    world: tuple[Screen, Path],
) -> None:
    screen, sessions = world
    screen.wait_for(lambda s: "›" in s, "the prompt")
    screen.type_line("/help")
    screen.wait_for(lambda s: "[u] Review staged git changes" in s, "the template in /help")
    screen.type_line('/review "API compatibility" docs')
    screen.wait_for(lambda s: "TEMPLATE-ANSWER" in s, "the answer to the template")
    screen.type_line("!echo LIVE-$((40 + 2)); exit 4")
    screen.wait_for(lambda s: "LIVE-42" in s and "(exit 4)" in s, "the command's output")
    screen.type_line("!!echo HIDDEN-$((1 + 1))")
    screen.wait_for(lambda s: "HIDDEN-2" in s, "the excluded command's output")
    screen.type_line("thanks")
    screen.wait_for(lambda s: "SECOND-ANSWER" in s, "the second answer")
    screen.type_line("/quit")
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and not list(sessions.rglob("*.jsonl")):
        time.sleep(0.1)
    messages = _messages(sessions)
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "bashExecution", "bashExecution", "user", "assistant"]
    assert messages[0]["content"][0]["text"] == (
        "Review the staged changes. Focus on API compatibility; then docs."
    )
    live, hidden = messages[2], messages[3]
    assert (live["command"], live["output"], live["exitCode"]) == (
        "echo LIVE-$((40 + 2)); exit 4",
        "LIVE-42\n",
        4,
    )
    assert live["excludeFromContext"] is False
    assert (hidden["output"], hidden["excludeFromContext"]) == ("HIDDEN-2\n", True)
