"""Output truncation shared by the tools: keep the head (``read``) or the tail (``bash``).

Both limits apply, whichever is hit first: :data:`DEFAULT_MAX_LINES` lines and
:data:`DEFAULT_MAX_BYTES` UTF-8 bytes. The result records what was kept and why, under the
same key names pi stores in a tool result's ``details.truncation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

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


@dataclass(frozen=True, slots=True)
class TruncationResult:
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


def truncate_head(
    text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the start while both limits hold."""
    lines = split_lines(text)
    total_bytes = _nbytes(text)
    total_lines = len(lines)

    def result(
        kept: list[str], by: TruncatedBy | None, *, first_too_big: bool = False
    ) -> TruncationResult:
        content = "\n".join(kept) if by is not None else text
        return TruncationResult(
            content=content,
            truncated=by is not None,
            truncated_by=by,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=len(kept) if by is not None else total_lines,
            output_bytes=_nbytes(content),
            last_line_partial=False,
            first_line_exceeds_limit=first_too_big,
            max_lines=max_lines,
            max_bytes=max_bytes,
        )

    if total_lines <= max_lines and total_bytes <= max_bytes:
        return result(lines, None)
    if _nbytes(lines[0]) > max_bytes:
        return result([], "bytes", first_too_big=True)
    kept: list[str] = []
    used = 0
    by: TruncatedBy = "lines"
    for i, line in enumerate(lines):
        if i >= max_lines:
            by = "lines"
            break
        size = _nbytes(line) + (1 if i > 0 else 0)
        if used + size > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += size
    return result(kept, by)


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
    total_bytes = _nbytes(text)
    total_lines = len(lines)

    def result(
        kept: list[str], by: TruncatedBy | None, *, partial: bool = False
    ) -> TruncationResult:
        content = "\n".join(kept) if by is not None else text
        return TruncationResult(
            content=content,
            truncated=by is not None,
            truncated_by=by,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=len(kept) if by is not None else total_lines,
            output_bytes=_nbytes(content),
            last_line_partial=partial,
            first_line_exceeds_limit=False,
            max_lines=max_lines,
            max_bytes=max_bytes,
        )

    if total_lines <= max_lines and total_bytes <= max_bytes:
        return result(lines, None)
    kept: list[str] = []
    used = 0
    by: TruncatedBy = "lines"
    for count, line in enumerate(reversed(lines)):
        if count >= max_lines:
            by = "lines"
            break
        size = _nbytes(line) + (1 if count > 0 else 0)
        if used + size > max_bytes:
            by = "bytes"
            if count == 0:
                return result([_tail_bytes(line, max_bytes)], "bytes", partial=True)
            break
        kept.append(line)
        used += size
    kept.reverse()
    return result(kept, by)
