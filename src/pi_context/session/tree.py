"""The entry tree: parents, paths to the root, children, leaves, labels, common ancestors.

Entries link to their parent by ``parentId``. As in pi 1.6.0, when two entries share an id the
later one in file order is the one an id refers to, an entry whose parent is unknown or is
itself is a root, and a path walk that meets an unknown parent stops there.

pi 1.6.0 loops forever on a parent cycle. Here a cycle is found when entries are added (in
time linear in the entries added) and broken at its member that comes first in the file: that
entry is treated as a root and the cycle is reported, so every walk terminates.
"""

from __future__ import annotations

import itertools
import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence

from pi_context._json import js_trim
from pi_context.errors import TreeError
from pi_context.session._load.columns import EntryColumns
from pi_context.session.entries import Entry

__all__ = ["TreeIndex", "apply_label", "normalize_name", "session_name_of"]

_NEWLINES = re.compile(r"[\r\n]+")


def _add_child(children: dict[str, int | list[int]], parent_id: str, child: int) -> None:
    found = children.get(parent_id)
    if found is None:
        children[parent_id] = child
    elif isinstance(found, int):
        children[parent_id] = [found, child]
    else:
        found.append(child)


def normalize_name(name: str) -> str:
    """A session name as pi shows it: runs of CR/LF become one space, then trimmed."""
    return js_trim(_NEWLINES.sub(" ", name))


def apply_label(labels: dict[str, str], entry: Entry) -> None:
    """Apply a ``label`` entry to ``labels`` (entry id → label): set, or clear when empty."""
    target = entry.get("targetId")
    if not isinstance(target, str):
        return
    label = entry.get("label")
    if isinstance(label, str) and label:
        labels[target] = label
    else:
        labels.pop(target, None)


def session_name_of(entry: Entry) -> str | None:
    """The display name a ``session_info`` entry sets (``None``: none)."""
    name = entry.get("name")
    if not isinstance(name, str):
        return None
    clean = normalize_name(name)
    return clean or None


class _EntriesById(Mapping[str, Entry]):
    """Id → entry over a tree's id map, making the entry object only when one is read."""

    __slots__ = ("_tree",)

    def __init__(self, tree: TreeIndex) -> None:
        self._tree = tree

    def __getitem__(self, entry_id: str) -> Entry:
        return self._tree.entries.entry(self._tree.positions[entry_id])

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._tree.positions

    def __iter__(self) -> Iterator[str]:
        return iter(self._tree.positions)

    def __len__(self) -> int:
        return len(self._tree.positions)


class TreeIndex:
    """Id index and parent/child structure over entries in file order.

    The entries are held as :class:`~pi_context.session._load.columns.EntryColumns`, and the
    structure is kept by position (an entry's place in file order): walking a path or finding
    the context reads ids and types from the columns without making an object per entry.
    ``children``, ``labels`` and the session name are built on first use and then kept up to
    date as entries are added, so loading stays a single cheap pass.
    """

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self.entries = EntryColumns()
        """Every entry in file order."""
        self.positions: dict[str, int] = {}
        """Entry id → position of the entry it refers to (the later one for a repeated id)."""
        self.forced_roots: set[int] = set()
        """Positions of entries treated as roots to break a parent cycle."""
        self.cycles: list[list[str]] = []
        self._unresolved: set[str] = set()
        self.shadowed_positions: list[int] = []
        """Positions of entries hidden by a later entry with the same id."""
        self._children: dict[str, int | list[int]] | None = None
        """Parent id → the position of its child, or of its children when there are several:
        most entries have one child, and a list per entry would cost more than its line."""
        self._labels: dict[str, str] | None = None
        self._name: str | None = None
        self._name_built = False
        self.extend(entries)

    @classmethod
    def of_columns(cls, columns: EntryColumns) -> TreeIndex:
        """The tree of a loader's columns, taken as they are (not copied) unless another tree
        already took them."""
        tree = cls()
        if columns.owned_by_tree:
            tree.extend(columns)
            return tree
        columns.owned_by_tree = True
        tree.entries = columns
        tree._indexed(0)
        return tree

    # -- building -----------------------------------------------------------------------

    def extend(self, entries: Iterable[Entry]) -> None:
        """Add entries (in file order), then find and break any parent cycle they close.

        Without duplicate ids, a cycle needs an entry whose parent was not known yet when it
        was added (a forward reference), so only such entries are walked from: a file pi
        wrote is checked in one pass without any walk.
        """
        columns = self.entries
        first = len(columns)
        for entry in entries:
            columns.add(entry)
        self._indexed(first)

    def _indexed(self, first: int) -> None:
        """Index the entries from position ``first`` on (see :meth:`extend`)."""
        columns = self.entries
        positions = self.positions
        unresolved = self._unresolved
        suspects: list[int] = []
        duplicate = False
        pairs = zip(
            itertools.islice(columns.ids, first, None),
            itertools.islice(columns.parent_ids, first, None),
            strict=True,
        )
        for position, (entry_id, parent) in enumerate(pairs, first):
            if parent is not None and parent not in positions:
                suspects.append(position)
                unresolved.add(parent)
            if entry_id in positions:
                duplicate = True
                self.shadowed_positions.append(positions[entry_id])
            elif entry_id in unresolved:
                suspects.append(position)
            positions[entry_id] = position
        if duplicate:
            self._check_cycles(range(first, len(columns)))
        elif suspects:
            self._check_cycles(suspects)
        if self._children is not None or self._labels is not None or self._name_built:
            for position in range(first, len(columns)):
                self._index(position)

    def add(self, entry: Entry) -> None:
        """Add one new entry whose parent (if any) is already known."""
        if entry.id in self.positions or entry.id in self._unresolved:
            self.extend([entry])
            return
        position = self.entries.add(entry)
        self.positions[entry.id] = position
        self._index(position)

    def _index(self, position: int) -> None:
        if self._children is not None:
            parent = self.parent_position(position)
            if parent >= 0:
                _add_child(self._children, self.entries.ids[parent], position)
        kind = self.entries.type_at(position)
        if self._labels is not None and kind == "label":
            self._apply_label(self._labels, self.entries.entry(position))
        if self._name_built and kind == "session_info":
            entry = self.entries.entry(position)
            if entry.readable:
                self._name = self._name_of(entry)

    def _check_cycles(self, start: Iterable[int]) -> None:
        done: set[int] = set()
        ids = self.entries.ids
        for first in start:
            walk: list[int] = []
            on_walk: set[int] = set()
            position = self.positions.get(ids[first], -1)
            while position >= 0 and position not in done:
                if position in on_walk:
                    cycle = walk[walk.index(position) :]
                    self.forced_roots.add(min(cycle))  # the member first in the file
                    self.cycles.append([ids[p] for p in cycle])
                    break
                on_walk.add(position)
                walk.append(position)
                position = self.parent_position(position)
            done.update(on_walk)

    @property
    def shadowed(self) -> list[Entry]:
        """Entries hidden by a later entry with the same id (pi resolves ids to the later one)."""
        return [self.entries.entry(p) for p in self.shadowed_positions]

    def dangling(self) -> list[Entry]:
        """Entries whose parent id is not in the session (shown and walked as roots)."""
        missing = {p for p in self._unresolved if p not in self.positions}
        if not missing:
            return []
        ids = self.entries.ids
        return [
            self.entries.entry(position)
            for position, parent in enumerate(self.entries.parent_ids)
            if parent in missing and parent != ids[position]
        ]

    # -- queries --------------------------------------------------------------------------

    @property
    def by_id(self) -> Mapping[str, Entry]:
        """Id → entry (the later one for a repeated id), read-only."""
        return _EntriesById(self)

    def get(self, entry_id: str) -> Entry | None:
        position = self.positions.get(entry_id)
        return None if position is None else self.entries.entry(position)

    def require(self, entry_id: str) -> Entry:
        return self.entries.entry(self.require_position(entry_id))

    def require_position(self, entry_id: str) -> int:
        position = self.positions.get(entry_id)
        if position is None:
            raise TreeError(f"no entry with id {entry_id!r}")
        return position

    def position_of(self, entry: Entry) -> int | None:
        """The position of this very entry object in the tree (``None``: not one of its
        entries, though one with its id may be)."""
        columns = self.entries
        if entry._home is columns:
            return entry._pos
        position = self.positions.get(entry.id)
        if position is not None and columns.pinned(position) is entry:
            return position
        for position in self.shadowed_positions:
            if columns.pinned(position) is entry:
                return position
        return None

    # -- as an EntryTree (see pi_context.session.entry_store) -----------------------------

    def __len__(self) -> int:
        return len(self.entries)

    def id_at(self, position: int) -> str:
        return self.entries.ids[position]

    def type_at(self, position: int) -> str:
        return self.entries.type_at(position)

    def role_at(self, position: int) -> str | None:
        return self.entries.role_at(position)

    def entry(self, position: int) -> Entry:
        return self.entries.entry(position)

    def position_of_id(self, entry_id: str) -> int | None:
        return self.positions.get(entry_id)

    def parent_position(self, position: int) -> int:
        """The position of the parent of the entry at ``position`` (-1: a root, for no,
        unknown or own id as parent, or a root that breaks a cycle)."""
        columns = self.entries
        parent_id = columns.parent_ids[position]
        if parent_id is None or parent_id == columns.ids[position] or position in self.forced_roots:
            return -1
        return self.positions.get(parent_id, -1)

    def parent_of(self, entry: Entry) -> Entry | None:
        """The entry's parent, or ``None`` for a root (no, unknown or own id as parent)."""
        position = self.position_of(entry)
        if position is None:
            parent_id = entry.parent_id
            if parent_id is None or parent_id == entry.id:
                return None
            return self.get(parent_id)
        parent = self.parent_position(position)
        return self.entries.entry(parent) if parent >= 0 else None

    def path_positions(self, leaf: int) -> array[int]:
        """Positions of the root-first path ending at position ``leaf`` (-1: empty)."""
        out: array[int] = array("i")
        append = out.append
        columns = self.entries
        ids = columns.ids
        parents = columns.parent_ids
        positions = self.positions
        forced = self.forced_roots
        position = leaf
        while position >= 0:
            append(position)
            parent_id = parents[position]
            if parent_id is None or parent_id == ids[position] or (forced and position in forced):
                break
            position = positions.get(parent_id, -1)
        out.reverse()
        return out

    def leaf_path_positions(self, leaf: Entry | None) -> array[int]:
        """:meth:`path_positions` of one of the tree's entries (``None``: empty)."""
        if leaf is None:
            return array("i")
        position = self.position_of(leaf)
        if position is None:
            raise TreeError(f"entry {leaf.id!r} is not one of this session's entries")
        return self.path_positions(position)

    def path(self, leaf: Entry | None) -> list[Entry]:
        """Root-first path ending at ``leaf`` (pi's ``getBranch``); empty for ``None``."""
        if leaf is None:
            return []
        position = self.position_of(leaf)
        if position is None:  # not one of this tree's entries: the path of its parent
            parent = self.parent_of(leaf)
            return [*self.path(parent), leaf]
        entry = self.entries.entry
        return [entry(p) for p in self.path_positions(position)]

    def _children_index(self) -> dict[str, int | list[int]]:
        if self._children is None:
            children: dict[str, int | list[int]] = {}
            ids = self.entries.ids
            for position in range(len(ids)):
                parent = self.parent_position(position)
                if parent >= 0:
                    _add_child(children, ids[parent], position)
            self._children = children
        return self._children

    @property
    def children_map(self) -> dict[str, list[Entry]]:
        """Parent id → its children in file order (a new dict: :meth:`child_entries` reads
        one entry's children without building it)."""
        entry = self.entries.entry
        return {
            key: [entry(value)] if isinstance(value, int) else [entry(p) for p in value]
            for key, value in self._children_index().items()
        }

    def child_entries(self, entry_id: str) -> Sequence[Entry]:
        """The children of ``entry_id`` in file order (read-only)."""
        found = self._children_index().get(entry_id)
        if found is None:
            return ()
        entry = self.entries.entry
        return (entry(found),) if isinstance(found, int) else [entry(p) for p in found]

    def children(self, entry_id: str) -> list[Entry]:
        return list(self.child_entries(entry_id))

    def roots(self) -> list[Entry]:
        entry = self.entries.entry
        return [entry(p) for p in range(len(self.entries)) if self.parent_position(p) < 0]

    def leaves(self) -> list[Entry]:
        """Entries without children, in file order."""
        ids = self.entries.ids
        entry = self.entries.entry
        if self._children is not None:
            children = self._children
            return [entry(p) for p, entry_id in enumerate(ids) if entry_id not in children]
        # Without the children map (which costs more memory than the ids): the set of ids
        # that are some entry's parent.
        parents = {ids[q] for p in range(len(ids)) if (q := self.parent_position(p)) >= 0}
        return [entry(p) for p, entry_id in enumerate(ids) if entry_id not in parents]

    def preorder(self) -> Iterator[tuple[Entry, int]]:
        """``(entry, depth)`` for the whole forest, roots in file order, children in file order.

        Children hang off ids, as in pi: when a file repeats an id, each entry with it shows
        the children of that id (an id already on the way down is not expanded again, so the
        walk ends). Time is linear in what is yielded, whatever the depth.
        """
        children = self.child_entries
        # The ids on the way down from the root; an id string on the stack closes it.
        open_ids: set[str] = set()
        for root in self.roots():
            stack: list[tuple[Entry, int] | str] = [(root, 0)]
            while stack:
                item = stack.pop()
                if isinstance(item, str):
                    open_ids.discard(item)
                    continue
                entry, depth = item
                yield entry, depth
                if entry.id in open_ids:
                    continue
                open_ids.add(entry.id)
                stack.append(entry.id)
                for child in reversed(children(entry.id)):
                    stack.append((child, depth + 1))

    def common_ancestor(self, a: str, b: str) -> str | None:
        """Id of the deepest entry on both root paths, or ``None`` if they share none."""
        on_a = set(self.path_positions(self.require_position(a)))
        for position in reversed(self.path_positions(self.require_position(b))):
            if position in on_a:
                return self.entries.ids[position]
        return None

    # -- labels and name -------------------------------------------------------------------

    _apply_label = staticmethod(apply_label)

    @property
    def labels(self) -> dict[str, str]:
        """Entry id → its current label (the last label entry for it in file order wins)."""
        if self._labels is None:
            labels: dict[str, str] = {}
            for position in self.entries.positions_of_type("label"):
                self._apply_label(labels, self.entries.entry(position))
            self._labels = labels
        return self._labels

    _name_of = staticmethod(session_name_of)

    @property
    def name(self) -> str | None:
        """The session's display name (the latest ``session_info`` entry), if any."""
        if not self._name_built:
            self._name = None
            for position in self.entries.positions_of_type("session_info"):
                entry = self.entries.entry(position)
                if entry.readable:
                    self._name = self._name_of(entry)
            self._name_built = True
        return self._name
