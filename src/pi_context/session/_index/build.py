"""(private) Building a column index: the file's lines read a batch at a time and each checked
once, in this process or, for a large file, half of them in a forked helper.

:class:`Columns` holds the per-entry columns of a run of entry lines and fills them from the
lines (:meth:`Columns.index_lines`). A run that starts mid-file may name parents it has not
seen: it notes them (:attr:`Columns.foreign`) for whoever holds the lines before it.

:class:`Helper` forks a process that indexes the second half of the file while this one
indexes the first; its columns come back over a pipe as one msgpack message
(:class:`Part`) and join this process's (:meth:`Columns.join`). Whatever goes wrong in the
helper (a line the lean path does not take, a crash, a signal) only means that the file goes
to the full loader, exactly as if one process had found it; a system that refuses the pipe or
the process only means that this process reads the whole file.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Final, TypeVar

import msgspec

from pi_context import _json
from pi_context.session._load.checks import Head, head_if_well_typed_and_shallow
from pi_context.session._load.scan import is_blank_line, split_lines
from pi_context.session.entries import UNREADABLE, Entry
from pi_context.session.problems import ProblemLog

__all__ = [
    "CHUNK_SIZE",
    "PARALLEL_SIZE",
    "Columns",
    "Helper",
    "NeedsFullLoader",
    "batches",
    "can_fork",
    "decode_object",
    "first_line",
    "split_point",
]

CHUNK_SIZE: Final = 1 << 20

PARALLEL_SIZE: Final = 16 << 20
"""Files from this size up are indexed by two processes (smaller ones are done before a fork
would pay for itself)."""

READ_IN_FULL: Final = frozenset({"label", "session_info"})
"""Entry types whose fields the index keeps (labels, the session name): decoded in full."""

_NEWLINE_WINDOW: Final = 64 << 10

_N = TypeVar("_N", str, str | None)


class NeedsFullLoader(Exception):
    """The file needs the full loader (see :mod:`~pi_context.session._index.file_index`)."""


def decode_object(line: bytes) -> dict[str, Any]:
    try:
        value = _json.loads(line)
    except (ValueError, RecursionError) as exc:  # JSONDepthError is a ValueError
        raise NeedsFullLoader from exc
    if not isinstance(value, dict):
        raise NeedsFullLoader
    return value


def batches(fd: int, start: int, end: int) -> Iterator[tuple[int, list[bytes]]]:
    """The ``\\n``-separated lines of the bytes ``start:end`` of ``fd`` (the newline dropped;
    the last line may lack one), a chunk's worth at a time, each batch with the file offset of
    its first line (a line cut by chunk boundaries is joined once, when its end arrives)."""
    for lines, _ in split_lines(_chunks(fd, start, end)):
        yield start, lines
        start += sum(map(len, lines)) + len(lines)


def _chunks(fd: int, start: int, end: int) -> Iterator[bytes]:
    while start < end:
        chunk = os.pread(fd, min(CHUNK_SIZE, end - start), start)
        if not chunk:
            return
        start += len(chunk)
        yield chunk


def first_line(
    lines: Iterator[tuple[int, list[bytes]]],
) -> tuple[bytes | None, int, int, list[bytes]]:
    """The first line of ``lines`` (batches) that is not blank (``None``: there is none), its
    line number, and the file offset and the lines of the rest of its batch."""
    number = 0
    for start, batch in lines:
        for spot, line in enumerate(batch):
            number += 1
            if not is_blank_line(line):
                rest = start + sum(map(len, batch[: spot + 1])) + spot + 1
                return line, number, rest, batch[spot + 1 :]
    return None, number, 0, []


def split_point(fd: int, size: int) -> int:
    """Where a helper process takes over the first ``size`` bytes of ``fd``: just after the
    first newline from the middle, when the file is large enough and this process may fork
    (see :func:`can_fork`); ``size`` (no helper) otherwise."""
    if size < PARALLEL_SIZE or not can_fork():
        return size
    offset = size // 2
    while offset < size:
        window = os.pread(fd, min(_NEWLINE_WINDOW, size - offset), offset)
        if not window:
            break
        found = window.find(b"\n")
        if found >= 0:
            return offset + found + 1
        offset += len(window)
    return size


class Part(msgspec.Struct, array_like=True):
    """The columns of a run of lines as they cross from the helper (arrays as their bytes)."""

    ids: list[str]
    parents: bytes
    foreign: list[tuple[int, str]]
    type_codes: bytes
    type_names: list[str]
    offsets: bytes
    lengths: bytes
    line_numbers: bytes
    role_codes: bytes
    role_names: list[str | None]
    kept: list[tuple[bytes, int]]


class Columns:
    """Per-entry columns of a run of entry lines (see
    :class:`~pi_context.session._index.file_index.ColumnIndex`, which is one)."""

    def __init__(self, label: str, *, open_start: bool = False) -> None:
        self.offsets = array("q")
        """Byte offset of each entry's line."""
        self.lengths = array("q")
        """Length of each entry's line (without its newline)."""
        self.line_numbers = array("q")
        """1-based line number of each entry (in a helper's run: counted from its start)."""
        self.parents = array("i")
        """Position of each entry's parent (-1: a root)."""
        self.type_codes = bytearray()
        """Each entry's type, as a position in :attr:`type_names`."""
        self.type_names: list[str] = []
        self.positions: dict[str, int] = {}
        """Entry id → position in file order."""
        self.role_codes = bytearray()
        """Each message entry's role, as a position in :attr:`role_names` (0: none, and every
        entry that is not a message)."""
        self.role_names: list[str | None] = [None]
        self.kept: list[Entry] = []
        """The entries read in full for their fields (labels, session names), in file order."""
        self.foreign: list[tuple[int, str]] = []
        """``(position, parent id)`` of entries whose parent is not in this run (a run that
        starts mid-file only; their :attr:`parents` are -1 until joined)."""
        self._open_start = open_start
        self._log = ProblemLog(label)

    def index_lines(self, lines: Iterable[tuple[int, list[bytes]]], number: int) -> int:
        """Add the entry lines of ``lines`` (batches), the first of which follows line
        ``number``; returns the number of the last line read."""
        log = self._log
        positions = self.positions
        claim, find = positions.setdefault, positions.get
        codes = {name: code for code, name in enumerate(self.type_names)}
        role_codes = {name: code for code, name in enumerate(self.role_names)}
        add_role = self.role_codes.append
        add_offset, add_length, add_number = (
            self.offsets.append,
            self.lengths.append,
            self.line_numbers.append,
        )
        add_parent, add_code = self.parents.append, self.type_codes.append
        count = len(self.parents)  # the next entry's position
        for offset, batch in lines:
            for line in batch:
                number += 1
                size = len(line)
                at = offset
                offset += size + 1
                if line[:1] != b"{" and is_blank_line(line):
                    continue
                # The compiled check answers for nearly every line; a line it refuses and the
                # few entries whose fields are kept (labels, the session name) are decoded and
                # checked in full, as the loader does.
                head = head_if_well_typed_and_shallow(line)
                if head is None or head[0] in READ_IN_FULL:
                    head = self._read_in_full(line, number, log)
                kind, entry_id, parent_id, role = head
                if claim(entry_id, count) != count:
                    raise NeedsFullLoader  # a duplicate id
                if parent_id is None:
                    parent = -1
                else:
                    parent = find(parent_id, -2)
                    if parent == -2:
                        if not self._open_start:
                            raise NeedsFullLoader  # a missing parent, or one that comes later
                        self.foreign.append((count, parent_id))
                        parent = -1
                    elif parent == count:
                        parent = -1  # its own parent: a root, as the loader reads it
                code = codes.get(kind)
                if code is None:
                    code = _new_code(codes, self.type_names, kind)
                role_code = role_codes.get(role) if kind == "message" else 0
                if role_code is None:
                    role_code = _new_code(role_codes, self.role_names, role)
                add_parent(parent)
                add_code(code)
                add_offset(at)
                add_length(size)
                add_number(number)
                add_role(role_code)
                count += 1
        return number

    @property
    def kinds(self) -> Counter[tuple[str, str | None]]:
        """``(type, role)`` → how many entries (the role of message entries only)."""
        kinds: Counter[tuple[str, str | None]] = Counter()
        names, roles = self.type_names, self.role_names
        for (code, role), many in Counter(
            zip(self.type_codes, self.role_codes, strict=True)
        ).items():
            kinds[names[code], roles[role]] = many
        return kinds

    def _read_in_full(self, line: bytes, number: int, log: ProblemLog) -> Head:
        """The head of a line decoded and checked in full (kept when its fields are)."""
        entry = Entry.from_data(decode_object(line), line=number, raw=line, log=log)
        if log.problems or entry.type == UNREADABLE:
            raise NeedsFullLoader
        if entry.type in READ_IN_FULL:
            self.kept.append(entry)
        return entry.type, entry.id, entry.parent_id, entry.role

    def part(self) -> Part:
        return Part(
            list(self.positions),
            self.parents.tobytes(),
            self.foreign,
            bytes(self.type_codes),
            self.type_names,
            self.offsets.tobytes(),
            self.lengths.tobytes(),
            self.line_numbers.tobytes(),
            bytes(self.role_codes),
            self.role_names,
            [(entry.raw, entry.line or 0) for entry in self.kept],
        )

    def join(self, part: Part, lines_before: int) -> None:
        """Append the columns of the run that follows this one's last line, line
        ``lines_before``; its foreign parents must be here."""
        base = len(self.parents)
        count = len(part.ids)
        positions = self.positions
        foreign = [(at, positions.get(parent_id, -1)) for at, parent_id in part.foreign]
        if any(found < 0 for _, found in foreign):
            raise NeedsFullLoader  # a missing parent, or one that comes later
        positions.update(zip(part.ids, range(base, base + count), strict=True))
        if len(positions) != base + count:
            raise NeedsFullLoader  # an id in both runs
        parents = array("i")
        parents.frombytes(part.parents)
        self.parents.extend([p + base if p >= 0 else p for p in parents])
        for at, found in foreign:
            self.parents[base + at] = found
        self.type_codes += part.type_codes.translate(_translation(part.type_names, self.type_names))
        self.role_codes += part.role_codes.translate(_translation(part.role_names, self.role_names))
        self.offsets.frombytes(part.offsets)
        self.lengths.frombytes(part.lengths)
        numbers = array("q")
        numbers.frombytes(part.line_numbers)
        self.line_numbers.extend([n + lines_before for n in numbers])
        for raw, number in part.kept:
            self._read_in_full(raw, number + lines_before, self._log)


def _new_code(codes: dict[_N, int], names: list[_N], name: _N) -> int:
    """Give ``name`` the next code of a one-byte code column (:class:`NeedsFullLoader` past 256)."""
    if len(codes) > 255:
        raise NeedsFullLoader
    code = codes[name] = len(names)
    names.append(name)
    return code


def _translation(codes: list[_N], names: list[_N]) -> bytes:
    """The table that maps another run's codes (of ``codes``) to this run's (of ``names``,
    extended with the new ones)."""
    table = bytearray(range(256))
    for code, name in enumerate(codes):
        if name not in names:
            if len(names) > 255:
                raise NeedsFullLoader
            names.append(name)
        table[code] = names.index(name)
    return bytes(table)


def can_fork() -> bool:
    """Whether a helper process may be forked here: on Linux, from a process with a single
    thread (a fork copies only the calling thread), with a second CPU to run it on."""
    return (
        sys.platform == "linux"
        and threading.active_count() == 1
        and len(os.sched_getaffinity(0)) > 1
    )


_SIGNALS: Final = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
"""Held off while the helper is forked: its first moments run the parent's Python handlers."""


class Helper:
    """A forked process indexing the lines ``start:end`` of a file (see the module
    docstring); :meth:`result` waits for its columns, :meth:`close` ends it and reaps it.

    The helper ignores Ctrl-C (the parent, interrupted, ends it), writes nothing to the
    terminal (its standard streams are ``/dev/null``), and stops when its parent is gone."""

    def __init__(self, pid: int, pipe: int) -> None:
        self._pid = pid
        self._pipe = pipe

    @classmethod
    def start(cls, fd: int, start: int, end: int, label: str) -> Helper | None:
        """The helper, running; ``None`` when the system refuses a pipe or a process (the
        caller indexes the whole file itself)."""
        parent = os.getpid()
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        finally:
            if os.getpid() == parent:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if pid == 0:  # pragma: no cover - the helper (its work is checked through the parent)
            _run_helper(fd, start, end, label, (read_end, write_end), parent, blocked)
        os.close(write_end)
        return cls(pid, read_end)

    def result(self) -> Part:
        """The helper's columns; :class:`NeedsFullLoader` when it found a line the lean path does not
        take or ended without an answer."""
        chunks = []
        while chunk := os.read(self._pipe, 1 << 20):
            chunks.append(chunk)
        message = b"".join(chunks)
        if message[:1] != b"K":
            raise NeedsFullLoader
        try:
            return msgspec.msgpack.decode(memoryview(message)[1:], type=Part)
        except msgspec.DecodeError as exc:
            raise NeedsFullLoader from exc

    def close(self) -> None:
        if self._pipe >= 0:
            os.close(self._pipe)
            self._pipe = -1
        if self._pid > 0:
            pid, self._pid = self._pid, -1
            # A helper that is done is a zombie until reaped here; with SIGCHLD ignored (as
            # a parent process may have set it) the system has reaped it already.
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == 0:  # still at work: no longer needed
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)


class _Orphaned(Exception):
    """The helper's parent is gone."""


def _while_wanted(
    lines: Iterator[tuple[int, list[bytes]]], parent: int
) -> Iterator[tuple[int, list[bytes]]]:  # pragma: no cover - runs in the forked helper
    for batch in lines:
        if os.getppid() != parent:
            raise _Orphaned
        yield batch


def _run_helper(
    fd: int,
    start: int,
    end: int,
    label: str,
    pipe: tuple[int, int],
    parent: int,
    blocked: Iterable[int],
) -> None:  # pragma: no cover - runs in the forked helper
    """The helper's whole life: index, answer ``K`` + the part or ``U``, and leave without
    running any of the parent's exit handlers or flushing its buffers."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(pipe[0])
        nothing = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(nothing, stream)
        columns = Columns(label, open_start=True)
        try:
            columns.index_lines(_while_wanted(batches(fd, start, end), parent), 0)
            message = b"K" + msgspec.msgpack.encode(columns.part())
        except NeedsFullLoader:
            message = b"U"
        with open(pipe[1], "wb") as out:
            out.write(message)
        code = 0
    finally:
        os._exit(code)
