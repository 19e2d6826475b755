"""Interactive questions a newcomer meets, in a real pseudo-terminal: Ctrl-C at ``/tree``'s
summary question cancels, ``/resume`` shows where the conversation left off, ``/model``
marks the models without a key and refuses to switch to one."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.cli.interactive.pty_terminal import PROMPT, Terminal


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Any]:
    started: list[Terminal] = []

    def run(replies: Sequence[Any], *args: str) -> Terminal:
        term = Terminal(tmp_path, replies, *args)
        started.append(term)
        return term

    yield run
    for term in started:
        if term.child.isalive():
            term.child.terminate(force=True)


def test_ctrl_c_at_the_tree_summary_question_cancels(start: Any) -> None:
    term = start(["Answer one.", "Answer two."])
    term.command("question one", "Answer one.")
    term.command("question two", "Answer two.")
    leaf_before = term.entries()[-1]["id"]
    first_answer = next(
        e["id"] for e in term.entries() if "Answer one." in json.dumps(e.get("message", {}))
    )
    term.say(f"/tree {first_answer}")
    term.expect("Summarize the branch")
    term.child.send("\x03")  # Ctrl-C
    term.expect("Not moved.")
    term.expect(PROMPT)
    assert term.quit() == 0
    entries = term.entries()
    assert entries[-1]["id"] == leaf_before  # nothing appended, no branch summary
    assert all(e["type"] != "branch_summary" for e in entries)


def test_resume_shows_the_last_exchanges(start: Any) -> None:
    term = start(["FIRST-ANSWER", "SECOND-ANSWER"])
    term.command("first question", "FIRST-ANSWER")
    term.command("/new", "New session.")
    term.command("other question", "SECOND-ANSWER")
    term.say("/resume")
    term.expect("Resume Session (Current Folder)")
    term.child.send("first")
    term.child.send("\r")
    term.expect("Resumed session")
    term.expect("Where it left off:")
    term.expect("you: ")  # styled: the text follows after an escape sequence
    term.expect("first question")
    term.expect("assistant: ")
    term.expect("FIRST-ANSWER")
    term.expect(PROMPT)
    assert term.quit() == 0


def test_model_marks_models_without_a_key(start: Any, tmp_path: Path) -> None:
    term = start(["A1"])
    term.say("/model claude-opus")
    term.expect("Select model (all)")
    term.expect("no key")
    term.child.send("\r")
    term.expect("No API key for anthropic/")
    term.child.send("\x03")  # Ctrl-C closes the picker
    term.expect(PROMPT)
    assert term.quit() == 0
