"""What a shell command printed: a bounded tail in memory, totals, and a capped spill file.

``bash`` shows the model the last 2000 lines / 50 KB. Once the output outgrows that, all of it
is also written to ``<tmpdir>/pi-bash-<16 hex>.log`` (mode 0600, created exclusively) whose
path the note names. pi writes that file without limit (``cat /dev/zero`` for three seconds
leaves 1.2 GB); here it stops at ``max_spill_bytes`` and the note says the file holds only the
first part.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import IO, Final

from msgspec import Struct, field
from msgspec.structs import replace

from pi_context.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_tail,
)

__all__ = ["MAX_SPILL_BYTES", "CommandOutput"]

MAX_SPILL_BYTES: Final = 64 * 1024 * 1024
"""The most a command's output file keeps (64 MiB); later output is counted, not saved."""


class CommandOutput(Struct):
    """Collects merged output: a bounded in-memory tail, line/byte counts, and a spill file."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_lines: int = DEFAULT_MAX_LINES
    max_spill_bytes: int = MAX_SPILL_BYTES
    tail: bytearray = field(default_factory=bytearray)
    trimmed: bool = False
    total_bytes: int = 0
    newlines: int = 0
    last_line_bytes: int = 0
    spill_path: str | None = None
    spill_capped: bool = False
    _spill: IO[bytes] | None = None
    _spilled: int = 0

    def add(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self.newlines += chunk.count(b"\n")
        cut = chunk.rfind(b"\n")
        self.last_line_bytes = (
            len(chunk) - cut - 1 if cut >= 0 else self.last_line_bytes + len(chunk)
        )
        if self._spill is None and (
            self.total_bytes > self.max_bytes or self.newlines > self.max_lines
        ):
            self._open_spill()
        self._save(chunk)
        self.tail += chunk
        keep = 4 * self.max_bytes
        if len(self.tail) > 2 * keep:
            del self.tail[: len(self.tail) - keep]
            self.trimmed = True

    def _save(self, data: bytes) -> None:
        if self._spill is None or self.spill_capped:
            return
        room = self.max_spill_bytes - self._spilled
        if len(data) > room:
            data = data[:room]
            self.spill_capped = True
        self._spill.write(data)
        self._spilled += len(data)

    def _open_spill(self) -> None:
        import tempfile  # with the first command whose output outgrows the tail

        path = Path(tempfile.gettempdir()) / f"pi-bash-{os.urandom(8).hex()}.log"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        self._spill = os.fdopen(fd, "wb")
        self.spill_path = str(path)
        self._save(bytes(self.tail))  # everything so far: the tail is only trimmed later

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()

    @property
    def total_lines(self) -> int:
        ends_with_newline = self.total_bytes > 0 and self.tail.endswith(b"\n")
        return self.newlines + (0 if ends_with_newline else 1)

    def text(self) -> str:
        data = bytes(self.tail)
        if self.trimmed:
            cut = data.find(b"\n")
            if 0 <= cut < len(data) - 1:
                data = data[cut + 1 :]
        return data.decode("utf-8", "replace")

    def full_text(self, limit: int) -> tuple[str, bool]:
        """The whole output while it is at most ``limit`` bytes, else its first and last
        ``limit / 2`` bytes around a note of how many were left out; and whether it was cut.
        Beyond the saved file's cap only the saved part counts."""
        if self._spill is None:
            return bytes(self.tail).decode("utf-8", "replace"), False
        self._spill.flush()
        with open(str(self.spill_path), "rb") as saved:
            size = os.fstat(saved.fileno()).st_size
            if size <= limit:
                return saved.read().decode("utf-8", "replace"), False
            head_bytes = limit // 2
            tail_bytes = limit - head_bytes
            head = saved.read(head_bytes)
            saved.seek(size - tail_bytes)
            tail = saved.read(tail_bytes)
        # a character cut at either end is left out, not shown as U+FFFD
        head_text = codecs.getincrementaldecoder("utf-8")("replace").decode(head, final=False)
        start = 0
        while start < len(tail) and (tail[start] & 0xC0) == 0x80:
            start += 1
        omitted = size - head_bytes - tail_bytes
        return (
            f"{head_text}\n\n[... {omitted} bytes omitted ...]\n\n"
            f"{tail[start:].decode('utf-8', 'replace')}",
            True,
        )

    def saved_note(self) -> str:
        """``Full output: <file>``, or which part of it the capped file holds."""
        if self.spill_capped:
            return (
                f"First {format_size(self.max_spill_bytes)} of output saved to: {self.spill_path}"
            )
        return f"Full output: {self.spill_path}"

    def preview(self) -> tuple[str, TruncationResult]:
        """What the model would be shown so far, without the note: a running command's live
        update (as pi sends it) and the base of :meth:`truncated`."""
        text = self.text()
        result = truncate_tail(text, max_lines=self.max_lines, max_bytes=self.max_bytes)
        if self.trimmed:  # the in-memory tail is partial: report the whole output's totals
            result = _with_totals(result, self.total_lines, self.total_bytes)
        if result.truncated and self._spill is None:
            self._open_spill()  # cut by the line count of a final unterminated line
        return (result.content if result.truncated else text), result

    def truncated(self) -> tuple[str, TruncationResult]:
        """The text to show (with its note) and the truncation record."""
        text, result = self.preview()
        if not result.truncated:
            return (text or "(no output)"), result
        last = result.total_lines
        first = last - result.output_lines + 1
        if result.last_line_partial:
            note = (
                f"[Showing last {format_size(result.output_bytes)} of line {last} "
                f"(line is {format_size(self.last_line_bytes)}). {self.saved_note()}]"
            )
        elif result.truncated_by == "lines":
            note = f"[Showing lines {first}-{last} of {last}. {self.saved_note()}]"
        else:
            note = (
                f"[Showing lines {first}-{last} of {last} ({format_size(self.max_bytes)} limit). "
                f"{self.saved_note()}]"
            )
        return f"{result.content or '(no output)'}\n\n{note}", result


def _with_totals(result: TruncationResult, lines: int, size: int) -> TruncationResult:
    return replace(
        result,
        total_lines=lines,
        total_bytes=size,
        truncated=True,
        truncated_by=result.truncated_by or "bytes",
    )
