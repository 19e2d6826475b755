"""The current leaf's path and projection, kept up to date as entries are appended.

pi 1.6.0 re-walks the whole path after every append. Here an append under the current leaf
extends the path and the projection in place: a plain entry adds its messages, a
``context_edit`` re-projects only its target, and only a compaction rebuilds the (already
compacted, hence short) context from the path. The result equals
:func:`~pi_context.session.projection.projection_of_path` of the same path, which the tests
check.

The rules themselves (which entries feed the context, which edit of an entry wins, the
thinking level and model of a path) are :mod:`~pi_context.session.projection`'s, read over the
session's columns; this module keeps only what changed since they last ran.

The path and the context are kept as positions into the session's
:class:`~pi_context.session._load.columns.EntryColumns`, with each context entry's message count;
the projected entries themselves (an entry's decoded messages) are kept for the newest
:data:`KEEP_ITEMS` context entries only, which is every entry of any context a model can take.
An older one is projected again from its line when it is read. So a context of a million
entries is never held decoded at once, and the projection a turn asks for is still at hand.
"""

from __future__ import annotations

import bisect
import itertools
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

from pi_context.messages import AgentMessage
from pi_context.session._load.checks import head_if_well_typed_and_shallow
from pi_context.session._load.columns import EntryColumns
from pi_context.session.entries import Entry
from pi_context.session.entry_store import IndexedView
from pi_context.session.projection import (
    ModelRef,
    ProjectedEntry,
    Projection,
    apply_settings,
    context_edits_at,
    context_item,
    context_positions,
    path_settings,
)
from pi_context.session.tree import TreeIndex

__all__ = ["KEEP_ITEMS", "LiveProjection", "PathView"]

KEEP_ITEMS: Final = 10_000
"""How many of the newest context entries keep their projected messages between reads."""


_T = TypeVar("_T")


class PathView(IndexedView[Entry]):
    """A read-only root→leaf path that shares the live path instead of copying it.

    ``items`` are the entries, or (with ``entries``) their positions in those columns. The
    live path is only ever extended at its end (an append under the leaf) or replaced (a leaf
    move), so the first ``len(view)`` items never change: the view stays exactly the path it
    was taken from, whatever happens to the session afterwards.
    """

    __slots__ = ("_entries", "_items", "_len")
    _what = "path"

    def __init__(self, items: Sequence[Any], entries: EntryColumns | None = None) -> None:
        self._items = items
        self._entries = entries
        self._len = len(items)

    def __len__(self) -> int:
        return self._len

    def _at(self, position: int) -> Entry:
        item = self._items[position]
        return self._entries.entry(item) if self._entries is not None else item

    def __iter__(self) -> Iterator[Entry]:
        items = itertools.islice(self._items, self._len)
        entries = self._entries
        if entries is None:
            return items
        return (entries.entry(p) for p in items)

    def __repr__(self) -> str:
        return f"<PathView {self._len} entries>"


class _Context:
    """The context entries of one path (positions), their message counts, the edits in
    effect, and the projected entries kept (see the module docstring).

    A context is only ever extended at its end; an edit of an earlier entry makes a new
    context (:meth:`copy`), so the views handed out before keep showing what they showed.
    While every projected entry is kept (any context a model can take), the messages are also
    kept as one flat list, so a turn reads them at the speed of a list.
    """

    __slots__ = ("counts", "edits", "flat", "items", "partial", "positions", "starts", "total")

    def __init__(self) -> None:
        self.positions: array[int] = array("i")
        self.counts = bytearray()
        """How many messages each context entry contributes (0, 1 or 2)."""
        self.total = 0
        self.edits: dict[str, Entry] = {}
        self.items: list[ProjectedEntry | None] = []
        """Each context entry's projection, where kept (``None``: projected when read)."""
        self.partial = False
        """Whether some projected entry is not kept (then there is no flat list)."""
        self.flat: list[AgentMessage] | None = None
        self.starts: array[int] | None = None
        """The index of each context entry's first message (one more at the end), made when a
        message is first read by its index."""

    def copy(self) -> _Context:
        made = _Context()
        made.positions = array("i", self.positions)
        made.counts = bytearray(self.counts)
        made.total = self.total
        made.edits = dict(self.edits)
        made.items = list(self.items)
        made.partial = self.partial
        return made

    def append(self, item: ProjectedEntry, position: int) -> None:
        index = len(self.positions)
        count = len(item.messages)
        self.positions.append(position)
        self.counts.append(count)
        self.total += count
        if self.starts is not None:
            self.starts.append(self.starts[-1] + count)
        items = self.items
        items.append(item)
        if index >= KEEP_ITEMS:
            items[index - KEEP_ITEMS] = None
            self.partial = True
            self.flat = None
        elif self.flat is not None:
            self.flat.extend(item.messages)

    def append_count(self, count: int, position: int) -> None:
        """Add a context entry by its message count only (projected when read)."""
        self.positions.append(position)
        self.counts.append(count)
        self.total += count
        if self.starts is not None:
            self.starts.append(self.starts[-1] + count)
        self.items.append(None)
        self.partial = True
        self.flat = None

    def item(self, columns: EntryColumns, index: int) -> ProjectedEntry:
        found = self.items[index]
        if found is None:
            found = context_item(columns.entry(self.positions[index]), index, self.edits)
        return found

    def flat_messages(self) -> list[AgentMessage] | None:
        """Every message in one list while every projected entry is kept, else ``None``."""
        if self.partial:
            return None
        flat = self.flat
        if flat is None:
            flat = self.flat = [m for item in self.items if item is not None for m in item.messages]
        return flat

    def message_starts(self) -> array[int]:
        starts = self.starts
        if starts is None:
            starts = array("q", [0])
            starts.extend(itertools.accumulate(self.counts))
            self.starts = starts
        return starts


class _ListLike(IndexedView[_T]):
    """A read-only view that compares equal to any sequence with the same items, as the list
    it stands in for would (and, like a list, is not hashable)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class ContextEntries(_ListLike[ProjectedEntry]):
    """The first ``length`` projected entries of a context, each projected when read (the
    newest are kept projected by the context itself)."""

    __slots__ = ("_columns", "_context", "_len")
    _what = "context entry"

    def __init__(self, context: _Context, columns: EntryColumns, length: int) -> None:
        self._context = context
        self._columns = columns
        self._len = length

    def __len__(self) -> int:
        return self._len

    def _at(self, position: int) -> ProjectedEntry:
        return self._context.item(self._columns, position)

    def __iter__(self) -> Iterator[ProjectedEntry]:
        context = self._context
        if not context.partial:
            return itertools.islice(context.items, self._len)  # type: ignore[arg-type]
        item = context.item
        columns = self._columns
        return (item(columns, i) for i in range(self._len))

    def __repr__(self) -> str:
        return f"<{self._len} context entries>"


class ContextMessages(_ListLike[AgentMessage]):
    """The first ``length`` messages of a context, taken from their entries when read: a
    million-message context is never held decoded at once. Read-only (the stored messages)."""

    __slots__ = ("_columns", "_context", "_items", "_len")
    _what = "message"

    def __init__(self, context: _Context, columns: EntryColumns, items: int, length: int) -> None:
        self._context = context
        self._columns = columns
        self._items = items
        self._len = length

    def __len__(self) -> int:
        return self._len

    def _at(self, index: int) -> AgentMessage:
        context = self._context
        flat = context.flat_messages()
        if flat is not None:
            return flat[index]
        starts = context.message_starts()
        item = bisect.bisect_right(starts, index, 0, self._items + 1) - 1
        return context.item(self._columns, item).messages[index - starts[item]]

    def _slice(self, start: int, stop: int, step: int) -> list[AgentMessage]:
        flat = self._context.flat_messages()
        if flat is not None:
            return (
                flat[start:stop:step] if step > 0 else [flat[i] for i in range(start, stop, step)]
            )
        if step == 1:
            return list(itertools.islice(self._from(start), max(0, stop - start)))
        return [self._at(i) for i in range(start, stop, step)]

    def _from(self, start: int) -> Iterator[AgentMessage]:
        """The messages from index ``start`` on, entry by entry."""
        context = self._context
        columns = self._columns
        counts = context.counts
        first = 0
        skip = 0
        if start:
            starts = context.message_starts()
            first = bisect.bisect_right(starts, start, 0, self._items + 1) - 1
            skip = start - starts[first]
        for index in range(first, self._items):
            if counts[index]:
                messages = context.item(columns, index).messages
                yield from (messages[skip:] if skip else messages)
                skip = 0

    def __iter__(self) -> Iterator[AgentMessage]:
        flat = self._context.flat_messages()
        return itertools.islice(flat if flat is not None else self._from(0), self._len)

    def __repr__(self) -> str:
        return f"<{self._len} context messages>"


_SPEAKING: Final = frozenset({"message", "custom_message", "branch_summary", "compaction"})
"""Entry types that may contribute messages to a context (every other type contributes none,
whatever its line holds)."""


def _known_count(columns: EntryColumns, position: int, edits: Mapping[str, Entry]) -> int | None:
    """How many messages the context entry at ``position`` contributes, when that is known
    without decoding it (``None``: project it to know). A message entry whose line the
    compiled check accepts holds a message object, so it contributes exactly one."""
    kind = columns.type_at(position)
    if kind not in _SPEAKING:
        return 0
    if kind != "message" or columns.role_at(position) is None or columns.pinned(position):
        return None
    if columns.ids[position] in edits:
        return None
    return 1 if head_if_well_typed_and_shallow(columns.line(position)) is not None else None


class LiveProjection:
    """Path, context entries and messages of one leaf, updated incrementally.

    Nothing is computed until first asked for: opening a session does not decode its entries.
    """

    def __init__(self, tree: TreeIndex) -> None:
        self._tree = tree
        self._leaf: Entry | None = None
        self._path: array[int] | None = array("i")
        self._ascending = True
        """Whether the path's positions ascend (a file in which every parent comes first):
        then a position is found on it by bisection, without an id map of the path."""
        self._path_index: dict[str, int] | None = None
        self._valid = False
        self._context = _Context()
        self._level = "off"
        self._model: ModelRef | None = None

    def reset(self, leaf: Entry | None) -> None:
        """Forget everything; it is recomputed for ``leaf`` when next needed."""
        self._leaf = leaf
        self._path = None
        self._valid = False

    def _positions(self) -> array[int]:
        if self._path is None:
            path = self._path = self._tree.leaf_path_positions(self._leaf)
            self._path_index = None
            self._ascending = all(a < b for a, b in itertools.pairwise(path))
        return self._path

    @property
    def path(self) -> PathView:
        """Root→leaf path of the current leaf (a view that keeps showing this path)."""
        return PathView(self._positions(), self._tree.entries)

    def _index(self) -> dict[str, int]:
        """Id → first position on the path (built on first use, then kept up to date)."""
        path = self._positions()
        if self._path_index is None:
            ids = self._tree.entries.ids
            index: dict[str, int] = {}
            for position, at in enumerate(path):
                index.setdefault(ids[at], position)
            self._path_index = index
        return self._path_index

    def _first_position(self, entry_id: str, before: int) -> int | None:
        """First position of ``entry_id`` on the path before ``before``."""
        path = self._positions()
        tree = self._tree
        if self._path_index is None and self._ascending and not tree.shadowed_positions:
            at = tree.positions.get(entry_id)
            if at is None:
                return None
            index = bisect.bisect_left(path, at, 0, before)
            return index if index < before and path[index] == at else None
        if self._path_index is not None or tree.shadowed_positions:
            found = self._index().get(entry_id)
            return found if found is not None and found < before else None
        ids = tree.entries.ids
        for position in range(before - 1, -1, -1):
            if ids[path[position]] == entry_id:
                return position  # ids are unique, so this is the only one
        return None

    def on_path(self, entry_id: str) -> bool:
        return self._first_position(entry_id, len(self._positions())) is not None

    def _ensure(self) -> None:
        if self._valid:
            return
        self._level, self._model = path_settings(self._tree.entries, self._positions())
        self._rebuild_context()
        self._valid = True

    def _rebuild_context(self) -> None:
        columns = self._tree.entries
        positions = context_positions(columns, self._positions(), self._first_position)
        context = _Context()
        edits = context.edits = context_edits_at(columns, positions)
        entry_at = columns.entry
        keep_from = len(positions) - KEEP_ITEMS
        for index, position in enumerate(positions):
            if index < keep_from:
                count = _known_count(columns, position, edits)
                if count is not None:
                    context.append_count(count, position)
                    continue
            context.append(context_item(entry_at(position), index, edits), position)
        self._context = context

    def _edited_items(self, target: str) -> list[int]:
        """The context entries an edit of ``target`` applies to (every entry with that id)."""
        tree = self._tree
        positions = self._context.positions
        if not tree.shadowed_positions:
            at = tree.positions.get(target)
            if at is None:
                return []
            try:
                return [positions.index(at)]
            except ValueError:
                return []
        ids = tree.entries.ids
        return [index for index, at in enumerate(positions) if ids[at] == target]

    def push(self, entry: Entry) -> None:
        """``entry`` was appended as a child of the current leaf."""
        self._leaf = entry
        if self._path is None:
            return
        path = self._path
        position = self._tree.position_of(entry)
        assert position is not None
        if path and path[-1] >= position:
            self._ascending = False
        path.append(position)
        if self._path_index is not None:
            self._path_index.setdefault(entry.id, len(path) - 1)
        if not self._valid:
            return
        self._level, self._model = apply_settings(entry, self._level, self._model)
        if entry.type == "compaction":
            self._rebuild_context()
            return
        context = self._context
        if entry.type == "context_edit":
            target = entry.get("targetId")
            if isinstance(target, str):
                context = self._context = context.copy()
                context.edits[target] = entry
                columns = self._tree.entries
                for index in self._edited_items(target):
                    redone = context_item(
                        columns.entry(context.positions[index]), index, context.edits
                    )
                    count = len(redone.messages)
                    context.total += count - context.counts[index]
                    context.counts[index] = count
                    if context.items[index] is not None:
                        context.items[index] = redone
        context.append(context_item(entry, len(context.positions), context.edits), position)

    @property
    def messages(self) -> ContextMessages:
        self._ensure()
        context = self._context
        return ContextMessages(context, self._tree.entries, len(context.positions), context.total)

    def snapshot(self) -> Projection:
        """A :class:`Projection` of views that keep showing this moment's context; the entries
        and messages in them are the stored ones (read-only)."""
        self._ensure()
        context = self._context
        columns = self._tree.entries
        length = len(context.positions)
        leaf_id = self._leaf.id if self._leaf is not None else None
        return Projection(
            ContextEntries(context, columns, length),
            ContextMessages(context, columns, length, context.total),
            self._level,
            self._model,
            leaf_id,
        )
