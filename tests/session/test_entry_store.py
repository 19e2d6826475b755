"""The entry-store seam: every store answers the same for the same file, the walks over it
match the tree's own, and the one indexed-view base reads like a list."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_context.session import Entry, EntryStore, EntryTree, Session
from pi_context.session._index.file_index import ColumnIndex
from pi_context.session.entry_store import (
    IndexedView,
    PathEntries,
    child_positions,
    path_positions,
)
from pi_context.session.projection import (
    HandedOutEntries,
    HandedOutMessages,
    ProjectedEntry,
    context_positions,
    path_settings,
)
from tests.session.conftest import DATA
from tests.session.helpers import reference_projection, user

FILES = ["branched", "compaction_multi", "context_edits", "system_sections", "tool_calls"]


def _index(path: Path) -> ColumnIndex:
    index = ColumnIndex.open(path)
    assert index is not None
    return index


@pytest.mark.parametrize("name", FILES)
def test_the_stores_of_one_file_answer_alike(name: str) -> None:
    path = DATA / f"{name}.jsonl"
    session = Session.open(path)
    tree: EntryTree = session.tree
    columns: EntryStore = session.tree.entries
    with _index(path) as index:
        trees: list[EntryTree] = [tree, index]
        for store in [columns, *trees]:
            assert len(store) == len(session.entries)
            for position, entry in enumerate(session.entries):
                assert store.id_at(position) == entry.id
                assert store.type_at(position) == entry.type
                assert store.role_at(position) == entry.role
                assert store.entry(position).data == entry.data
        for position, entry in enumerate(session.entries):
            assert index.parent_position(position) == tree.parent_position(position)
            assert index.position_of_id(entry.id) == tree.position_of_id(entry.id) == position
        assert index.position_of_id("no such id") is tree.position_of_id("no such id") is None


@pytest.mark.parametrize("name", FILES)
def test_walks_over_a_store_match_the_tree(name: str) -> None:
    session = Session.open(DATA / f"{name}.jsonl")
    tree = session.tree
    starts, kids = child_positions(tree)
    for position, entry in enumerate(session.entries):
        assert list(path_positions(tree, position)) == list(tree.path_positions(position))
        children = [session.entries[k].id for k in kids[starts[position] : starts[position + 1]]]
        assert children == [c.id for c in session.children(entry.id)]
    assert list(path_positions(tree, -1)) == []


@pytest.mark.parametrize("name", FILES)
def test_the_rules_read_every_store_alike(name: str) -> None:
    """The context and settings of every leaf, from the loaded columns, the lean index and a
    list of the path's entries, against the plain statement of the rules."""
    path = DATA / f"{name}.jsonl"
    session = Session.open(path)
    columns = session.tree.entries
    with _index(path) as index:
        for leaf in session.leaves():
            positions = session.tree.path_positions(session.tree.positions[leaf.id])
            entries = session.branch_entries(leaf.id)
            ids, _, level, model = reference_projection(entries)
            listed = PathEntries(entries)
            around = range(len(entries))
            assert [entries[p].id for p in context_positions(listed, around)] == ids
            assert path_settings(listed, around) == (level, model)
            for store in (columns, index):
                assert [store.id_at(p) for p in context_positions(store, positions)] == ids
                assert path_settings(store, positions) == (level, model)


class _Listed(IndexedView[int]):
    __slots__ = ("_items",)
    _what = "number"

    def __init__(self, items: list[int]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def _at(self, position: int) -> int:
        return self._items[position]


@given(st.lists(st.integers(), max_size=12), st.data())
def test_an_indexed_view_reads_like_its_list(items: list[int], data: st.DataObject) -> None:
    messages = [user(str(n)) for n in items]
    projected = [ProjectedEntry(_entry(n), [m]) for n, m in zip(items, messages, strict=True)]
    views: list[tuple[Sequence[object], list[object], str]] = [
        (_Listed(items), list(items), "number"),
        (HandedOutMessages(messages), list(messages), "message"),
    ]
    for view, expected, what in views:
        assert len(view) == len(expected)
        assert list(view) == expected
        assert list(reversed(view)) == expected[::-1]
        if expected:
            index = data.draw(st.integers(-len(expected), len(expected) - 1))
            assert view[index] == expected[index]
        cut = data.draw(st.slices(len(expected)))
        assert view[cut] == expected[cut]
        for wrong in (len(expected), -len(expected) - 1):
            with pytest.raises(IndexError, match=f"^{what} index out of range$"):
                view[wrong]
    entries = HandedOutEntries(projected)
    assert [p.entry.id for p in entries[::-1]] == [p.entry.id for p in projected[::-1]]


def _entry(n: int) -> Entry:
    return Entry.from_data({"type": "custom", "id": f"{n & 0xFFFFFFFF:08x}", "parentId": None})
