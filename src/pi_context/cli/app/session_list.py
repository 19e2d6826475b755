"""The ``/resume`` picker's session lists, cached, and the numbered list that stands in for it.

Each file is summarized by :func:`pi_context.session_dirs.read_session_info` (fast for pi's
files). :class:`SessionLister` keeps the summaries keyed by path, size and modification time,
so reopening the picker, toggling its scope or renaming a session rereads only what changed.

:func:`session_rows` and :func:`pick_session` are the numbered list that stands in for the
picker where there is no terminal to show one (``/resume`` through a pipe, ``pictx -r``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pi_context import session_dirs
from pi_context.session_dirs import SessionInfo

__all__ = [
    "PICKER_SIZE",
    "SessionLister",
    "pick_session",
    "session_rows",
]

PICKER_SIZE = 30
"""How many of the newest sessions a numbered list shows."""


class SessionLister:
    """Session summaries of whole directories, reread only for files that changed."""

    def __init__(self) -> None:
        self._cache: dict[Path, tuple[int, int, SessionInfo | None]] = {}

    def summary(self, path: Path) -> SessionInfo | None:
        try:
            stat = path.stat()
        except OSError:
            self._cache.pop(path, None)
            return None
        known = self._cache.get(path)
        if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
            return known[2]
        found = session_dirs.read_session_info(path)
        self._cache[path] = (stat.st_mtime_ns, stat.st_size, found)
        return found

    def forget(self, path: Path) -> None:
        self._cache.pop(path, None)

    def directory(self, directory: Path) -> list[SessionInfo]:
        """Every session in ``directory``, newest modification first."""
        if not directory.is_dir():
            return []
        return self._sorted(self.summary(path) for path in directory.glob("*.jsonl"))

    def everywhere(self, roots: Iterable[Path]) -> list[SessionInfo]:
        """Every session in the project directories under each root (and the roots
        themselves), newest first, each file once."""
        seen: set[Path] = set()
        found: list[SessionInfo | None] = []
        for root in roots:
            if not root.is_dir():
                continue
            for directory in [root, *sorted(p for p in root.iterdir() if p.is_dir())]:
                for path in directory.glob("*.jsonl"):
                    if path not in seen:
                        seen.add(path)
                        found.append(self.summary(path))
        return self._sorted(found)

    @staticmethod
    def _sorted(found: Iterable[SessionInfo | None]) -> list[SessionInfo]:
        kept = [s for s in found if s is not None]
        kept.sort(key=lambda s: (s.modified, s.path.name), reverse=True)
        return kept


def session_rows(sessions: Sequence[SessionInfo]) -> list[str]:
    """The numbered lines of the list (the newest :data:`PICKER_SIZE` sessions)."""
    rows = []
    for number, info in enumerate(sessions[:PICKER_SIZE], start=1):
        title = info.name or info.first_message or "(empty)"
        rows.append(f"{number:>3} {info.created[:19]} {info.message_count:>4} msgs  {title[:70]}")
    return rows


def pick_session(sessions: Sequence[SessionInfo], choice: str) -> SessionInfo | None:
    """The session numbered ``choice`` in :func:`session_rows`; ``None`` for anything else."""
    if not choice.isdigit() or not 1 <= int(choice) <= min(PICKER_SIZE, len(sessions)):
        return None
    return sessions[int(choice) - 1]
