"""``/tree`` in a real pseudo-terminal (pexpect): the full-screen selector, its filters,
search and labels, the summary dialog, and the move, with a 127.0.0.1 replay server as the
model (it also answers the branch-summary request)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.replay_world import HANG_GUARD, PICTX, ReplayWorld, text_reply

pexpect = pytest.importorskip("pexpect")

UP, DOWN, ENTER, ESC = "\x1b[A", "\x1b[B", "\r", "\x1b"


class Term:
    def __init__(self, replay_world: ReplayWorld, model: str) -> None:
        self.replay_world = replay_world
        self.child = pexpect.spawn(
            PICTX[0],
            [*PICTX[1:], "--model", model],
            cwd=str(replay_world.project),
            env={**replay_world.env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"},
            encoding="utf-8",
            dimensions=(30, 100),
            timeout=HANG_GUARD,
        )
        self.log = (replay_world.project.parent / "terminal.log").open("w", encoding="utf-8")
        self.child.logfile_read = self.log
        self.expect("›")

    def expect(self, text: str) -> None:
        self.child.expect_exact(text)

    def send(self, keys: str) -> None:
        self.child.send(keys)
        if keys == ESC:  # a lone Esc counts once the terminal has been quiet a moment
            self.child.expect(pexpect.TIMEOUT, timeout=0.3)

    def ask(self, text: str, answer: str) -> None:
        self.send(text + ENTER)
        self.expect(answer)
        self.expect("›")

    def open_tree(self) -> None:
        self.send("/tree" + ENTER)
        self.expect("Session tree")
        self.expect("← active")

    def quit(self) -> None:
        self.send("/quit" + ENTER)
        self.child.expect(pexpect.EOF)
        self.child.close()
        self.log.close()


@pytest.fixture
def term(replay_world: ReplayWorld) -> Iterator[Term]:
    started: list[Term] = []

    def start(model: str = "replay/tiny") -> Term:
        started.append(Term(replay_world, model))
        return started[-1]

    yield start  # type: ignore[misc]
    for one in started:
        if one.child.isalive():
            one.child.terminate(force=True)
        one.log.close()


def _message(entries: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return next(e for e in entries if text in json.dumps(e.get("message", {})))


def test_filter_search_label_and_select_a_user_message(
    replay_world: ReplayWorld, term: Any
) -> None:
    replay_world.server.add(text_reply("First answer."), text_reply("Second answer."))
    replay_world.server.add(text_reply("Answer again."))
    tools = replay_world.project.parent / "bin"  # a clipboard tool of our own, first on PATH
    tools.mkdir()
    (tools / "xclip").write_text(f'#!/bin/sh\ncat > "{tools}/copied"\n', encoding="utf-8")
    (tools / "xclip").chmod(0o755)
    replay_world.env["PATH"] = f"{tools}:{replay_world.env['PATH']}"
    t = term()
    t.send("/tree" + ENTER)
    t.expect("No entries in session")
    t.ask("first question", "First answer.")
    t.ask("second question", "Second answer.")
    t.open_tree()
    t.send("\x15")  # Ctrl+U: user messages only
    t.expect("[user-only]")
    t.send("first")
    t.expect("Search: first")
    t.send("L")
    t.expect("Label (empty to remove):")
    t.send("start" + ENTER)
    t.expect("Label set: start")
    t.send("\x18")  # Ctrl+X
    t.expect("to clipboard")  # the screen redraws only what changed: the end of the notice
    t.send(ENTER)
    t.expect("Summarize branch?")
    t.send(ENTER)  # No summary
    t.expect("Navigated to selected point")
    t.expect("› first question")  # back in the editor, to edit and send again
    t.send(ENTER)
    t.expect("Answer again.")
    t.expect("›")
    t.quit()
    assert (tools / "copied").read_text(encoding="utf-8") == "first question"
    entries = replay_world.entries()
    first = _message(entries, "first question")
    label = next(e for e in entries if e["type"] == "label")
    assert (label["targetId"], label["label"]) == (first["id"], "start")
    again = [e for e in entries if "first question" in json.dumps(e.get("message", {}))][1]
    assert again["parentId"] == first["parentId"]  # a new branch beside the old one
    assert len(replay_world.server.requests) == 3  # no summary was asked for


def test_summarize_with_custom_prompt_after_esc_reopens_the_tree(
    replay_world: ReplayWorld, term: Any
) -> None:
    replay_world.server.add(text_reply("First answer."), text_reply("Second answer."))
    replay_world.server.add(text_reply("## Goal\nBRANCH GIST"))
    t = term()
    t.ask("first question", "First answer.")
    t.ask("second question", "Second answer.")
    t.open_tree()
    t.send(UP)
    t.send(UP)
    t.send(ENTER)  # assistant: First answer.
    t.expect("Summarize branch?")
    t.send(ESC)  # back to the tree, same selection
    t.expect("Session tree")
    t.send(ENTER)
    t.expect("Summarize branch?")
    t.send(DOWN)
    t.send(DOWN)
    t.send(ENTER)
    t.expect("Custom summarization instructions")
    t.send("keep the names" + ENTER)
    t.expect("Navigated to selected point")
    t.expect("›")
    t.quit()
    entries = replay_world.entries()
    summary = next(e for e in entries if e["type"] == "branch_summary")
    assert "BRANCH GIST" in summary["summary"]
    assert summary["parentId"] == _message(entries, "First answer.")["id"]
    assert summary["fromId"] == _message(entries, "Second answer.")["id"]
    asked = json.dumps(replay_world.server.requests[2].json())
    assert "second question" in asked  # the branch left behind is what gets summarized
    assert "Additional focus: keep the names" in asked


def test_already_here_filter_setting_and_skip_prompt(replay_world: ReplayWorld, term: Any) -> None:
    replay_world.write_settings(
        {"treeFilterMode": "no-tools", "branchSummary": {"skipPrompt": True}}
    )
    replay_world.server.add(text_reply("First answer."), text_reply("Second answer."))
    t = term()
    t.ask("first question", "First answer.")
    t.ask("second question", "Second answer.")
    t.send("/tree" + ENTER)
    t.expect("filter: default [no-tools]")  # the setting's filter
    t.expect("← active")
    t.send(ENTER)
    t.expect("Already at this point")
    t.expect("›")
    t.open_tree()
    t.send(UP)
    t.send(ENTER)  # user: second question; no dialog
    t.expect("Navigated to selected point")
    t.expect("› second question")
    t.send("\x03")  # Ctrl+C clears the line
    t.quit()
    entries = replay_world.entries()
    assert not any(e["type"] == "branch_summary" for e in entries)
    assert len(replay_world.server.requests) == 2


def test_esc_while_the_summary_is_written_cancels_it_and_reopens_the_tree(
    replay_world: ReplayWorld, term: Any
) -> None:
    # the scripted model (a testing aid of the CLI) can take its time, so Esc lands mid-summary
    script = replay_world.project.parent / "replies.json"
    slow = {"text": "NEVER STORED", "delay": 30}
    script.write_text(json.dumps(["First answer.", "Second answer.", slow]), encoding="utf-8")
    t = term(f"scripted:{script}")
    t.ask("first question", "First answer.")
    t.ask("second question", "Second answer.")
    leaf = replay_world.entries()[-1]["id"]
    t.open_tree()
    t.send(UP)
    t.send(UP)
    t.send(ENTER)
    t.expect("Summarize branch?")
    t.send(DOWN)
    t.send(ENTER)
    t.expect("Summarizing branch")
    t.send(ESC)
    t.expect("Branch summarization cancelled")
    t.expect("Session tree")  # open again
    t.send(ESC)
    t.expect("›")
    t.quit()
    entries = replay_world.entries()
    assert not any(e["type"] == "branch_summary" for e in entries)
    assert entries[-1]["id"] == leaf
