"""The seam between pi's projection rules and whatever holds a session's entries.

:class:`EntryStore` is what :mod:`~pi_context.session.projection` reads: a session's entries by
*position* (0-based, file order; an entry keeps its position while entries are appended). The
rules ask the cheap questions (type, role, id, parent) of many positions and make an
:class:`~pi_context.session.entries.Entry` only where they need its fields. Three stores
implement it: a loaded session's :class:`~pi_context.session._load.columns.EntryColumns`, the lean
file index (:class:`~pi_context.session._index.file_index.ColumnIndex`) and, for a plain list of
entries that is one path, :class:`PathEntries`. :class:`EntryTree` adds the parent of each
position, which walking the tree needs (the rules take a path of positions and need none):
a loaded session's :class:`~pi_context.session.tree.TreeIndex` and the lean file index give it.

:class:`IndexedView` is the one place where a read-only sequence view spells out Python's
indexing (ints, negative ints, slices): a view gives its length and the item at a position.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

if TYPE_CHECKING:
    from pi_context.session.entries import Entry

__all__ = [
    "EntryStore",
    "EntryTree",
    "IndexedView",
    "PathEntries",
    "child_positions",
    "path_positions",
]

_T = TypeVar("_T")


class EntryStore(Protocol):
    """A session's entries by position (see the module docstring).

    A position is ``0 <= position < len(store)``; what an out-of-range position does is the
    store's own business (the rules only ask for positions the store gave them).
    """

    def __len__(self) -> int:
        """How many entries the store holds."""
        ...

    def id_at(self, position: int) -> str:
        """The id of the entry at ``position``."""
        ...

    def type_at(self, position: int) -> str:
        """The entry's ``type`` (``"unreadable"`` once a line turned out unreadable)."""
        ...

    def role_at(self, position: int) -> str | None:
        """The role of a ``message`` entry when known without decoding it (``None``: not a
        message, or decode the entry to know)."""
        ...

    def entry(self, position: int) -> Entry:
        """The entry at ``position`` (made, or read back, when asked for)."""
        ...


class EntryTree(EntryStore, Protocol):
    """An :class:`EntryStore` that also knows each entry's parent, and which entry an id
    names."""

    def parent_position(self, position: int) -> int:
        """The position of the entry's parent, -1 for a root (no parent, an unknown or its own
        id as parent, or the entry chosen to break a parent cycle)."""
        ...

    def position_of_id(self, entry_id: str) -> int | None:
        """The position of the entry ``entry_id`` names (the later one when a file repeats an
        id; ``None``: no such entry)."""
        ...


def path_positions(tree: EntryTree, leaf: int) -> array[int]:
    """Positions of the root→``leaf`` path (empty for -1)."""
    out = array("i")
    parent_position = tree.parent_position
    while leaf >= 0:
        out.append(leaf)
        leaf = parent_position(leaf)
    out.reverse()
    return out


def child_positions(tree: EntryTree) -> tuple[array[int], array[int]]:
    """Children of every entry in file order, as ``(starts, kids)``: the children of position
    ``p`` are ``kids[starts[p]:starts[p + 1]]`` (two arrays, no list per entry). Children hang
    off the position their parent id names, as :meth:`EntryTree.parent_position` gives it."""
    count = len(tree)
    parents = array("i", map(tree.parent_position, range(count)))
    starts = array("i", bytes(4 * (count + 1)))
    for parent in parents:
        if parent >= 0:
            starts[parent + 1] += 1
    for position in range(count):
        starts[position + 1] += starts[position]
    fill = array("i", starts[:count])
    kids = array("i", bytes(4 * starts[count]))
    for position, parent in enumerate(parents):
        if parent >= 0:
            kids[fill[parent]] = position
            fill[parent] += 1
    return starts, kids


class IndexedView(Sequence[_T]):
    """A read-only sequence over positions ``0 .. len - 1``: subclasses give :meth:`__len__`
    and :meth:`_at` (a position in range); ints (negative from the end) and slices are
    answered here."""

    __slots__ = ()

    _what = "index"
    """Named in the :class:`IndexError` of an index out of range."""

    def _at(self, position: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> list[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | list[_T]:
        length = len(self)
        if isinstance(index, slice):
            return self._slice(*index.indices(length))
        position = index + length if index < 0 else index
        if not 0 <= position < length:
            raise IndexError(f"{self._what} index out of range")
        return self._at(position)

    def _slice(self, start: int, stop: int, step: int) -> list[_T]:
        """The items of ``range(start, stop, step)`` (bounds already clipped); a view that
        reads a run of items faster than one by one overrides this."""
        at = self._at
        return [at(i) for i in range(start, stop, step)]

    def __iter__(self) -> Iterator[_T]:
        at = self._at
        return (at(i) for i in range(len(self)))

    def __reversed__(self) -> Iterator[_T]:
        at = self._at
        return (at(i) for i in range(len(self) - 1, -1, -1))


class PathEntries:
    """A list of entries that is one root→leaf path, as an :class:`EntryTree` (the parent of
    each entry is the one before it)."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Sequence[Entry]) -> None:
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def id_at(self, position: int) -> str:
        return self._entries[position].id

    def parent_position(self, position: int) -> int:
        return position - 1

    def position_of_id(self, entry_id: str) -> int | None:
        found = None
        for position, entry in enumerate(self._entries):
            if entry.id == entry_id:
                found = position
        return found

    def type_at(self, position: int) -> str:
        return self._entries[position].type

    def role_at(self, position: int) -> str | None:
        return self._entries[position].role

    def entry(self, position: int) -> Entry:
        return self._entries[position]
