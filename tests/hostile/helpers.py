"""Shared pieces of the hostile-input suite: files pi could write, and running ``pictx``.

Every case checks the same four things: no internal error (exit code 2 and "internal error"
never appear), no hang (each run has a timeout), the input file unchanged (hash before and
after), and a clear message: every stderr line names what is wrong in one line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pi_context import _json
from tests.helpers import SRC, ProcessRun, pictx_process

__all__ = [
    "HEADER",
    "SRC",
    "USAGE",
    "ProcessRun",
    "assert_clean",
    "content_of",
    "entry",
    "line",
    "nested",
    "pictx_process",
    "raw_assistant",
    "raw_user",
    "sha256",
    "write_session",
]

HEADER: dict[str, Any] = {
    "type": "session",
    "version": 3,
    "id": "0194f3a2-0000-7000-8000-00000000cafe",
    "timestamp": "2026-01-05T10:00:00.000Z",
    "cwd": "/tmp",
}
USAGE: dict[str, Any] = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def entry(
    entry_id: str, parent: str | None, entry_type: str = "message", /, **fields: Any
) -> dict[str, Any]:
    """An entry in pi's key order."""
    return {
        "type": entry_type,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-05T10:00:01.000Z",
        **fields,
    }


def raw_user(text: str) -> dict[str, Any]:
    """A user message as stored in a line (a plain dict, not a typed message)."""
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def raw_assistant(**override: Any) -> dict[str, Any]:
    """An assistant message as stored in a line (a plain dict), ``override`` over its fields
    (any value, of any type)."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "answer"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-x",
        "usage": USAGE,
        "stopReason": "stop",
        "timestamp": 2,
    }
    message.update(override)
    return message


def line(value: Any) -> bytes:
    """One session line as pi writes it (compact ``JSON.stringify``)."""
    return _json.js_stringify(value).encode("utf-8") + b"\n"


def write_session(
    path: Path, entries: Sequence[Mapping[str, Any]], *, cwd: str | None = None
) -> Path:
    header = dict(HEADER, cwd=cwd or str(path.parent))
    path.write_bytes(line(header) + b"".join(line(e) for e in entries))
    return path


def content_of(message: Mapping[str, object]) -> Any:
    """A message's ``content`` (messages are typed per role; tests read any of them)."""
    return message.get("content")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_clean(run: ProcessRun, *, code: int | None = None) -> None:
    """No internal error, no traceback; every stderr line is one ``pictx:`` message."""
    assert run.code != 2, run.stderr
    assert "internal error" not in run.stderr
    assert "Traceback" not in run.stderr
    for text in run.stderr_lines:
        assert text.startswith("pictx: "), text
        assert len(text) < 1_000, text
    if code is not None:
        assert run.code == code, run.stderr


def nested(depth: int, leaf: Any = 1) -> Any:
    """``{"a": {"a": ... [leaf] ...}}``: objects and lists alternating, ``depth`` levels."""
    value: Any = [leaf]
    for level in range(depth - 1):
        value = {"a": value} if level % 2 == 0 else [value, level]
    return value
