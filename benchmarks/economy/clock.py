"""The user's pauses, as the agent under test lives them.

The simulator bills on its own clock, to which each prompt adds the user's pause before it
(20 s to 15 min); the agent runs in real time, seconds per prompt. An agent that acts on
time (``compaction.idleCompactPercent``: compact after a pause that let the prompt cache
expire) must see those pauses. The driver writes the sum of the pauses so far, in
nanoseconds, to the file named by ``SIM_CLOCK_FILE`` before each prompt; in the agent's
process :func:`install_clock` moves ``time.time`` and ``time.time_ns`` forward by that sum, so
its message timestamps are spaced as the user's prompts were. pi 1.6.0 reads no clock for its
decisions and ignores the file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["CLOCK_ENV", "install_clock", "write_offset"]

CLOCK_ENV = "SIM_CLOCK_FILE"


def write_offset(path: Path, seconds: float) -> None:
    """Record that the user has paused ``seconds`` in total so far (atomically)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(str(int(seconds * 1e9)))
    os.replace(tmp, path)


class _Offset:
    """The offset in the clock file, re-read when the file is replaced."""

    __slots__ = ("path", "stamp", "value")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stamp: tuple[int, int, int] | None = None
        self.value = 0

    def read(self) -> int:
        try:
            st = os.stat(self.path)
        except OSError:
            return self.value
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self.stamp:
            try:
                self.value = int(self.path.read_text() or 0)
            except (OSError, ValueError):
                return self.value
            self.stamp = stamp
        return self.value


def install_clock(path: str | None = None) -> Callable[[], None]:
    """Shift this process's wall clock by the offset in ``path`` (default: ``$SIM_CLOCK_FILE``;
    no file named: nothing changes); returns the undo. The file is re-read when it changes."""
    name = path or os.environ.get(CLOCK_ENV)
    real_ns, real = time.time_ns, time.time
    if not name:
        return lambda: None
    seen = _Offset(Path(name))

    def shifted_ns() -> int:
        return real_ns() + seen.read()

    def shifted() -> float:
        return real() + seen.read() / 1e9

    time.time_ns, time.time = shifted_ns, shifted

    def undo() -> None:
        time.time_ns, time.time = real_ns, real

    return undo
