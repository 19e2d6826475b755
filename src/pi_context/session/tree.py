"""The entry tree: parents, paths to the root, children, leaves, labels, common ancestors.

Entries link to their parent by ``parentId``. As in pi 1.6.0, when two entries share an id the
later one in file order is the one an id refers to, an entry whose parent is unknown or is
itself is a root, and a path walk that meets an unknown parent stops there.

pi 1.6.0 loops forever on a parent cycle. Here a cycle is found when entries are added (in
time linear in the entries added) and broken at its member that comes first in the file: that
entry is treated as a root and the cycle is reported, so every walk terminates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from pi_context._json import js_trim
from pi_context.errors import TreeError
from pi_context.session.entries import Entry

__all__ = ["TreeIndex", "apply_label", "normalize_name", "session_name_of"]

_NEWLINES = re.compile(r"[\r\n]+")


def _add_child(children: dict[str, Entry | list[Entry]], parent_id: str, child: Entry) -> None:
    found = children.get(parent_id)
    if found is None:
        children[parent_id] = child
    elif isinstance(found, Entry):
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


class TreeIndex:
    """Id index and parent/child structure over entries in file order.

    ``children``, ``labels`` and the session name are built on first use and then kept up to
    date as entries are added, so loading stays a single cheap pass.
    """

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self.entries: list[Entry] = []
        self.by_id: dict[str, Entry] = {}
        self.forced_roots: set[int] = set()
        self.cycles: list[list[str]] = []
        self._unresolved: set[str] = set()
        self.shadowed: list[Entry] = []
        """Entries hidden by a later entry with the same id (pi resolves ids to the later one)."""
        self._children: dict[str, Entry | list[Entry]] | None = None
        """Parent id → its child, or its children when there are several: most entries have
        one child, and a list per entry would cost more than the entry's own line."""
        self._labels: dict[str, str] | None = None
        self._name: str | None = None
        self._name_built = False
        self.extend(entries)

    # -- building -----------------------------------------------------------------------

    def extend(self, entries: Iterable[Entry]) -> None:
        """Add entries (in file order), then find and break any parent cycle they close.

        Without duplicate ids, a cycle needs an entry whose parent was not known yet when it
        was added (a forward reference), so only such entries are walked from: a file pi
        wrote is checked in one pass without any walk.
        """
        by_id = self.by_id
        all_entries = self.entries
        unresolved = self._unresolved
        first = len(all_entries)
        suspects: list[Entry] = []
        duplicate = False
        for entry in entries:
            entry_id = entry.id
            parent = entry.parent_id
            if parent is not None and parent not in by_id:
                suspects.append(entry)
                unresolved.add(parent)
            if entry_id in by_id:
                duplicate = True
                self.shadowed.append(by_id[entry_id])
            elif entry_id in unresolved:
                suspects.append(entry)
            by_id[entry_id] = entry
            all_entries.append(entry)
        added = all_entries[first:]
        if duplicate:
            self._check_cycles(added)
        elif suspects:
            self._check_cycles(suspects)
        if self._children is not None or self._labels is not None or self._name_built:
            for entry in added:
                self._index(entry)

    def add(self, entry: Entry) -> None:
        """Add one new entry whose parent (if any) is already known."""
        if entry.id in self.by_id or entry.id in self._unresolved:
            self.extend([entry])
            return
        self.entries.append(entry)
        self.by_id[entry.id] = entry
        self._index(entry)

    def _index(self, entry: Entry) -> None:
        if self._children is not None:
            parent = self.parent_of(entry)
            if parent is not None:
                _add_child(self._children, parent.id, entry)
        if self._labels is not None and entry.type == "label":
            self._apply_label(self._labels, entry)
        if self._name_built and entry.type == "session_info" and entry.readable:
            self._name = self._name_of(entry)

    def _check_cycles(self, start: Sequence[Entry]) -> None:
        done: set[int] = set()
        positions: dict[int, int] = {}  # id(entry) → file position, built at the first cycle
        for first in start:
            walk: list[Entry] = []
            on_walk: set[int] = set()
            entry: Entry | None = self.by_id.get(first.id)
            while entry is not None and id(entry) not in done:
                if id(entry) in on_walk:
                    cycle = walk[walk.index(entry) :]
                    if not positions:
                        positions = {id(e): i for i, e in enumerate(self.entries)}
                    head = min(cycle, key=lambda e: positions[id(e)])
                    self.forced_roots.add(id(head))
                    self.cycles.append([e.id for e in cycle])
                    break
                on_walk.add(id(entry))
                walk.append(entry)
                entry = self.parent_of(entry)
            done.update(on_walk)

    def dangling(self) -> list[Entry]:
        """Entries whose parent id is not in the session (shown and walked as roots)."""
        missing = {p for p in self._unresolved if p not in self.by_id}
        if not missing:
            return []
        return [e for e in self.entries if e.parent_id in missing and e.parent_id != e.id]

    # -- queries --------------------------------------------------------------------------

    def get(self, entry_id: str) -> Entry | None:
        return self.by_id.get(entry_id)

    def require(self, entry_id: str) -> Entry:
        entry = self.by_id.get(entry_id)
        if entry is None:
            raise TreeError(f"no entry with id {entry_id!r}")
        return entry

    def parent_of(self, entry: Entry) -> Entry | None:
        """The entry's parent, or ``None`` for a root (no, unknown or own id as parent)."""
        parent_id = entry.parent_id
        if parent_id is None or parent_id == entry.id or id(entry) in self.forced_roots:
            return None
        return self.by_id.get(parent_id)

    def path(self, leaf: Entry | None) -> list[Entry]:
        """Root-first path ending at ``leaf`` (pi's ``getBranch``); empty for ``None``."""
        out: list[Entry] = []
        append = out.append
        by_id = self.by_id
        forced = self.forced_roots
        entry = leaf
        while entry is not None:
            append(entry)
            parent_id = entry.parent_id
            if parent_id is None or parent_id == entry.id or (forced and id(entry) in forced):
                break
            entry = by_id.get(parent_id)
        out.reverse()
        return out

    def _children_index(self) -> dict[str, Entry | list[Entry]]:
        if self._children is None:
            children: dict[str, Entry | list[Entry]] = {}
            for entry in self.entries:
                parent = self.parent_of(entry)
                if parent is not None:
                    _add_child(children, parent.id, entry)
            self._children = children
        return self._children

    @property
    def children_map(self) -> dict[str, list[Entry]]:
        """Parent id → its children in file order (a new dict: :meth:`child_entries` reads
        one entry's children without building it)."""
        return {
            key: [value] if isinstance(value, Entry) else list(value)
            for key, value in self._children_index().items()
        }

    def child_entries(self, entry_id: str) -> Sequence[Entry]:
        """The children of ``entry_id`` in file order (read-only; no copy of a long list)."""
        found = self._children_index().get(entry_id)
        if found is None:
            return ()
        return (found,) if isinstance(found, Entry) else found

    def children(self, entry_id: str) -> list[Entry]:
        return list(self.child_entries(entry_id))

    def roots(self) -> list[Entry]:
        return [e for e in self.entries if self.parent_of(e) is None]

    def leaves(self) -> list[Entry]:
        """Entries without children, in file order."""
        if self._children is not None:
            children = self._children
            return [e for e in self.entries if e.id not in children]
        # Without the children map (which costs more memory than the ids): the set of ids
        # that are some entry's parent.
        parents = {p.id for e in self.entries if (p := self.parent_of(e)) is not None}
        return [e for e in self.entries if e.id not in parents]

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
        on_a = {id(e) for e in self.path(self.require(a))}
        for entry in reversed(self.path(self.require(b))):
            if id(entry) in on_a:
                return entry.id
        return None

    # -- labels and name -------------------------------------------------------------------

    _apply_label = staticmethod(apply_label)

    @property
    def labels(self) -> dict[str, str]:
        """Entry id → its current label (the last label entry for it in file order wins)."""
        if self._labels is None:
            labels: dict[str, str] = {}
            for entry in self.entries:
                if entry.type == "label":
                    self._apply_label(labels, entry)
            self._labels = labels
        return self._labels

    _name_of = staticmethod(session_name_of)

    @property
    def name(self) -> str | None:
        """The session's display name (the latest ``session_info`` entry), if any."""
        if not self._name_built:
            self._name = None
            for entry in self.entries:
                if entry.type == "session_info" and entry.readable:
                    self._name = self._name_of(entry)
            self._name_built = True
        return self._name
