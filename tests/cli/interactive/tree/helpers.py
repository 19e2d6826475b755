"""Sessions for the ``/tree`` tests: messages as stored (``raw_*`` dicts, with the hostile
suite's ``raw_user``), a session file with counted ids and a ticking clock, and :class:`Built`,
a session with two branches."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from pi_context.cli.interactive.tree.view import TreeView
from pi_context.export import SessionDocument
from pi_context.session.store import Session
from tests.hostile.helpers import raw_user


def raw_reply(
    text: str = "", calls: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    """An assistant message as stored: ``text`` (if any), then the tool-call blocks ``calls``;
    ``extra`` over its fields."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += calls or []
    return {
        "role": "assistant",
        "content": content,
        "provider": "p",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": extra.pop("stopReason", "toolUse" if calls else "stop"),
        "timestamp": 2,
        **extra,
    }


def raw_tool_result(call_id: str, name: str, text: str) -> dict[str, Any]:
    """A successful tool result as stored."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def session_at(path: Path) -> Session:
    """A new session file at ``path``: counted ids, a clock ticking a minute per entry."""
    counter = itertools.count(1)
    ticks = itertools.count(1_767_225_600_000, 60_000)
    return Session.create(
        path, cwd=str(path.parent), ids=lambda: f"e{next(counter):07d}", clock=lambda: next(ticks)
    )


class Built:
    """A session with two branches after the first answer:

    u1 "list the files" → a1 (tool call ls) → r1 (ls result) → a2 "two files"
      ├─ u4 "delete them" → a5 "done deleting"                  (written first)
      └─ u2 "explain README" → a3 → u3 "thanks" → a4 → label    (the current branch)

    plus a model change, a thinking change and a session name.
    """

    def __init__(self, tmp_path: Path) -> None:
        session = session_at(tmp_path / "s.jsonl")
        self.session = session
        session.append_model_change("p", "m")
        session.append_thinking_level_change("high")
        self.u1 = session.append_message(raw_user("list the files")).id
        call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls -a"}}
        self.a1 = session.append_message(raw_reply(calls=[call])).id
        self.r1 = session.append_message(raw_tool_result("c1", "bash", "README\nsetup.py")).id
        self.a2 = session.append_message(raw_reply("two files")).id
        self.u4 = session.append_message(raw_user("delete them")).id
        self.a5 = session.append_message(raw_reply("done deleting")).id
        session.move_leaf(self.a2)
        self.u2 = session.append_message(raw_user("explain README")).id
        self.a3 = session.append_message(raw_reply("It describes the project")).id
        session.append_session_info("readme work")
        self.u3 = session.append_message(raw_user("thanks")).id
        self.a4 = session.append_message(raw_reply("you are welcome")).id
        self.label = session.append_label(self.u2, "readme").id

    def doc(self) -> SessionDocument:
        session = self.session
        return SessionDocument.from_entries(
            session.header, [e.data for e in session.entries], session.leaf_id
        )

    def view(self, **kwargs: Any) -> TreeView:
        return TreeView(self.doc(), **kwargs)
