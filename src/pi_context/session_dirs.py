"""Where sessions live on disk, exactly where pi 1.6.0 puts them, and how one is picked.

pi and pictx share one layout, so each lists and resumes the other's sessions::

    <agentDir>/sessions/--<cwd with / \\ : replaced by ->--/<timestamp>_<sessionId>.jsonl

``agentDir`` is ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``. The session
directory can be overridden (highest first) by ``--session-dir``, ``$PI_CODING_AGENT_SESSION_DIR``
and the ``sessionDir`` setting.

Picking follows pi: ``--continue`` takes the newest file by modification time;
``--session ARG`` is a path when it looks like one, otherwise a session id matched exactly and
then by (case-sensitive) prefix, first in the current project's directory, then in every
project's directory.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from msgspec import Struct

from pi_context import _json
from pi_context.errors import SessionError
from pi_context.resources import paths
from pi_context.session._file.opening import open_regular, read_regular
from pi_context.session.entries import iso_now
from pi_context.session.projection import js_date_ms
from pi_context.session.store import new_session_id

__all__ = [
    "SESSION_ID_PATTERN",
    "SessionInfo",
    "SessionMatch",
    "default_session_dir",
    "encode_cwd",
    "find_latest_session",
    "fork_from",
    "last_activity_ms",
    "list_all_sessions",
    "list_sessions",
    "looks_like_path",
    "new_session_path",
    "read_header",
    "read_session_info",
    "refuse_session_target",
    "resolve_session_arg",
    "session_dir",
    "session_file_name",
]

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
"""What a caller-supplied session id must look like (pi's rule)."""

_HEADER_SCAN_LINES = 64
"""How many lines to try before giving up on finding the first parsable line."""
_HEADER_READ_LIMIT = 16 << 20
"""How many bytes to read at most while looking for the header line."""


def encode_cwd(cwd: str | os.PathLike[str]) -> str:
    """The directory name pi uses for a working directory: ``/home/u/proj`` → ``--home-u-proj--``.

    The cwd is made absolute but not resolved through symlinks (as pi does); one leading
    separator is dropped and every ``/``, ``\\`` and ``:`` becomes ``-``.
    """
    text = os.path.abspath(os.fspath(cwd))
    if text.startswith(("/", "\\")):
        text = text[1:]
    return "--" + re.sub(r"[/\\:]", "-", text) + "--"


def default_session_dir(cwd: str | os.PathLike[str], agent: Path) -> Path:
    """``<agentDir>/sessions/--<enc>--`` for ``cwd``."""
    return agent / "sessions" / encode_cwd(cwd)


def session_dir(
    cwd: str | os.PathLike[str],
    *,
    agent: Path | None = None,
    cli_dir: str | None = None,
    setting: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The directory new sessions of ``cwd`` go to.

    Precedence: ``--session-dir`` (``cli_dir``) > ``$PI_CODING_AGENT_SESSION_DIR`` > the
    ``sessionDir`` setting > the default per-cwd directory. Relative values are taken against
    the process cwd, as pi does.
    """
    environ = os.environ if env is None else env
    for value in (cli_dir, environ.get("PI_CODING_AGENT_SESSION_DIR"), setting):
        if value:
            return Path(os.path.abspath(paths.expand_home(value)))
    return default_session_dir(cwd, agent if agent is not None else paths.agent_dir(environ))


def session_file_name(timestamp: str, session_id: str) -> str:
    """``<timestamp with : and . replaced by ->_<id>.jsonl`` (pi's file name)."""
    return re.sub(r"[:.]", "-", timestamp) + f"_{session_id}.jsonl"


def new_session_path(directory: Path, *, session_id: str | None = None) -> tuple[Path, str, str]:
    """A path for a new session in ``directory``: ``(path, session_id, header_timestamp)``."""
    sid = session_id or new_session_id()
    if not SESSION_ID_PATTERN.match(sid):
        raise SessionError(f"invalid session id {sid!r}")
    stamp = iso_now()
    return directory / session_file_name(stamp, sid), sid, stamp


def read_header(path: Path) -> dict[str, Any] | None:
    """The session header of ``path``, or ``None`` when it is not a pi session.

    As pi: the first line that parses as JSON must be an object with ``type == "session"`` and
    a string ``id``. Unreadable files, and anything but a regular file (a FIFO, a device), count
    as not a session; at most :data:`_HEADER_READ_LIMIT` bytes are read.
    """
    try:
        with open_regular(path) as (raw, size):
            handle = io.BufferedReader(cast(io.RawIOBase, raw))
            budget = min(size, _HEADER_READ_LIMIT)
            for _ in range(_HEADER_SCAN_LINES):
                line = handle.readline(budget)
                budget -= len(line)
                if not line:
                    return None
                if not line.strip():
                    continue
                try:
                    value = _json.loads(line)
                except ValueError:
                    continue
                if (
                    isinstance(value, dict)
                    and value.get("type") == "session"
                    and isinstance(value.get("id"), str)
                ):
                    return value
                return None
    except (OSError, SessionError):
        return None
    return None


class SessionInfo(Struct, frozen=True):
    """What a session list or picker shows about one session file."""

    path: Path
    id: str
    cwd: str
    created: str
    """The header's ``timestamp``."""
    modified: float
    """File modification time (seconds since the epoch)."""
    name: str | None
    """The last ``session_info`` entry's name, stripped; ``None`` when unnamed."""
    first_message: str
    """The first user message's first text, with runs of whitespace as one space."""
    message_count: int
    """User and assistant messages in the file (every branch)."""
    parent_session: str | None


_HEAD = 512
"""How much of a line :func:`read_session_info` looks at to classify it: pi writes ``type``,
``id``, ``parentId``, ``timestamp`` and then the message's ``role`` first, well within this."""
_MESSAGE = b'{"type":"message",'
_SESSION_INFO = b'{"type":"session_info",'
_OTHER = b'{"type":"'
_ROLE = b'"role":"'


def read_session_info(path: Path) -> SessionInfo | None:
    """Summarize one session file for listing; ``None`` when it is not a session.

    A session file can be megabytes of tool output, and a list shows hundreds of them. The
    file is mapped and its lines walked by their newlines (C speed), looking only at the first
    bytes of each line, where pi writes the entry's ``type`` and the message's ``role``; only
    the first user message's line and the last ``session_info`` line are decoded. A line that
    does not start the way pi writes it is decoded whole, so the result is exact for any file,
    and fast for pi's.
    """
    header = read_header(path)
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
    return SessionInfo(
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


def _role(head: bytes) -> str | None:
    """The message role pi writes first in a message line, else ``None`` (unknown layout)."""
    at = head.find(_ROLE)
    if at < 0:
        return None
    start = at + len(_ROLE)
    end = head.find(b'"', start)
    return head[start:end].decode("utf-8", "replace") if end > start else None


def _line_at(data: mmap.mmap | bytes, at: int) -> bytes:
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    return data[start : end if end >= 0 else len(data)]


def _decoded(line: bytes) -> dict[str, Any] | None:
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


def last_activity_ms(path: Path) -> int:
    """The latest user or assistant message timestamp of ``path``, else its header time, in
    milliseconds (pi orders sessions matching an id prefix by it); 0 when unreadable.

    Every line is decoded (the timestamp sits at the end of a message's line), so this is for
    the few sessions an id matches, not for listing.
    """
    try:
        data = read_regular(path)
    except (OSError, SessionError):
        return 0
    last_ms: int | None = None
    for raw in data.split(b"\n"):
        entry = _decoded(raw) if raw.strip() else None
        if entry is None:
            continue
        if last_ms is None:  # the first line that parses is the header
            created_ms = js_date_ms(entry.get("timestamp"))
            last_ms = int(created_ms) if created_ms is not None else 0
            continue
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict):
            stamp = message.get("timestamp")
            if message.get("role") in ("user", "assistant") and isinstance(stamp, int | float):
                last_ms = max(last_ms, int(stamp))
    return last_ms or 0


def list_sessions(directory: Path) -> list[SessionInfo]:
    """Every session file in ``directory``, newest modification first."""
    if not directory.is_dir():
        return []
    found = []
    for path in directory.glob("*.jsonl"):
        info = read_session_info(path)
        if info is not None:
            found.append(info)
    found.sort(key=lambda info: (info.modified, info.path.name), reverse=True)
    return found


def list_all_sessions(agent: Path) -> list[SessionInfo]:
    """The sessions of every project under ``<agentDir>/sessions``, newest first."""
    root = agent / "sessions"
    if not root.is_dir():
        return []
    found: list[SessionInfo] = []
    for child in sorted(root.iterdir()):
        if child.is_dir():
            found.extend(list_sessions(child))
    found.sort(key=lambda info: (info.modified, info.path.name), reverse=True)
    return found


def find_latest_session(directory: Path, *, cwd: str | None = None) -> Path | None:
    """The session ``--continue`` resumes: newest mtime with a readable header.

    Pass ``cwd`` when ``directory`` is a custom session directory shared by several projects;
    then only sessions whose header ``cwd`` equals it count.
    """
    if not directory.is_dir():
        return None
    candidates: list[tuple[float, str, Path]] = []
    for path in directory.glob("*.jsonl"):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        candidates.append((mtime, path.name, path))
    for _, _, path in sorted(candidates, reverse=True):
        header = read_header(path)
        if header is None:
            continue
        if cwd is not None and header.get("cwd") != cwd:
            continue
        return path
    return None


def looks_like_path(arg: str) -> bool:
    """pi treats a ``--session`` value as a path if it has a separator or ends with ``.jsonl``."""
    return "/" in arg or "\\" in arg or arg.endswith(".jsonl")


class SessionMatch(Struct, frozen=True):
    """The result of resolving a ``--session`` argument."""

    path: Path
    exists: bool
    """False for a path that does not exist yet (it becomes a new session there)."""
    other_project: bool = False
    """True when an id matched a session of another project (pi offers to fork it)."""
    cwd: str | None = None


def _match_id(sessions: Iterable[SessionInfo], arg: str) -> SessionInfo | None:
    """The session whose id is ``arg``, else the one it prefixes; among several, the most
    recently active (the first listed on a tie)."""
    listed = list(sessions)
    for matches in (
        [info for info in listed if info.id == arg],
        [info for info in listed if info.id.startswith(arg)],
    ):
        if len(matches) == 1:
            return matches[0]
        if matches:
            return max(matches, key=lambda info: last_activity_ms(info.path))
    return None


def resolve_session_arg(arg: str, *, cwd: str, directory: Path, agent: Path) -> SessionMatch:
    """Resolve ``--session ARG`` the way pi does.

    Raises :class:`SessionError` (``No session found matching '<arg>'``) when an id matches
    nothing, and when an existing non-empty file at a given path is not a session.
    """
    if looks_like_path(arg):
        path = Path(os.path.abspath(os.path.join(cwd, paths.expand_home(arg))))
        if not path.exists():
            return SessionMatch(path=path, exists=False)
        if path.stat().st_size > 0 and read_header(path) is None:
            raise SessionError("Session file is not a valid pi session", path=path)
        header = read_header(path)
        return SessionMatch(path=path, exists=True, cwd=str(header.get("cwd")) if header else None)
    local = _match_id(list_sessions(directory), arg)
    if local is not None:
        return SessionMatch(path=local.path, exists=True, cwd=local.cwd)
    everywhere = _match_id(list_all_sessions(agent), arg)
    if everywhere is not None:
        other = os.path.abspath(everywhere.cwd) != os.path.abspath(cwd)
        return SessionMatch(
            path=everywhere.path, exists=True, other_project=other, cwd=everywhere.cwd
        )
    raise SessionError(f"No session found matching '{arg}'")


def refuse_session_target(target: str | os.PathLike[str], source: Path | None = None) -> None:
    """Raise :class:`SessionError` when writing an export to ``target`` would destroy a session:
    when it is ``source`` itself (through any link) or any existing pi session file.

    pi 1.6.0 writes ``pi --export S.jsonl S.jsonl`` over the session it reads.
    """
    path = Path(target)
    if source is not None:
        with contextlib.suppress(OSError):
            if os.path.samefile(path, source):
                raise SessionError(
                    f"refusing to write the export over the session it exports ({source})",
                    path=path,
                )
    if read_header(path) is not None:
        raise SessionError("refusing to write the export over a session file", path=path)


def fork_from(source: Path, directory: Path, *, cwd: str, session_id: str | None = None) -> Path:
    """Copy every entry of ``source`` verbatim into a new session of ``cwd`` (pi's ``forkFrom``).

    The new header has a fresh id (or ``session_id``), ``cwd`` and ``parentSession`` = the
    source path; the entry lines are copied byte for byte (fields this code does not know
    survive). Returns the new file's path. Raises :class:`SessionError` with pi's words when
    ``source`` is missing, empty or not a session (``Cannot fork: source session file is
    empty or invalid: <path>``) or has no header (``Cannot fork: source session has no
    header: <path>``).
    """
    try:
        data = read_regular(source)
    except (OSError, SessionError) as exc:
        raise SessionError(
            f"Cannot fork: source session file is empty or invalid: {source}"
        ) from exc
    lines: list[bytes] = []
    first: Any = None  # the first line that parses: it must be the header
    for raw in data.split(b"\n"):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        if first is None:
            try:
                first = _json.loads(line)
            except ValueError:
                continue
            if isinstance(first, dict) and first.get("type") == "session":
                continue
            break
        lines.append(line)
    if not isinstance(first, dict):
        raise SessionError(f"Cannot fork: source session file is empty or invalid: {source}")
    if first.get("type") != "session":
        raise SessionError(f"Cannot fork: source session has no header: {source}")
    path, sid, stamp = new_session_path(directory, session_id=session_id)
    new_header = {
        "type": "session",
        "version": 3,
        "id": sid,
        "timestamp": stamp,
        "cwd": cwd,
        "parentSession": str(source),
    }
    directory.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as handle:
        handle.write(b"".join(line + b"\n" for line in [_json.dumps(new_header), *lines]))
    return path
