"""What the ``grep``, ``find`` and ``ls`` tools share: the ``limit`` argument, the 50 KB cap on
the listing, the bracketed notes that end a cut listing, and running a walk off the event loop.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

from msgspec.structs import replace

from pi_context.tools.base import ToolContext, ToolOutcome, text_outcome
from pi_context.tools.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

__all__ = [
    "MAX_SAFE_INTEGER",
    "Listing",
    "effective_limit",
    "in_thread",
    "path_argument",
    "was_aborted",
]

MAX_SAFE_INTEGER: Final = 9007199254740991
"""The line limit of these listings (none: only bytes and the tool's own count cut them)."""

T = TypeVar("T")


def effective_limit(value: Any, default: int) -> int:
    """``limit`` as given (whole part), ``default`` without it; below 1 it means 1."""
    if value is None:
        return default
    number = float(value)
    if math.isnan(number):
        return 1
    if math.isinf(number):
        return MAX_SAFE_INTEGER if number > 0 else 1
    return max(1, math.floor(number))


def path_argument(arguments: dict[str, Any]) -> str:
    """The ``path`` argument; missing or empty means the working directory."""
    value = arguments.get("path")
    return value if isinstance(value, str) and value else "."


def was_aborted(ctx: ToolContext) -> bool:
    """Whether the call was aborted while it ran (read afresh after the work)."""
    return ctx.aborted


async def in_thread(work: Callable[[Callable[[], bool]], T], ctx: ToolContext) -> T:
    """``work(stop)`` in a worker thread; ``stop()`` turns true once the call is aborted or
    its task cancelled, so a long walk ends at its next step."""
    cancelled = threading.Event()

    def stop() -> bool:
        return cancelled.is_set() or ctx.aborted

    try:
        return await asyncio.to_thread(work, stop)
    finally:
        cancelled.set()


class Listing:
    """The lines of a result, counted in full but stored only up to the byte cap."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.bytes = 0  # every line counted with a newline after it

    def add(self, line: str) -> None:
        if self.bytes - 1 <= DEFAULT_MAX_BYTES:
            self.lines.append(line)
        self.bytes += len(line.encode("utf-8", "surrogatepass")) + 1
        self.count += 1

    def outcome(
        self,
        limit: tuple[str, str, int] | None = None,
        extra: tuple[str, str, Any] | None = None,
    ) -> ToolOutcome:
        """The text cut at 50 KB (whole lines), then the notes in brackets: ``limit`` (note,
        details key, value) when the tool's count cut the listing, the cap's note when the
        cap did, then ``extra``; ``details`` holds the same in that order (``None``: none)."""
        cut = truncate_head("\n".join(self.lines), max_lines=MAX_SAFE_INTEGER)
        cut = replace(cut, total_lines=self.count, total_bytes=max(0, self.bytes - 1))
        notes: list[str] = []
        details: dict[str, Any] = {}
        if limit is not None:
            notes.append(limit[0])
            details[limit[1]] = limit[2]
        if cut.truncated:
            notes.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = cut.to_json()
        if extra is not None:
            notes.append(extra[0])
            details[extra[1]] = extra[2]
        text = cut.content
        if notes:
            text += f"\n\n[{'. '.join(notes)}]"
        return text_outcome(text, details=details or None)
