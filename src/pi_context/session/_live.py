"""The current leaf's path and projection, kept up to date as entries are appended.

pi 1.6.0 re-walks the whole path after every append. Here an append under the current leaf
extends the path and the projection in place: a plain entry adds its messages, a
``context_edit`` re-projects only its target, and only a compaction rebuilds the (already
compacted, hence short) context from the path. The result equals
:func:`~pi_context.session.projection.projection_of_path` of the same path, which the tests
check.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import overload

from pi_context.messages import AgentMessage
from pi_context.session.entries import Entry
from pi_context.session.projection import (
    ModelRef,
    ProjectedEntry,
    Projection,
    apply_settings,
    build_context_entries,
    context_edits_by_target,
    context_item,
    path_settings,
)
from pi_context.session.tree import TreeIndex

__all__ = ["LiveProjection", "PathView"]


class PathView(Sequence[Entry]):
    """A read-only root→leaf path that shares the live path's list instead of copying it.

    The live path list is only ever extended at its end (an append under the leaf) or
    replaced (a leaf move), so the first ``len(view)`` items never change: the view stays
    exactly the path it was taken from, whatever happens to the session afterwards.
    """

    __slots__ = ("_items", "_len")

    def __init__(self, items: list[Entry]) -> None:
        self._items = items
        self._len = len(items)

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._len)
            if step > 0:
                return self._items[start:stop:step]
            items = self._items  # a negative step may stop at -1, which a list reads as "last"
            return [items[i] for i in range(start, stop, step)]
        position = index + self._len if index < 0 else index
        if not 0 <= position < self._len:
            raise IndexError("path index out of range")
        return self._items[position]

    def __iter__(self) -> Iterator[Entry]:
        return itertools.islice(self._items, self._len)

    def __reversed__(self) -> Iterator[Entry]:
        items = self._items
        return (items[i] for i in range(self._len - 1, -1, -1))

    def __repr__(self) -> str:
        return f"<PathView {self._len} entries>"


class LiveProjection:
    """Path, context entries and messages of one leaf, updated incrementally.

    Nothing is computed until first asked for: opening a session does not decode its entries.
    """

    def __init__(self, tree: TreeIndex) -> None:
        self._tree = tree
        self._leaf: Entry | None = None
        self._path: list[Entry] | None = []
        self._path_index: dict[str, int] | None = None
        self._valid = False
        self._ctx: list[ProjectedEntry] = []
        self._ctx_pos: dict[str, list[int]] = {}
        self._edits: dict[str, Entry] = {}
        self._messages: list[AgentMessage] | None = None
        self._level = "off"
        self._model: ModelRef | None = None

    def reset(self, leaf: Entry | None) -> None:
        """Forget everything; it is recomputed for ``leaf`` when next needed."""
        self._leaf = leaf
        self._path = None
        self._valid = False
        self._messages = None

    @property
    def path(self) -> list[Entry]:
        """Root→leaf path of the current leaf (do not modify)."""
        if self._path is None:
            self._path = self._tree.path(self._leaf)
            self._path_index = None
        return self._path

    def _index(self) -> dict[str, int]:
        """Id → first position on the path (built on first use, then kept up to date)."""
        path = self.path
        if self._path_index is None:
            index: dict[str, int] = {}
            for position, entry in enumerate(path):
                index.setdefault(entry.id, position)
            self._path_index = index
        return self._path_index

    def _first_position(self, entry_id: str, before: int) -> int | None:
        """First position of ``entry_id`` on the path before ``before``."""
        if self._path_index is not None or self._tree.shadowed:
            found = self._index().get(entry_id)
            return found if found is not None and found < before else None
        path = self.path
        for position in range(before - 1, -1, -1):
            if path[position].id == entry_id:
                return position  # ids are unique, so this is the only one
        return None

    def on_path(self, entry_id: str) -> bool:
        _ = self.path
        return entry_id in self._index()

    def _ensure(self) -> None:
        if self._valid:
            return
        self._level, self._model = path_settings(self.path)
        self._rebuild_context()
        self._valid = True

    def _rebuild_context(self) -> None:
        entries = build_context_entries(self.path, self._first_position)
        self._edits = context_edits_by_target(entries)
        self._ctx = []
        self._ctx_pos = {}
        for entry in entries:
            self._add(entry)
        self._messages = None

    def _add(self, entry: Entry) -> None:
        index = len(self._ctx)
        self._ctx.append(context_item(entry, index, self._edits))
        self._ctx_pos.setdefault(entry.id, []).append(index)

    def push(self, entry: Entry) -> None:
        """``entry`` was appended as a child of the current leaf."""
        self._leaf = entry
        if self._path is None:
            return
        self._path.append(entry)
        if self._path_index is not None:
            self._path_index.setdefault(entry.id, len(self._path) - 1)
        if not self._valid:
            return
        self._level, self._model = apply_settings(entry, self._level, self._model)
        if entry.type == "compaction":
            self._rebuild_context()
            return
        if entry.type == "context_edit":
            target = entry.get("targetId")
            if isinstance(target, str):
                self._edits[target] = entry
                for index in self._ctx_pos.get(target, ()):
                    self._ctx[index] = context_item(self._ctx[index].entry, index, self._edits)
                self._messages = None
        self._add(entry)
        if self._messages is not None:
            self._messages.extend(self._ctx[-1].messages)

    @property
    def messages(self) -> list[AgentMessage]:
        self._ensure()
        if self._messages is None:
            self._messages = [m for p in self._ctx for m in p.messages]
        return self._messages

    def snapshot(self) -> Projection:
        """A :class:`Projection` whose lists the caller may change; the entries and messages in
        them are the stored ones (read-only)."""
        messages = list(self.messages)
        leaf_id = self._leaf.id if self._leaf is not None else None
        return Projection(list(self._ctx), messages, self._level, self._model, leaf_id)
