"""A window of a file's lines, read as a stream with bounded memory.

``read`` shows lines ``offset .. offset+limit`` of a file, cut to 2000 lines / 50 KB, and its
notes name the file's total line count and the selection's size. pi gets these by decoding
the whole file and splitting it; a 2 GB file then costs gigabytes of memory. Here the file
arrives as chunks and only counts and a bounded prefix of the selection are kept:

- every ``\\n`` of the file is counted (the total line count is ``newlines + 1``, a trailing
  newline making one more, empty, line as in pi);
- the selection is one contiguous byte range, from the start of its first line to the end of
  its last; of it the first ``max_bytes + 1`` bytes are kept, plus its decoded UTF-8 size, its
  line count and the size of its first line.

That is enough to give exactly what :func:`~pi_context.tools.truncate.truncate_head` gives on
the decoded selection: whole lines kept within the limits never reach past ``max_bytes`` raw
bytes (decoding only grows a byte sequence: an invalid byte becomes the 3-byte U+FFFD), and a
line still open at the end of the kept prefix is too large to keep.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import Final

from msgspec import Struct

from pi_context.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncatedBy,
    TruncationResult,
)

__all__ = ["LineWindow", "read_line_window"]

_NL: Final = b"\n"


class LineWindow(Struct, frozen=True):
    """What :func:`read_line_window` found.

    ``selection`` is ``None`` when the window starts at or past the end of the file.
    ``end`` is the index after the last selected line; ``first_line_bytes`` the decoded size
    of the first selected line.
    """

    total_lines: int
    end: int
    selection: TruncationResult | None
    first_line_bytes: int


class _Utf8Size:
    """The UTF-8 size of a byte stream once decoded with U+FFFD for invalid sequences."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = False
        self.total = 0

    def feed(self, data: bytes, *, final: bool = False) -> None:
        if not self._pending and data.isascii():
            self.total += len(data)
            return
        text = self._decoder.decode(data, final)
        self.total += len(text.encode("utf-8"))
        self._pending = bool(self._decoder.getstate()[0])


def _count(data: bytes) -> int:
    # ``find`` is memchr-fast; ``count`` is slower on newline-free data (benchmarks/README.md,
    # "Figures the code points to").
    return data.count(_NL) if data.find(_NL) >= 0 else 0


def _nth_newline(data: bytes, pos: int, n: int) -> int:
    """Index of the ``n``-th (1-based) newline at or after ``pos``; ``-1`` if fewer."""
    if data.find(_NL, pos) < 0 or data.count(_NL, pos) < n:
        return -1
    i = pos - 1
    for _ in range(n):
        i = data.find(_NL, i + 1)
    return i


class _Selection:
    """Collects the selected byte range: a bounded prefix, counts and sizes."""

    def __init__(self, max_lines: int, max_bytes: int) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._cap = max_bytes + 1
        self._prefix = bytearray()
        self._raw = 0
        self._newlines = 0
        self._ends_with_newline = False
        self._size = _Utf8Size()
        self._first_line: int | None = None

    def feed(self, data: bytes) -> None:
        if not data:
            return
        if len(self._prefix) < self._cap:
            self._prefix += data[: self._cap - len(self._prefix)]
        self._raw += len(data)
        if self._first_line is None and (cut := data.find(_NL)) >= 0:
            self._size.feed(data[:cut], final=True)  # a newline always ends a sequence
            self._first_line = self._size.total
            self._size.feed(data[cut:])
        else:
            self._size.feed(data)
        self._newlines += _count(data)
        self._ends_with_newline = data.endswith(_NL)

    def finish(self) -> tuple[TruncationResult, int]:
        """The truncation record of the decoded selection, and its first line's size."""
        self._size.feed(b"", final=True)
        total_bytes = self._size.total
        first_line = self._first_line if self._first_line is not None else total_bytes
        lines = self._newlines + (0 if self._ends_with_newline else 1)
        complete = self._raw == len(self._prefix)
        if lines <= self.max_lines and total_bytes <= self.max_bytes:
            text = self._prefix.decode("utf-8", "replace")
            return self._record(text, None, lines, total_bytes, lines), first_line
        if first_line > self.max_bytes:
            return self._record("", "bytes", lines, total_bytes, 0, first_exceeds=True), first_line
        kept, by = self._take(complete)
        content = "\n".join(kept)
        return self._record(content, by, lines, total_bytes, len(kept)), first_line

    def _take(self, complete: bool) -> tuple[list[str], TruncatedBy]:
        """Whole lines from the start while both limits hold (as ``truncate_head`` takes them)."""
        pieces = bytes(self._prefix).split(_NL)
        if complete and len(pieces) > 1 and pieces[-1] == b"":
            pieces.pop()
        kept: list[str] = []
        used = 0
        for count, piece in enumerate(pieces):
            if count >= self.max_lines:
                return kept, "lines"
            open_end = not complete and count == len(pieces) - 1
            text = piece.decode("utf-8", "replace")
            size = self._cap if open_end else len(text.encode("utf-8"))
            used += size + (1 if count > 0 else 0)
            if used > self.max_bytes:
                return kept, "bytes"
            kept.append(text)
        return kept, "lines"

    def _record(
        self,
        content: str,
        by: TruncatedBy | None,
        lines: int,
        total_bytes: int,
        output_lines: int,
        *,
        first_exceeds: bool = False,
    ) -> TruncationResult:
        return TruncationResult(
            content=content,
            truncated=by is not None,
            truncated_by=by,
            total_lines=lines,
            total_bytes=total_bytes,
            output_lines=output_lines,
            output_bytes=len(content.encode("utf-8")),
            last_line_partial=False,
            first_line_exceeds_limit=first_exceeds,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )


def read_line_window(
    chunks: Iterable[bytes],
    start: int,
    limit: int | None,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LineWindow:
    """Select lines ``start .. start+limit`` (0-based, ``limit`` ``None``: to the end) of the
    byte stream ``chunks`` and head-truncate them; memory stays within a few chunks plus
    ``max_bytes``, whatever the stream's size or line lengths.
    """
    stop = None if limit is None else start + max(0, limit)
    selection = _Selection(max_lines, max_bytes)
    newlines = 0
    line = 0  # the line the next byte belongs to, while before or inside the window
    state = "before" if start > 0 else "inside"
    for chunk in chunks:
        pos = 0
        if state == "before":
            cut = _nth_newline(chunk, 0, start - line)
            if cut < 0:
                line += _count(chunk)
            else:
                line, pos, state = start, cut + 1, "inside"
        if state == "inside":
            if stop is None:
                selection.feed(chunk[pos:] if pos else chunk)
            else:
                cut = _nth_newline(chunk, pos, stop - line) if stop > line else pos
                if cut < 0:
                    selection.feed(chunk[pos:] if pos else chunk)
                    line += _count(chunk[pos:] if pos else chunk)
                else:
                    selection.feed(chunk[pos:cut])
                    state = "after"
        newlines += _count(chunk)
    total = newlines + 1
    if start >= total:
        return LineWindow(total, total, None, 0)
    end = total if stop is None else min(total, stop)
    record, first_line = selection.finish()
    return LineWindow(total, end, record, first_line)
