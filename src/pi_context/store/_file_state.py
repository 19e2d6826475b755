"""What the file store knows of each session file since it last read or wrote it.

An append checks the batch against the stored session (its ids, its leaf, its header's version:
see :func:`~pi_context.store.base.decide_append`). Reading and parsing the whole file for that
makes every append cost as much as the session is long. The file store keeps instead, per file,
what those checks need, as of the end of the file's last complete line when it last read or
wrote it (:class:`KnownFile`), and on the next append, under the same locks:

* the file is the same file (device and inode) and not shorter, and its header line and the
  bytes just before the known end are still what they were: only the bytes past the known end
  are read and parsed (none when nobody else wrote; a line another writer such as pi appended
  meanwhile; a torn last line);
* anything else (replaced, shrunk, written since at the same size, or its header line or the
  bytes before the known end changed): the whole file is read again. A file rewritten in
  place to a greater size that keeps those bytes is taken as grown (pi only appends; its one
  rewrite, a version migration, changes the header line).

Every line is read with the session reader's own rules, as a read of the whole file would read
it: the reader decodes the file's last line in full and reads the others by their head, so the
leaf is kept both ways for the last known line (:attr:`KnownFile.leaf_if_last`,
:attr:`KnownFile.leaf_if_more`). An unterminated last line is never part of what is known: it
is parsed again on every append until a newline ends it.

:class:`KnownFiles` holds them for one store, the least recently used let go past a number of
lines in all.
"""

from __future__ import annotations

import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pi_context.session._load.scan import scan_lines
from pi_context.store.base import PreparedEntry, SessionRef, entry_meta, parse_file

__all__ = ["KnownFile", "KnownFiles", "Listed", "Unread", "listing_key", "read_file"]

_CHECK_BYTES: Final = 256
"""Bytes just before the known end compared again before the known state is used."""

KNOWN_LINES: Final = 1_000_000
"""Lines a store keeps known in all (about 100 bytes each); past it the least recently
appended files are let go (and read whole on their next append)."""

_LISTED: Final = 100_000
"""Files whose listing row (line count, leaf) a store keeps."""


@dataclass(slots=True)
class Unread:
    """The bytes of a file past its known end: an unterminated last line, read at an append."""

    data: bytes
    """The unterminated last line (empty when the file ends with a newline)."""
    entry_id: str | None
    """Its entry id, when it is an entry (a whole JSON line whose newline is missing)."""
    leaf: str | None
    """The session's leaf with this line read as the file's last."""


@dataclass(slots=True)
class KnownFile:
    """A session file as of ``size``: the end of its last complete line after its header."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    head: bytes
    """The bytes ``[0, end of the header line]``, newline included."""
    check: bytes
    """The last bytes (at most :data:`_CHECK_BYTES`) before ``size``."""
    version: int
    starts: array[int]
    """The offset in the file of each line after the header line (entries, blank and damaged
    lines alike): ``starts[seq - 1]``."""
    ids: dict[str, int]
    """Each entry id → the seq of its last line."""
    leaf_if_last: str | None
    """The leaf when the file ends at ``size`` (its last line decoded in full)."""
    leaf_if_more: str | None
    """The leaf over ``[0, size)`` when lines follow (its last line read by its head)."""

    @property
    def lines(self) -> int:
        """Lines after the header line."""
        return len(self.starts)

    # -- reading --------------------------------------------------------------------------------

    def same_file(self, fd: int, stat: os.stat_result) -> bool:
        """Whether the file open as ``fd`` still starts with what is known of it: the same
        file, not shorter, not written since at the same size, and its header line and the
        bytes before the known end unchanged."""
        if (stat.st_dev, stat.st_ino) != (self.dev, self.ino) or stat.st_size < self.size:
            return False
        if stat.st_size == self.size and stat.st_mtime_ns != self.mtime_ns:
            return False  # rewritten in place (an append would have made it longer)
        check_from = self.size - len(self.check)
        return (
            os.pread(fd, len(self.head), 0) == self.head
            and os.pread(fd, len(self.check), check_from) == self.check
        )

    def catch_up(self, fd: int, size: int) -> Unread:
        """Take in the complete lines past the known end (up to ``size``, read from ``fd``);
        the unterminated last line, if any, is returned, not taken in."""
        rest = _read(fd, self.size, size) if size > self.size else b""
        end = rest.rfind(b"\n") + 1
        if end:
            self._take(rest[:end])
        return self._unread(rest[end:])

    def _take(self, chunk: bytes) -> None:
        """Take in ``chunk``: complete lines (ending with a newline) at the known end."""
        offset = self.size
        first = seq = self.lines
        starts = self.starts
        ids = self.ids
        pos = 0
        while pos < len(chunk):
            newline = chunk.index(b"\n", pos)
            seq += 1
            starts.append(offset + pos)
            meta = entry_meta(chunk[pos:newline])
            if meta is not None:
                ids[meta.id] = seq
            pos = newline + 1
        count = seq - first
        self.leaf_if_more, self.leaf_if_last = _leaves(self.leaf_if_more, chunk, count)
        self.size = offset + len(chunk)
        self.check = (self.check + chunk)[-_CHECK_BYTES:]

    def _unread(self, data: bytes) -> Unread:
        if not data:
            return Unread(b"", None, self.leaf_if_last)
        meta = entry_meta(data)
        scan = scan_lines(data, header_seen=True)  # the file's last line: decoded in full
        leaf = scan.entries[-1].id if len(scan.entries) else self.leaf_if_more
        return Unread(data, meta.id if meta is not None else None, leaf)

    def stored_lines(self, fd: int, unread: Unread) -> StoredLines:
        return StoredLines(self, fd, unread)

    def seq_of(self, unread: Unread) -> Mapping[str, int]:
        """Entry id → seq over the known lines and ``unread``'s."""
        if unread.entry_id is None:
            return self.ids
        return _Over(self.ids, unread.entry_id, self.lines + 1)

    # -- writing --------------------------------------------------------------------------------

    def wrote(self, unread: Unread, batch: Sequence[PreparedEntry], written: bytes) -> None:
        """Take in an append of ``written`` (the batch's lines, after a newline ending
        ``unread``'s line if there was one) at the file's end, ``size + len(unread.data)``."""
        offset = self.size
        seq = self.lines
        if unread.data:  # now a line ending with " \n", read the same way as before
            seq += 1
            self.starts.append(offset)
            if unread.entry_id is not None:
                self.ids[unread.entry_id] = seq
            offset += len(unread.data) + 2
        for entry in batch:
            seq += 1
            self.starts.append(offset)
            self.ids[entry.id] = seq
            offset += len(entry.line) + 1
        self.leaf_if_last = self.leaf_if_more = batch[-1].id
        self.check = (self.check + unread.data + written)[-_CHECK_BYTES:]
        self.size = offset


class StoredLines(Mapping[str, bytes]):
    """A stored entry's line by its id, read from the file when asked (a retry's check)."""

    def __init__(self, known: KnownFile, fd: int, unread: Unread) -> None:
        self._known = known
        self._fd = fd
        self._unread = unread

    def __getitem__(self, entry_id: str) -> bytes:
        known = self._known
        unread = self._unread
        if unread.entry_id == entry_id:
            return unread.data
        seq = known.ids[entry_id]
        start = known.starts[seq - 1]
        end = known.starts[seq] if seq < known.lines else known.size
        return _read(self._fd, start, end - 1)

    def __iter__(self) -> Iterator[str]:
        yield from self._known.seq_of(self._unread)

    def __len__(self) -> int:
        return len(self._known.seq_of(self._unread))


class _Over(Mapping[str, int]):
    """``base`` with one more id (the unterminated last line's entry)."""

    def __init__(self, base: dict[str, int], entry_id: str, seq: int) -> None:
        self._base = base
        self._id = entry_id
        self._seq = seq

    def __getitem__(self, entry_id: str) -> int:
        return self._seq if entry_id == self._id else self._base[entry_id]

    def __contains__(self, entry_id: object) -> bool:
        return entry_id == self._id or entry_id in self._base

    def __iter__(self) -> Iterator[str]:
        yield from self._base
        if self._id not in self._base:
            yield self._id

    def __len__(self) -> int:
        return len(self._base) + (self._id not in self._base)


def read_file(
    ref: SessionRef, fd: int, size: int, stat: os.stat_result
) -> tuple[KnownFile, Unread] | bytes:
    """The file's state, from all of its ``size`` bytes; an error names ``ref`` for a file
    that is not a session. A file whose header line has no newline yet is returned as its
    bytes (nothing is known before a complete header line)."""
    data = _read(fd, 0, size)
    scan = parse_file(data, str(ref))
    head_end = 0
    for _ in range(scan.header_line or 1):
        head_end = data.find(b"\n", head_end) + 1
        if not head_end:
            return data
    known = KnownFile(
        dev=stat.st_dev,
        ino=stat.st_ino,
        size=head_end,
        mtime_ns=stat.st_mtime_ns,
        head=data[:head_end],
        check=data[max(0, head_end - _CHECK_BYTES) : head_end],
        version=scan.version,
        starts=array("q"),
        ids={},
        leaf_if_last=None,
        leaf_if_more=None,
    )
    end = data.rfind(b"\n") + 1
    if end > head_end:
        known._take(data[head_end:end])
    return known, known._unread(data[end:])


def _leaves(before: str | None, chunk: bytes, count: int) -> tuple[str | None, str | None]:
    """The leaf after ``chunk`` (``count`` complete lines) with its last line read by its head
    (lines follow) and decoded in full (the file's last), ``before`` the leaf before it."""
    # a blank line after the chunk: no line of it is the last one the reader reads
    entries = scan_lines(chunk + b"\n", header_seen=True).entries
    last_is_entry = len(entries) > 0 and entries[-1].line == count
    if last_is_entry:
        if_more: str | None = entries[-1].id
        before = entries[-2].id if len(entries) > 1 else before
    else:
        if_more = before = entries[-1].id if len(entries) else before
    last_line = chunk[chunk.rfind(b"\n", 0, len(chunk) - 1) + 1 : -1]
    in_full = scan_lines(last_line + b"\n", header_seen=True).entries
    return if_more, in_full[-1].id if len(in_full) else before


def _read(fd: int, start: int, end: int) -> bytes:
    chunks: list[bytes] = []
    while start < end:
        chunk = os.pread(fd, end - start, start)
        if not chunk:
            break
        chunks.append(chunk)
        start += len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class Listed:
    """A listing row as of one state of a file (device, inode, size, mtime)."""

    key: tuple[int, int, int, int]
    lines: int
    leaf: str | None


class KnownFiles:
    """One store's :class:`KnownFile` per path, and its listing rows. An append takes its
    file's state out (:meth:`take`) and puts it back when it is still true (:meth:`put`): the
    file's locks keep any other append of that file waiting meanwhile."""

    def __init__(self, max_lines: int = KNOWN_LINES) -> None:
        self._lock = threading.Lock()
        self._known: OrderedDict[str, tuple[KnownFile, int]] = OrderedDict()
        self._lines = 0
        self._max_lines = max_lines
        self._listed: OrderedDict[str, Listed] = OrderedDict()

    def take(self, path: str) -> KnownFile | None:
        with self._lock:
            found = self._known.pop(path, None)
            if found is None:
                return None
            self._lines -= found[1]
            return found[0]

    def put(self, path: str, known: KnownFile) -> None:
        with self._lock:
            old = self._known.pop(path, None)
            if old is not None:
                self._lines -= old[1]
            self._known[path] = (known, known.lines)
            self._lines += known.lines
            while self._lines > self._max_lines and len(self._known) > 1:
                _, (_, lines) = self._known.popitem(last=False)
                self._lines -= lines

    def forget(self, path: str) -> None:
        with self._lock:
            found = self._known.pop(path, None)
            if found is not None:
                self._lines -= found[1]
            self._listed.pop(path, None)

    def listed(self, path: str, key: tuple[int, int, int, int]) -> Listed | None:
        with self._lock:
            row = self._listed.get(path)
            return row if row is not None and row.key == key else None

    def list_as(self, path: str, row: Listed) -> None:
        with self._lock:
            self._listed.pop(path, None)
            self._listed[path] = row
            if len(self._listed) > _LISTED:
                self._listed.popitem(last=False)


def listing_key(stat: os.stat_result) -> tuple[int, int, int, int]:
    """What identifies one state of a file for a listing row: an append changes its size."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
