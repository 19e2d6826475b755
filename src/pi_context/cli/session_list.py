"""What the ``/resume`` picker shows of each session file, read fast and cached.

A session file can be megabytes of tool output; the picker needs its header, its name (the
last ``session_info``), its first user message and how many user and assistant messages it
holds. :func:`summarize_session` maps the file and finds these with byte searches (C speed,
no line splitting), decoding only the header line, the first user message's line and the
last ``session_info`` line. Files written with other JSON spacing than pi's compact form are
read the slow, exact way (:func:`pi_context.storage.read_session_info`).

:class:`SessionLister` keeps summaries keyed by path, size and modification time, so
reopening the picker, toggling its scope or renaming a session rereads only what changed.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pi_context import _json, storage
from pi_context.errors import SessionError
from pi_context.session.reading import open_regular

__all__ = ["SessionLister", "SessionSummary", "summarize_session"]

_USER = (b'"role":"user"', b'"role": "user"')
_ASSISTANT = (b'"role":"assistant"', b'"role": "assistant"')
_INFO = (b'"type":"session_info"', b'"type": "session_info"')
_ANY_ROLE = b'"role"'
"""pi writes compact JSON; Python's default spacing is recognised too, anything else is read
the exact way."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    path: Path
    id: str
    cwd: str
    created: str
    modified: float
    """File modification time (seconds since the epoch)."""
    name: str | None
    first_message: str
    message_count: int
    """User and assistant messages in the file (every branch)."""
    parent_session: str | None


def _line_at(data: mmap.mmap | bytes, at: int) -> bytes:
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    return data[start : end if end >= 0 else len(data)]


def _count(data: mmap.mmap, needles: tuple[bytes, ...]) -> int:
    found = 0
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            found += 1
            at = data.find(needle, at + len(needle))
    return found


def _first_user(data: mmap.mmap) -> str:
    """The text of the first user message that has text."""
    for needle in _USER:
        at = data.find(needle)
        while at >= 0:
            entry = _decoded(_line_at(data, at))
            message = entry.get("message") if entry is not None else None
            if isinstance(message, dict) and message.get("role") == "user":
                text = _first_text(message)
                if text:
                    return text
            at = data.find(needle, at + len(needle))
    return ""


def _decoded(line: bytes) -> dict[str, object] | None:
    try:
        value = _json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _first_text(message: object) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return " ".join(content.split())
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                return " ".join(str(block.get("text", "")).split())
    return ""


def _slow(path: Path) -> SessionSummary | None:
    info = storage.read_session_info(path)
    if info is None:
        return None
    return SessionSummary(
        path=info.path,
        id=info.id,
        cwd=info.cwd,
        created=info.created,
        modified=info.modified,
        name=info.name,
        first_message=info.first_message,
        message_count=info.message_count,
        parent_session=info.parent_session,
    )


def summarize_session(path: Path) -> SessionSummary | None:
    """The picker's view of ``path``; ``None`` when it is not a pi session file."""
    header = storage.read_header(path)
    if header is None:
        return None
    try:
        with open_regular(path) as (raw, size):
            stat = os.fstat(raw.fileno())
            if size == 0:
                return None
            with mmap.mmap(raw.fileno(), size, access=mmap.ACCESS_READ) as data:
                users = _count(data, _USER)
                assistants = _count(data, _ASSISTANT)
                if users + assistants == 0 and data.find(_ANY_ROLE) >= 0:
                    return _slow(path)  # not pi's compact spelling: read it exactly
                first = _first_user(data)
                name: str | None = None
                at = max(data.rfind(needle) for needle in _INFO)
                if at >= 0:
                    entry = _decoded(_line_at(data, at))
                    value = entry.get("name") if entry is not None else None
                    name = (value.strip() or None) if isinstance(value, str) else None
    except (OSError, ValueError, SessionError):
        return None
    parent = header.get("parentSession")
    return SessionSummary(
        path=path,
        id=str(header["id"]),
        cwd=str(header.get("cwd", "")),
        created=str(header.get("timestamp", "")),
        modified=stat.st_mtime,
        name=name,
        first_message=first,
        message_count=users + assistants,
        parent_session=parent if isinstance(parent, str) else None,
    )


class SessionLister:
    """Session summaries of whole directories, reread only for files that changed."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[int, int, SessionSummary | None]] = {}

    def summary(self, path: Path) -> SessionSummary | None:
        try:
            stat = path.stat()
        except OSError:
            self._cache.pop(path, None)
            return None
        known = self._cache.get(path)
        if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
            return known[2]
        found = summarize_session(path)
        self._cache[path] = (stat.st_mtime_ns, stat.st_size, found)
        return found

    def forget(self, path: Path) -> None:
        self._cache.pop(path, None)

    def directory(self, directory: Path) -> list[SessionSummary]:
        """Every session in ``directory``, newest modification first."""
        if not directory.is_dir():
            return []
        return self._sorted(self.summary(path) for path in directory.glob("*.jsonl"))

    def everywhere(self, roots: Iterable[Path]) -> list[SessionSummary]:
        """Every session in the project directories under each root (and the roots
        themselves), newest first, each file once."""
        seen: set[Path] = set()
        found: list[SessionSummary | None] = []
        for root in roots:
            if not root.is_dir():
                continue
            for directory in [root, *sorted(p for p in root.iterdir() if p.is_dir())]:
                for path in directory.glob("*.jsonl"):
                    if path not in seen:
                        seen.add(path)
                        found.append(self.summary(path))
        return self._sorted(found)

    @staticmethod
    def _sorted(found: Iterable[SessionSummary | None]) -> list[SessionSummary]:
        kept = [s for s in found if s is not None]
        kept.sort(key=lambda s: (s.modified, s.path.name), reverse=True)
        return kept
