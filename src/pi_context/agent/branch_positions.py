"""Facts about the current branch that the compaction checks need, kept across checks.

The checks run up to three times per turn, and each used to scan the whole branch (where is the
latest compaction, where is this entry) and the whole context (is any ``context_edit`` in
it). :class:`BranchPositions` scans only what was appended since the previous call:

- a root→leaf path is fixed by its last entry (entries are append-only tree nodes with stable
  ids), so when a new branch holds the previously seen last entry id at the same position,
  everything before it is unchanged;
- a projection's context entries are a function of the path that starts with the latest
  compaction (or the root), so when the new context starts with the same entry and holds the
  previously seen last entry at the same position, its prefix is unchanged too. An edit that
  re-projects an earlier entry keeps that entry in place (and appends the ``context_edit``).

Anything else (a new compaction, navigation to another branch) is a full rescan, which is what
every check did before.
"""

from __future__ import annotations

from collections.abc import Sequence

from pi_context.session.entries import Entry
from pi_context.session.projection import ProjectedEntry

__all__ = ["BranchPositions"]


class BranchPositions:
    """Latest compaction and entry positions of a branch; ``context_edit`` presence in a
    context. Each query takes the current branch (or context) and catches up on it first."""

    __slots__ = (
        "_branch_last",
        "_branch_len",
        "_compaction",
        "_ctx_edit",
        "_ctx_first",
        "_ctx_last",
        "_ctx_len",
        "_positions",
    )

    def __init__(self) -> None:
        self._branch_len = 0
        self._branch_last: str | None = None
        self._compaction = -1
        self._positions: dict[str, int] = {}
        self._ctx_len = 0
        self._ctx_first: str | None = None
        self._ctx_last: str | None = None
        self._ctx_edit = False

    def _catch_up(self, branch: Sequence[Entry]) -> None:
        seen = self._branch_len
        if seen and not (len(branch) >= seen and branch[seen - 1].id == self._branch_last):
            seen = 0
            self._compaction = -1
            self._positions = {}
        positions = self._positions
        for index in range(seen, len(branch)):
            entry = branch[index]
            positions.setdefault(entry.id, index)
            if entry.type == "compaction":
                self._compaction = index
        self._branch_len = len(branch)
        self._branch_last = branch[-1].id if branch else None

    def last_compaction(self, branch: Sequence[Entry]) -> int:
        """Position of the latest compaction on ``branch`` (-1: none)."""
        self._catch_up(branch)
        return self._compaction

    def position(self, branch: Sequence[Entry], entry_id: str) -> int | None:
        """First position of ``entry_id`` on ``branch``, if it is there."""
        self._catch_up(branch)
        return self._positions.get(entry_id)

    def has_context_edit(self, entries: Sequence[ProjectedEntry]) -> bool:
        """Whether any of a projection's context entries is a ``context_edit``."""
        seen = self._ctx_len
        if seen and not (
            len(entries) >= seen
            and entries[0].entry.id == self._ctx_first
            and entries[seen - 1].entry.id == self._ctx_last
        ):
            seen = 0
            self._ctx_edit = False
        if not self._ctx_edit:
            self._ctx_edit = any(p.entry.type == "context_edit" for p in entries[seen:])
        self._ctx_len = len(entries)
        self._ctx_first = entries[0].entry.id if entries else None
        self._ctx_last = entries[-1].entry.id if entries else None
        return self._ctx_edit
