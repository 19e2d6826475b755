"""A torn line on the current path.

A crash mid-write leaves a line cut short; cut right after a ``}`` inside a text it still
looks like a whole entry to the fast scan. It used to stop ``-c``, ``--session`` and
``AgentSession.open`` with "not valid JSON". It is now skipped as pi skips it, reported once
with file and line, and the session goes on; what we append after it is a file pi reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pi_context import _json
from pi_context.agent.session import AgentSession
from pi_context.session import Session
from pi_context.testing import ScriptedModel, reply
from tests.hostile.helpers import (
    HEADER,
    assert_clean,
    content_of,
    entry,
    line,
    pictx_process,
    raw_assistant,
    raw_user,
)

pytestmark = pytest.mark.timeout(300)


def _torn_file(path: Path, *, cwd: str) -> Path:
    """e1..e5 in a chain; line 4 (entry e3) cut right after a ``}`` inside its text."""
    lines = [
        line(dict(HEADER, cwd=cwd)),
        line(entry("e1", None, message=raw_user("first"))),
        line(entry("e2", "e1", message=raw_assistant())),
        line(entry("e3", "e2", message=raw_user("code { y(); } more"))),
        line(entry("e4", "e3", message=raw_assistant())),
        line(entry("e5", "e4", message=raw_user("last"))),
    ]
    torn = lines[3]
    lines[3] = torn[: torn.index(b"y(); }") + 6] + b"\n"
    path.write_bytes(b"".join(lines))
    return path


def _pi_view(path: Path) -> list[dict[str, Any]]:
    """What pi 1.6.0's loader keeps: every line that parses (the header first), in order."""
    kept = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            kept.append(_json.loads(raw))
        except ValueError:
            continue
    return kept


def test_the_torn_entry_is_skipped_once_and_the_session_continues(tmp_path: Path) -> None:
    path = _torn_file(tmp_path / "s.jsonl", cwd=str(tmp_path))
    with Session.open(path) as session:
        texts = [content_of(m)[0]["text"] for m in session.messages()]
        assert texts == ["first", "answer", "answer", "last"]
        problems = session.problems
        assert [(p.line, p.reason) for p in problems] == [
            (4, "message entry e3: not valid JSON (torn write?): skipped, as pi does")
        ]
        session.messages()
        assert len(session.problems) == 1  # once per session, however often it is read
        appended = session.append_message(raw_user("after the tear"))
    pi_entries = _pi_view(path)
    assert pi_entries[0]["type"] == "session"
    assert [e["id"] for e in pi_entries[1:]] == ["e1", "e2", "e4", "e5", appended.id]
    assert pi_entries[-1]["parentId"] == "e5"


async def test_agent_session_opens_a_torn_file(tmp_path: Path) -> None:
    path = _torn_file(tmp_path / "s.jsonl", cwd=str(tmp_path))
    agent = await AgentSession.open(path, model=ScriptedModel([reply("fine")]))
    await agent.run("again")
    assert content_of(agent.session.messages()[-1]) == [{"type": "text", "text": "fine"}]
    assert [p.line for p in agent.session.problems] == [4]


@pytest.mark.parametrize("how", ["--session", "-c"])
def test_resuming_from_the_command_line_warns_once(tmp_path: Path, how: str) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    path = _torn_file(sessions / "2026-01-05T10-00-00-000Z_x.jsonl", cwd=str(tmp_path))
    replies = tmp_path / "replies.json"
    replies.write_text('["fine"]')
    target = ("--session", str(path)) if how == "--session" else ("-c",)
    run = pictx_process(
        *target,
        "--session-dir",
        str(sessions),
        "-p",
        "more",
        "--model",
        f"scripted:{replies}",
        cwd=tmp_path,
    )
    assert_clean(run, code=0)
    assert run.stdout.strip() == "fine"
    assert run.stderr_lines == [
        f"pictx: warning: {path}:4: message entry e3: not valid JSON (torn write?): skipped, "
        "as pi does"
    ]
    assert len(_pi_view(path)) > 6  # the turn was appended, and pi reads every new line


def test_a_torn_compaction_does_not_cut_the_context(tmp_path: Path) -> None:
    compaction = entry("c1", "e2", "compaction", summary="s", firstKeptEntryId="e2", tokensBefore=5)
    raw = line(compaction)
    lines = [
        line(dict(HEADER, cwd=str(tmp_path))),
        line(entry("e1", None, message=raw_user("first"))),
        line(entry("e2", "e1", message=raw_assistant(content=[{"type": "text", "text": "a}b"}]))),
        raw[: raw.index(b'"s"')] + b'"s}\n',
        line(entry("e3", "c1", message=raw_user("last"))),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    with Session.open(path) as session:
        roles = [m["role"] for m in session.messages()]
        assert roles == ["user", "assistant", "user"]  # no compaction summary
        assert [p.line for p in session.problems] == [4]
