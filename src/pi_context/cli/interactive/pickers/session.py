"""``/resume``: the session picker.

Lists the sessions of the current folder or of every project (Tab). The order cycles with
Ctrl+S: ``threaded`` (forks under the session they came from, most recent thread first),
``recent`` (newest first) and ``relevance`` (best fuzzy match of the search first). Ctrl+P shows
each file's path, Ctrl+N keeps only named sessions, Ctrl+R renames the selected session
(appends a ``session_info`` entry to its file; a blank name changes nothing), Ctrl+D deletes
it after a confirmation (never the session in use). Enter resumes it.

The rows are built from :class:`~pi_context.session_dirs.SessionInfo` values, so names
and previews are shown one-line and terminal-safe by the picker.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pi_context.cli.interactive.pickers.list import (
    AskText,
    Close,
    Confirm,
    Outcome,
    PickerKey,
    PickerRow,
    Stay,
    fuzzy_score,
)
from pi_context.errors import PiContextError
from pi_context.session_dirs import SessionInfo

__all__ = ["SORT_MODES", "SessionPicker", "format_age", "thread_order"]

SortMode = Literal["threaded", "recent", "relevance"]
SORT_MODES: tuple[SortMode, ...] = ("threaded", "recent", "relevance")


def format_age(seconds: float) -> str:
    """``now``, ``5m``, ``3h``, ``2d``, ``7w`` since the last change."""
    seconds = max(0.0, seconds)
    for size, unit in ((7 * 86400, "w"), (86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return "now"


def thread_order(sessions: Sequence[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """``(session, depth)``: each fork right under the session it was forked from, threads
    ordered by their most recent member, siblings newest first."""
    by_path = {str(s.path): s for s in sessions}
    children: dict[str, list[SessionInfo]] = {}
    roots = []
    for session in sessions:
        parent = session.parent_session
        if parent is not None and parent in by_path and parent != str(session.path):
            children.setdefault(parent, []).append(session)
        else:
            roots.append(session)
    latest: dict[str, float] = {}

    def newest(session: SessionInfo, seen: frozenset[str]) -> float:
        key = str(session.path)
        if key not in latest:
            below = [
                newest(child, seen | {key})
                for child in children.get(key, [])
                if str(child.path) not in seen
            ]
            latest[key] = max([session.modified, *below])
        return latest[key]

    ordered: list[tuple[SessionInfo, int]] = []
    placed: set[str] = set()

    def place(session: SessionInfo, depth: int) -> None:
        key = str(session.path)
        if key in placed:
            return
        placed.add(key)
        ordered.append((session, depth))
        kids = children.get(key, [])
        for child in sorted(kids, key=lambda c: newest(c, frozenset({key})), reverse=True):
            place(child, depth + 1)

    for root in sorted(roots, key=lambda r: newest(r, frozenset()), reverse=True):
        place(root, 0)
    for session in sessions:  # a cycle of parents: shown flat rather than lost
        place(session, 0)
    return ordered


class SessionPicker:
    """The rows and keys of the ``/resume`` picker."""

    def __init__(
        self,
        *,
        here: Callable[[], list[SessionInfo]],
        everywhere: Callable[[], list[SessionInfo]],
        current: Path | None,
        rename: Callable[[SessionInfo, str], None],
        delete: Callable[[SessionInfo], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._here = here
        self._everywhere = everywhere
        self._current = current
        self._rename = rename
        self._delete = delete
        self._clock = clock
        self.all = False
        self.sort: SortMode = "threaded"
        self.show_path = False
        self.named_only = False

    def title(self) -> str:
        scope = "All" if self.all else "Current Folder"
        extra = " · named only" if self.named_only else ""
        return f"Resume Session ({scope}) · sort: {self.sort}{extra}"

    def _listed(self) -> list[SessionInfo]:
        sessions = self._everywhere() if self.all else self._here()
        if self.named_only:
            sessions = [s for s in sessions if s.name]
        return sessions

    def _search_text(self, session: SessionInfo) -> str:
        return " ".join(
            [session.name or "", session.first_message, session.id, session.cwd if self.all else ""]
        )

    def rows(self, query: str) -> list[PickerRow[SessionInfo]]:
        sessions = self._listed()
        scores: dict[Path, float] = {}
        if query.strip():
            for session in sessions:
                score = fuzzy_score(query, self._search_text(session))
                if score is not None:
                    scores[session.path] = score
            sessions = [s for s in sessions if s.path in scores]
        if self.sort == "threaded":
            ordered = thread_order(sessions)
        elif self.sort == "relevance" and scores:
            ranked = sorted(enumerate(sessions), key=lambda item: (scores[item[1].path], item[0]))
            ordered = [(session, 0) for _, session in ranked]
        else:
            ordered = [(session, 0) for session in sessions]
        now = self._clock()
        return [self._row(session, depth, now) for session, depth in ordered]

    def _row(self, session: SessionInfo, depth: int, now: float) -> PickerRow[SessionInfo]:
        title = session.name or session.first_message or "(no messages)"
        indent = "  " * (depth - 1) + "└ " if depth else ""
        notes = [f"{session.message_count} msgs", format_age(now - session.modified)]
        if session.path == self._current:
            notes.append("current")
        if self.show_path:
            notes.append(str(session.path))
        elif self.all and session.cwd:
            notes.append(session.cwd)
        return PickerRow(session, indent + title, note=" · ".join(notes))

    def initial(self, rows: Sequence[PickerRow[SessionInfo]]) -> int:
        return 0

    def choose(self, value: SessionInfo, query: str) -> Outcome[SessionInfo]:
        return Close(value)

    # -- keys -----------------------------------------------------------------------------

    def _toggle_scope(self, _value: SessionInfo | None, _query: str) -> Outcome[SessionInfo]:
        self.all = not self.all
        return Stay()

    def _cycle_sort(self, _value: SessionInfo | None, _query: str) -> Outcome[SessionInfo]:
        self.sort = SORT_MODES[(SORT_MODES.index(self.sort) + 1) % len(SORT_MODES)]
        return Stay(f"Sort: {self.sort}")

    def _toggle_path(self, _value: SessionInfo | None, _query: str) -> Outcome[SessionInfo]:
        self.show_path = not self.show_path
        return Stay()

    def _toggle_named(self, _value: SessionInfo | None, _query: str) -> Outcome[SessionInfo]:
        self.named_only = not self.named_only
        return Stay()

    def _ask_rename(self, value: SessionInfo | None, _query: str) -> Outcome[SessionInfo]:
        if value is None:
            return Stay()

        def rename(name: str) -> Outcome[SessionInfo]:
            if not name.strip():
                return Stay("Name unchanged")
            try:
                self._rename(value, name.strip())
            except PiContextError as exc:
                return Stay(f"Error: {exc}")
            return Stay(f"Renamed to {name.strip()}")

        return AskText("New name:", rename, default=value.name or "")

    def _ask_delete(self, value: SessionInfo | None, _query: str) -> Outcome[SessionInfo]:
        if value is None:
            return Stay()
        if value.path == self._current:
            return Stay("The session in use cannot be deleted")

        def delete() -> Outcome[SessionInfo]:
            try:
                self._delete(value)
            except (PiContextError, OSError) as exc:
                return Stay(f"Error: {exc}")
            return Stay("Session deleted")

        title = value.name or value.first_message or value.path.name
        return Confirm(f"Delete session “{title[:60]}”?", delete)

    def bindings(self) -> list[PickerKey[SessionInfo]]:
        return [
            PickerKey(("tab",), "Tab", "folder/all", self._toggle_scope),
            PickerKey(("c-s",), "Ctrl+S", "sort", self._cycle_sort),
            PickerKey(("c-p",), "Ctrl+P", "path", self._toggle_path),
            PickerKey(("c-n",), "Ctrl+N", "named only", self._toggle_named),
            PickerKey(("c-r",), "Ctrl+R", "rename", self._ask_rename),
            PickerKey(("c-d",), "Ctrl+D", "delete", self._ask_delete),
        ]
