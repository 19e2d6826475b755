"""What is wrong with a session file, line by line, in messages of bounded length.

A :class:`LoadProblem` names the file, the line and what the reader did about it. Problems
are found when a file is scanned (lines that are not JSON objects, a torn last line), when the
tree is built (cycles, duplicate ids, missing parents) and when an entry is first decoded
(a torn line the fast scan let through, a line nested too deep, fields of the wrong type):
those last ones go to the :class:`ProblemLog` the file's entries share, so they are reported
once, whenever they are found.

Every message is one line, its control characters escaped, cut to :data:`MAX_PROBLEM_CHARS`
characters: a problem quoting a 100,000-entry parent cycle or a key full of escape sequences
stays one short, inert line.
"""

from __future__ import annotations

import re
from typing import Final

from msgspec import Struct
from msgspec.structs import force_setattr

__all__ = ["MAX_PROBLEM_CHARS", "LoadProblem", "ProblemLog", "bounded"]

MAX_PROBLEM_CHARS: Final = 300
"""The longest ``reason`` or ``fault`` text a problem carries."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def bounded(text: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    """``text`` on one line, control characters escaped (``\\x1b``: ids and keys come from
    the file), cut to ``limit`` characters (an ellipsis and the full length mark the cut)."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if len(text) <= limit:
        return text
    tail = f"… ({len(text)} characters)"
    return text[: max(0, limit - len(tail))] + tail


class LoadProblem(Struct, frozen=True):
    """A line the loader skipped or repaired: which file, which line (1-based), and why.

    ``reason`` says what is wrong and what the loader did about it (``not a JSON object:
    skipped``); ``fault``, when set, says what is wrong alone, as an error (``line 5 is not a
    JSON object``), for a caller that refuses the file instead (``pictx session --strict``).
    Both are cut to :data:`MAX_PROBLEM_CHARS` characters.
    """

    path: str | None
    line: int
    reason: str
    fault: str | None = None

    def __post_init__(self) -> None:
        force_setattr(self, "reason", bounded(self.reason))
        if self.fault is not None:
            force_setattr(self, "fault", bounded(self.fault))

    @property
    def error(self) -> str:
        """The problem worded as an error (nothing was skipped or repaired)."""
        return self.fault if self.fault is not None else self.reason

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path else f"line {self.line}"
        return f"{where}: {self.reason}"


class ProblemLog:
    """The problems found in one file's entries after loading, at most one per line."""

    __slots__ = ("_lines", "path", "problems")

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.problems: list[LoadProblem] = []
        self._lines: set[int] = set()

    def add(self, line: int | None, reason: str, fault: str | None = None) -> None:
        """Record a problem of ``line`` unless that line already has one."""
        number = line or 0
        if number in self._lines:
            return
        self._lines.add(number)
        self.problems.append(LoadProblem(self.path, number, reason, fault))

    def __len__(self) -> int:
        return len(self.problems)
