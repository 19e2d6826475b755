"""Output truncation shared by the tools: keep the head (``read``) or the tail (``bash``).

Both limits apply, whichever is hit first: :data:`DEFAULT_MAX_LINES` lines and
:data:`DEFAULT_MAX_BYTES` UTF-8 bytes. The result records what was kept and why, under the
same key names pi stores in a tool result's ``details.truncation``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal

from msgspec import Struct

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "TruncatedBy",
    "TruncationResult",
    "format_size",
    "split_lines",
    "truncate_head",
    "truncate_tail",
]

DEFAULT_MAX_LINES: Final = 2000
DEFAULT_MAX_BYTES: Final = 51200

TruncatedBy = Literal["lines", "bytes"]


def format_size(n: int) -> str:
    """A byte count the way the notes print it: ``512B``, ``50.0KB``, ``1.5MB``."""
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / (1024 * 1024):.1f}MB"


def split_lines(text: str) -> list[str]:
    """Lines for counting: split on ``\\n``; a single trailing empty piece is dropped."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class TruncationResult(Struct, frozen=True):
    """What a truncation kept. ``to_json`` gives pi's ``details.truncation`` mapping."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def _result(
    text: str,
    lines: list[str],
    kept: list[str],
    by: TruncatedBy | None,
    max_lines: int,
    max_bytes: int,
    *,
    last_line_partial: bool = False,
    first_line_exceeds_limit: bool = False,
) -> TruncationResult:
    """The record for ``text`` cut to ``kept`` (``by`` ``None``: not cut, ``kept`` is all lines)."""
    content = text if by is None else "\n".join(kept)
    return TruncationResult(
        content=content,
        truncated=by is not None,
        truncated_by=by,
        total_lines=len(lines),
        total_bytes=_nbytes(text),
        output_lines=len(kept),
        output_bytes=_nbytes(content),
        last_line_partial=last_line_partial,
        first_line_exceeds_limit=first_line_exceeds_limit,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def _take(lines: Iterable[str], max_lines: int, max_bytes: int) -> tuple[list[str], TruncatedBy]:
    """Whole lines in the given order while both limits hold, and which limit stopped it."""
    kept: list[str] = []
    used = 0
    for count, line in enumerate(lines):
        if count >= max_lines:
            return kept, "lines"
        used += _nbytes(line) + (1 if count > 0 else 0)
        if used > max_bytes:
            return kept, "bytes"
        kept.append(line)
    return kept, "lines"


def truncate_head(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the start while both limits hold."""
    lines = split_lines(text)
    if len(lines) <= max_lines and _nbytes(text) <= max_bytes:
        return _result(text, lines, lines, None, max_lines, max_bytes)
    if _nbytes(lines[0]) > max_bytes:
        return _result(
            text, lines, [], "bytes", max_lines, max_bytes, first_line_exceeds_limit=True
        )
    kept, by = _take(lines, max_lines, max_bytes)
    return _result(text, lines, kept, by, max_lines, max_bytes)


def _tail_bytes(line: str, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``line``, cut forward to a UTF-8 character boundary."""
    data = line.encode("utf-8", "surrogatepass")
    start = max(0, len(data) - max_bytes)
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_tail(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the end while both limits hold; a huge last line is cut by bytes."""
    lines = split_lines(text)
    if len(lines) <= max_lines and _nbytes(text) <= max_bytes:
        return _result(text, lines, lines, None, max_lines, max_bytes)
    kept, by = _take(reversed(lines), max_lines, max_bytes)
    if by == "bytes" and not kept:
        partial = [_tail_bytes(lines[-1], max_bytes)]
        return _result(text, lines, partial, "bytes", max_lines, max_bytes, last_line_partial=True)
    kept.reverse()
    return _result(text, lines, kept, by, max_lines, max_bytes)
