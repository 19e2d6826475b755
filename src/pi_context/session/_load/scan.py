"""Reading session files: split, scan, validate the header, migrate v1/v2 to v3.

The loader splits the file bytes on ``\\n`` only (never ``splitlines``: U+2028 and friends occur
raw inside JSON strings; a file is read in chunks, so the whole file never sits in one buffer
beside its lines: :func:`scan_file`) and reads each line's ``type``/``id``/``parentId`` (and
message role) with a regular expression that matches the key order pi writes. Only lines that
do not match, and the last line (the one a crash can tear), are decoded in full up front; the
rest decode lazily when first used (:class:`~pi_context.session.entries.Entry`).

Like pi 1.6.0, blank lines and lines that are not JSON objects are skipped, and the first JSON
line must be a ``session`` header with a string ``id``. Unlike pi, every skipped line is reported
as a :class:`LoadProblem`, and reading never writes to the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO, Final

from msgspec import Struct, field

from pi_context import _json
from pi_context.errors import SessionFormatError
from pi_context.session._load.columns import EntryColumns
from pi_context.session.entries import Entry
from pi_context.session.problems import LoadProblem, ProblemLog

__all__ = [
    "CURRENT_VERSION",
    "LoadProblem",
    "ScanResult",
    "SplitBytes",
    "is_blank_line",
    "is_js_blank",
    "migrate_entries",
    "parse_session_bytes",
    "scan_file",
    "scan_lines",
    "split_lines",
]

CURRENT_VERSION: Final = 3

_CHUNK_SIZE: Final = 1 << 20
"""Bytes :func:`scan_file` reads at a time (the transient memory beyond the lines it keeps)."""

# {"type":"T","id":"I","parentId":"P"|null,"timestamp":"…","message":{"role":"R"
# (group 4, empty, marks where the head that type, id and parent spell again ends; group 5 is
# the timestamp, group 6 the role)
_FAST = re.compile(
    rb'\{"type":"([A-Za-z_]+)","id":"([^"\\]*)","parentId":(?:"([^"\\]*)"|null),()'
    rb'"timestamp":"([^"\\]*)"(?:,"message":\{"role":"([A-Za-z]+)")?'
)
# custom / custom_message entries put their own fields before "id"; they are rare: full decode.

_TAIL_MAX: Final = 2048
"""Lines up to this long are kept without the head their type, id, parent and role spell again
(see :meth:`EntryColumns.add_scanned`): there the ~100 bytes of head are half the line; past it
they are noise."""


def is_js_blank(text: str) -> bool:
    """True when JavaScript's ``text.trim()`` would be empty."""
    return not _json.js_trim(text)


class ScanResult(Struct):
    """What :func:`scan_lines` found in a file's bytes."""

    header: dict[str, Any] | None = None
    header_line: int | None = None
    entries: EntryColumns = field(default_factory=EntryColumns)
    """The entries in file order (see :class:`EntryColumns`: no object per scanned line)."""
    problems: list[LoadProblem] = field(default_factory=list)
    blank_lines: int = 0
    malformed_lines: int = 0
    trailing_newline: bool = True
    """False when the last line lacks its ``\\n`` (pi's loader appends one; we do on next append)."""
    newlines: int = 0
    """How many ``\\n`` the scanned bytes held."""
    torn_tail: bool = False
    """True when the last line is unterminated and not valid JSON (a crash mid-append)."""
    size: int = 0
    """How many bytes were scanned (after a stripped BOM)."""
    unterminated_bytes: int = 0
    """The length of the last line when it lacks its ``\\n`` (0 when the bytes end with one)."""
    log: ProblemLog = field(default_factory=lambda: ProblemLog(None))
    """Where the entries report problems found when they are first decoded."""

    @property
    def version(self) -> int:
        """The header's version (a missing version means v1, as in pi)."""
        if self.header is None:
            return CURRENT_VERSION
        value = self.header.get("version")
        return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _decode_object(line: bytes) -> dict[str, Any] | str:
    """The object on ``line``, or why there is none."""
    try:
        value = _json.loads(line)
    except _json.JSONDepthError as exc:
        return str(exc)
    except ValueError:
        return "not valid JSON"
    return value if isinstance(value, dict) else "not a JSON object"


def is_blank_line(line: bytes) -> bool:
    """Whether a line holds only what JavaScript's ``trim`` removes (pi skips such lines)."""
    if not line.strip():
        return True
    if line.isascii():
        return False
    return is_js_blank(line.decode("utf-8", errors="replace"))


def split_lines(chunks: Iterable[bytes]) -> Iterator[tuple[list[bytes], bool]]:
    """The ``\\n``-separated lines of a stream of byte chunks (newlines dropped), a batch per
    chunk that completes a line: ``(lines, True)``; then, when the stream does not end with a
    newline, its last line alone: ``([line], False)``. A line cut by chunk boundaries is
    joined once, when its end arrives; chunks are let go as soon as they are split."""
    partial: list[bytes] = []
    for chunk in chunks:
        lines = chunk.split(b"\n")
        del chunk
        tail = lines.pop()
        if lines:
            if partial:
                partial.append(lines[0])
                lines[0] = b"".join(partial)
                partial = []
            yield lines, True
        if tail:
            partial.append(tail)
    if partial:
        yield [b"".join(partial)], False


def _line_batches(
    chunks: Iterable[bytes], result: ScanResult
) -> Iterator[tuple[list[bytes], bool]]:
    """Split a stream of byte chunks on ``\\n`` into batches of lines (newlines dropped).

    Yields ``(lines, last)``; ``last`` is True for the final batch only, whose last line is the
    stream's last line. Before the final batch, ``result.trailing_newline``, ``size`` and
    ``unterminated_bytes`` are set. A line cut by a chunk boundary is joined (once) when its
    newline arrives; an empty stream yields one empty final batch.
    """
    size = 0

    def counted() -> Iterator[bytes]:
        nonlocal size
        for chunk in chunks:
            size += len(chunk)
            yield chunk

    pending: list[bytes] = []
    for lines, terminated in split_lines(counted()):
        if not terminated:
            result.size = size
            result.trailing_newline = False
            result.unterminated_bytes = len(lines[0])
            if pending:
                yield pending, False
            yield lines, True
            return
        if pending:
            yield pending, False
        pending = lines
    result.size = size
    yield pending, True


class SplitBytes:
    """A file's bytes held as their lines: ``lines`` are the bytes split on ``\\n`` (none holds
    one), the last one what follows the last newline (``b""`` when the bytes end with one).
    ``len()`` is the bytes' length; :func:`scan_lines` reads the lines as they are, with the
    same result as for the joined bytes (a store that reads a file as lines need not join them
    to have them split again)."""

    __slots__ = ("lines", "size")

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines
        self.size = sum(map(len, lines)) + max(len(lines) - 1, 0)

    def __len__(self) -> int:
        return self.size

    def join(self) -> bytes:
        """The bytes."""
        return b"\n".join(self.lines)


def _given_lines(data: SplitBytes, result: ScanResult) -> Iterator[tuple[Sequence[bytes], bool]]:
    """:func:`_line_batches` of ``data``'s bytes, from its lines as they are (one batch)."""
    lines = data.lines
    last = lines[-1] if lines else b""
    result.size = data.size
    if last:
        result.trailing_newline = False
        result.unterminated_bytes = len(last)
        yield lines, True
    else:
        yield lines[:-1], True


def _scan(
    chunks: Iterable[bytes] | SplitBytes,
    *,
    path: str | None,
    header_seen: bool,
    first_line: int,
    require_header: bool,
) -> ScanResult:
    log = ProblemLog(path)
    result = ScanResult(log=log, entries=EntryColumns(log))
    batches: Iterator[tuple[Sequence[bytes], bool]] = (
        _given_lines(chunks, result)
        if isinstance(chunks, SplitBytes)
        else _line_batches(chunks, result)
    )
    entries = result.entries
    problems = result.problems
    fast = _FAST.match
    scanned = entries.add_scanned
    names: dict[bytes, str] = {}
    previous_raw_id = b""
    previous_id = ""
    header_found = header_seen
    offset = 0
    for batch, final in batches:
        last_index = offset + len(batch) - 1 if final else -1
        for index, line in enumerate(batch, offset):
            m = fast(line) if header_found and index != last_index else None
            if m is not None and line.endswith((b"}", b"}\r")):
                kind_raw, id_raw, parent_raw, role_raw = m.group(1, 2, 3, 6)
                if role_raw is not None or kind_raw != b"message":
                    kind = names.get(kind_raw)
                    if kind is None:
                        kind = names[kind_raw] = kind_raw.decode()
                    role = None
                    if role_raw is not None:
                        role = names.get(role_raw)
                        if role is None:
                            role = names[role_raw] = role_raw.decode()
                    if parent_raw is None:
                        parent: str | None = None
                    elif parent_raw == previous_raw_id:
                        parent = previous_id
                    else:
                        parent = parent_raw.decode("utf-8", errors="replace")
                    previous_raw_id = id_raw
                    previous_id = id_raw.decode("utf-8", errors="replace")
                    # A small line is kept without the head its (ASCII) ids spell back
                    # exactly; on a large one the head does not matter.
                    tail = (
                        len(line) <= _TAIL_MAX
                        and id_raw.isascii()
                        and (parent_raw is None or parent_raw.isascii())
                    )
                    scanned(
                        kind,
                        previous_id,
                        parent,
                        role,
                        line,
                        index + first_line,
                        (m.start(5), m.end(5) + 1, m.end()) if tail else None,
                    )
                    continue
            number = index + first_line
            if is_blank_line(line):
                result.blank_lines += 1
                continue
            obj = _decode_object(line)
            if isinstance(obj, str):
                result.malformed_lines += 1
                if index == last_index and not result.trailing_newline:
                    result.torn_tail = True
                    reason = "incomplete last line (torn write?): skipped"
                    fault = f"line {number} (the last) is incomplete (torn write?)"
                elif obj.startswith("nested"):
                    reason = f"{obj}: skipped"
                    fault = f"line {number} is {obj}"
                else:
                    reason = "not a JSON object: skipped"
                    fault = f"line {number} is not a JSON object"
                problems.append(LoadProblem(path, number, reason, fault))
                continue
            if not header_found:
                valid = obj.get("type") == "session" and isinstance(obj.get("id"), str)
                if require_header and not valid:
                    raise SessionFormatError(
                        "not a valid pi session (the first JSON line must be a session header "
                        "with a string id)",
                        path=path,
                        line=number,
                    )
                header_found = True
                result.header = obj
                result.header_line = number
                continue
            entries.add(Entry.from_data(obj, line=number, raw=line, log=log))
        offset += len(batch)
    result.newlines = offset - (0 if result.trailing_newline else 1)
    return result


def scan_lines(
    data: bytes | SplitBytes,
    *,
    path: str | None = None,
    strip_bom: bool = False,
    header_seen: bool = False,
    first_line: int = 1,
    require_header: bool = True,
) -> ScanResult:
    """Split ``data`` into the header and lazily decoded entries, collecting problems.

    ``strip_bom`` reproduces pi's ``parseSessionEntries`` (which trims the whole text first, so
    a leading BOM is ignored); the file loader, like pi's ``loadEntriesFromFile``, treats a
    BOM-prefixed first line as malformed. ``header_seen`` and ``first_line`` scan a tail of a
    file whose header was already read (lines numbered from ``first_line``).
    ``data`` may be :class:`SplitBytes` (the same result, read from its lines).
    ``require_header=False`` takes the first JSON object as the header whatever it holds (pi's
    ``parseSessionEntries`` view) instead of raising.
    """
    if isinstance(data, SplitBytes):
        if strip_bom and data.lines and data.lines[0].startswith(b"\xef\xbb\xbf"):
            data = SplitBytes([data.lines[0][3:], *data.lines[1:]])
    elif strip_bom and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return _scan(
        data if isinstance(data, SplitBytes) else (data,),
        path=path,
        header_seen=header_seen,
        first_line=first_line,
        require_header=require_header,
    )


def _chunks(file: BinaryIO, chunk_size: int, limit: int | None) -> Iterator[bytes]:
    remaining = limit
    while remaining is None or remaining > 0:
        chunk = file.read(chunk_size if remaining is None else min(chunk_size, remaining))
        if not chunk:
            return
        if remaining is not None:
            remaining -= len(chunk)
        yield chunk


def scan_file(
    file: BinaryIO,
    *,
    path: str | None = None,
    chunk_size: int | None = None,
    limit: int | None = None,
) -> ScanResult:
    """:func:`scan_lines` over the rest of an open binary file, read ``chunk_size`` bytes at a
    time (default 1 MiB; the same result as scanning its bytes; ``size`` is how many were read),
    and never more than ``limit`` bytes (the file's size when it was opened).

    The header is required as in :func:`scan_lines` when a JSON line precedes it, but a file
    without any JSON line (empty or blank) yields ``header=None`` instead of raising; see
    :func:`parse_session_bytes`. ``OSError`` from reading propagates.
    """
    return _scan(
        _chunks(file, chunk_size or _CHUNK_SIZE, limit),
        path=path,
        header_seen=False,
        first_line=1,
        require_header=True,
    )


def parse_session_bytes(data: bytes, *, path: str | None = None) -> ScanResult:
    """Scan ``data`` and require a header (an empty or all-blank file has none)."""
    result = scan_lines(data, path=path)
    if result.header is None:
        raise SessionFormatError(
            "not a valid pi session (no session header line)", path=path, line=1
        )
    return result


def migrate_entries(
    header: dict[str, Any], entries: Sequence[Entry], new_id: Callable[[], str]
) -> tuple[dict[str, Any], Sequence[Entry]]:
    """Migrate a v1/v2 session to v3 in memory, as pi 1.6.0 does on load.

    v1 → v2: every entry gets a fresh id and the previous entry as parent (a linear chain); a
    compaction's ``firstKeptEntryIndex`` (an index into the file including the header) becomes
    ``firstKeptEntryId``. v2 → v3: message role ``hookMessage`` becomes ``custom``. The header
    gets ``version: 3``. Returns new objects; the inputs are not modified.
    """
    version = header.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        version = 1
    if version >= CURRENT_VERSION:
        return header, entries
    new_header = dict(header)
    new_header["version"] = CURRENT_VERSION
    if version < 2:
        datas = [dict(e.data) for e in entries]
        ids = [new_id() for _ in datas]
        previous: str | None = None
        for data, entry_id in zip(datas, ids, strict=True):
            data["id"] = entry_id
            data["parentId"] = previous
            previous = entry_id
            index = data.get("firstKeptEntryIndex")
            if (
                data.get("type") == "compaction"
                and isinstance(index, int | float)
                and not isinstance(index, bool)
            ):
                del data["firstKeptEntryIndex"]
                if index == int(index) and 1 <= index <= len(ids):
                    data["firstKeptEntryId"] = ids[int(index) - 1]
        for data in datas:
            _rename_hook_message(data)
        migrated = [
            Entry.from_data(data, line=entry.line)
            for data, entry in zip(datas, entries, strict=True)
        ]
        return new_header, migrated
    # v2 → v3 touches only hook messages; every other entry keeps its original bytes.
    out: list[Entry] = []
    for entry in entries:
        if entry.type == "message" and entry.role in (None, "hookMessage"):
            data = dict(entry.data)
            if _rename_hook_message(data):
                out.append(Entry.from_data(data, line=entry.line))
                continue
        out.append(entry)
    return new_header, out


def _rename_hook_message(data: dict[str, Any]) -> bool:
    message = data.get("message")
    if (
        data.get("type") == "message"
        and isinstance(message, dict)
        and message.get("role") == "hookMessage"
    ):
        data["message"] = {**message, "role": "custom"}
        return True
    return False
