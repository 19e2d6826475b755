"""What the ``/resume`` picker shows of each session file, read fast and cached.

A session file can be megabytes of tool output; the picker needs its header, its name (the
last ``session_info``), its first user message and how many user and assistant messages it
holds. :func:`summarize_session` maps the file and walks its lines by their newlines (C
speed), looking only at the first bytes of each line, where pi writes the entry's ``type`` and
the message's ``role``; it decodes only the first user message's line and the last
``session_info`` line. A line that does not start the way pi writes it is decoded whole, so
the result is exact for any file, and fast for pi's.

:class:`SessionLister` keeps summaries keyed by path, size and modification time, so
reopening the picker, toggling its scope or renaming a session rereads only what changed.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pi_context import _json, session_dirs
from pi_context.errors import SessionError
from pi_context.session.reading import open_regular

__all__ = ["SessionLister", "SessionSummary", "summarize_session"]

_HEAD = 512
"""How much of a line is looked at to classify it: pi writes ``type``, ``id``, ``parentId``,
``timestamp`` and then the message's ``role`` first, well within this."""
_MESSAGE = b'{"type":"message",'
_SESSION_INFO = b'{"type":"session_info",'
_OTHER = b'{"type":"'
_ROLE = b'"role":"'


def _role(head: bytes) -> str | None:
    """The message role pi writes first in a message line, else ``None`` (unknown layout)."""
    at = head.find(_ROLE)
    if at < 0:
        return None
    start = at + len(_ROLE)
    end = head.find(b'"', start)
    return head[start:end].decode("utf-8", "replace") if end > start else None


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


def summarize_session(path: Path) -> SessionSummary | None:
    """The picker's view of ``path``; ``None`` when it is not a pi session file."""
    header = session_dirs.read_header(path)
    if header is None:
        return None
    try:
        with open_regular(path) as (raw, size):
            stat = os.fstat(raw.fileno())
            if size == 0:
                return None
            with mmap.mmap(raw.fileno(), size, access=mmap.ACCESS_READ) as data:
                count, first, name = _scan(data, size)
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
        message_count=count,
        parent_session=parent if isinstance(parent, str) else None,
    )


def _scan(data: mmap.mmap, size: int) -> tuple[int, str, str | None]:
    """``(user + assistant messages, first user text, name)``, looking at the start of each
    line only; a line whose start does not say what it is gets decoded whole."""
    count = 0
    first = ""
    info_at = -1
    at = data.find(b"\n") + 1  # the header line is read by read_header
    while 0 < at < size:
        end = data.find(b"\n", at)
        end = size if end < 0 else end
        head = data[at : min(end, at + _HEAD)]
        if head.startswith(_MESSAGE):
            kind_name, entry = "message", None
        elif head.startswith(_SESSION_INFO):
            kind_name, entry = "session_info", None
        elif head.startswith(_OTHER):
            kind_name, entry = None, None
        elif head.strip():  # another spelling: read the line exactly
            entry = _decoded(data[at:end])
            value = entry.get("type") if entry is not None else None
            kind_name = value if isinstance(value, str) else None
        else:
            kind_name, entry = None, None
        if kind_name == "session_info":
            info_at = at
        elif kind_name == "message":
            role = _role(head) if entry is None else None
            if role is None:
                entry = entry or _decoded(data[at:end])
                message = entry.get("message") if entry is not None else None
                found = message.get("role") if isinstance(message, dict) else None
                role = found if isinstance(found, str) else ""
            if role in ("user", "assistant"):
                count += 1
            if role == "user" and not first:
                entry = entry or _decoded(data[at:end])
                first = _first_text(entry.get("message") if entry is not None else None)
        at = end + 1
    name = None
    if info_at >= 0:
        entry = _decoded(_line_at(data, info_at))
        value = entry.get("name") if entry is not None else None
        name = (value.strip() or None) if isinstance(value, str) else None
    return count, first, name


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
