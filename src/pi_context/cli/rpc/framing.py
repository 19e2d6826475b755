"""RPC framing: one JSON object per line, LF-terminated, in both directions.

:class:`LineReader` decodes the input incrementally as UTF-8 (a multi-byte character may be
split across reads), splits on ``\\n`` only, strips one trailing ``\\r`` per line and yields a
final unterminated line at end of input. Empty lines are yielded too (they become parse-error
records, as in pi). The blocking reads happen on a daemon thread, so any stdin works: a pipe, a
file or a terminal.

:class:`RecordWriter` writes ``JSON.stringify``-style compact records to a binary stream; the
RPC mode gives it the real stdout after pointing ``sys.stdout`` (and file descriptor 1) at
stderr, so nothing but protocol records reaches the client.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, BinaryIO, Final

from pi_context import _json

__all__ = [
    "MAX_LINE_CHARS",
    "OVERLONG",
    "LineReader",
    "RecordWriter",
    "WriteFailedError",
    "encode_record",
    "split_lines",
]

_CHUNK = 65536
MAX_LINE_CHARS = 64 * 1024 * 1024
"""A longer input line is dropped (reported as :data:`OVERLONG`) instead of held in memory."""


class _Overlong:
    __slots__ = ()

    def __repr__(self) -> str:
        return "OVERLONG"


OVERLONG: Final = _Overlong()
"""Yielded in place of a line longer than the reader's limit (the line itself is skipped)."""


def encode_record(record: Mapping[str, Any]) -> bytes:
    """``JSON.stringify(record) + "\\n"``: compact, non-ASCII (and U+2028/U+2029) left raw,
    numbers spelled as JavaScript spells them (``0``, not ``0.0``)."""
    return (_json.js_stringify(dict(record)) + "\n").encode("utf-8", "surrogatepass")


def split_lines(buffer: str) -> tuple[list[str], str]:
    """Complete lines of ``buffer`` (one trailing ``\\r`` stripped each) and the unterminated rest."""
    *lines, rest = buffer.split("\n")
    return [line.removesuffix("\r") for line in lines], rest


class LineReader:
    """Lines of a binary input stream, read on a background thread. A line longer than
    ``max_line`` characters is skipped up to its newline and reported as :data:`OVERLONG`."""

    def __init__(self, fd: int, *, max_line: int = MAX_LINE_CHARS) -> None:
        self._fd = fd
        self._max_line = max_line

    async def lines(self) -> AsyncIterator[str | _Overlong]:
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes | None] = asyncio.Queue()

        def pump() -> None:
            while True:
                try:
                    data = os.read(self._fd, _CHUNK)
                except OSError:
                    data = b""
                loop.call_soon_threadsafe(chunks.put_nowait, data or None)
                if not data:
                    return

        threading.Thread(target=pump, name="pictx-rpc-stdin", daemon=True).start()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        skipping = False  # inside an overlong line: drop text up to its newline
        while (chunk := await chunks.get()) is not None:
            text = decoder.decode(chunk)
            if skipping:
                cut = text.find("\n")
                if cut < 0:
                    continue
                text, skipping = text[cut + 1 :], False
            lines, pending = split_lines(pending + text)
            for line in lines:
                yield OVERLONG if len(line) > self._max_line else line
            if len(pending) > self._max_line:
                pending, skipping = "", True
                yield OVERLONG
        pending += decoder.decode(b"", final=True)
        if pending and not skipping:
            last = pending.removesuffix("\r")
            yield OVERLONG if len(last) > self._max_line else last


class WriteFailedError(OSError):
    """The client's end of stdout is gone (pi exits with code 1)."""


class RecordWriter:
    """Writes records in order; after a failed write every later write is dropped."""

    def __init__(
        self, out: BinaryIO, *, on_failure: Callable[[OSError], None] | None = None
    ) -> None:
        self._out = out
        self._on_failure = on_failure
        self.failed: OSError | None = None
        self.closed = False

    def write(self, record: Mapping[str, Any]) -> None:
        if self.failed is not None or self.closed:
            return
        data = encode_record(record)
        try:
            self._out.write(data)
            self._out.flush()
        except OSError as exc:  # EPIPE and friends: the client is gone
            self.failed = exc
            if self._on_failure is not None:
                self._on_failure(exc)
