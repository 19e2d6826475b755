from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.errors import TreeError
from pi_context.session import Entry, Session, TreeIndex
from pi_context.testing import FixedClock, SequentialIds
from tests.session.conftest import DATA
from tests.session.helpers import assistant, user


def entry(entry_id: str, parent: str | None, kind: str = "custom", **extra: Any) -> Entry:
    return Entry.from_data({"type": kind, "id": entry_id, "parentId": parent, **extra})


def branched() -> Session:
    s = Session.in_memory("/", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("root"))  # 1
    s.append_message(assistant("a"))  # 2
    s.append_message(user("left"))  # 3
    s.append_message(assistant("left reply"))  # 4
    s.move_leaf("00000002")
    s.append_message(user("right"))  # 5
    s.append_message(assistant("right reply"))  # 6
    return s


def test_paths_children_leaves() -> None:
    s = branched()
    assert [e.id for e in s.branch_entries()] == ["00000001", "00000002", "00000005", "00000006"]
    assert [e.id for e in s.branch_entries("00000004")] == [
        "00000001",
        "00000002",
        "00000003",
        "00000004",
    ]
    assert [e.id for e in s.children("00000002")] == ["00000003", "00000005"]
    assert [e.id for e in s.leaves()] == ["00000004", "00000006"]
    assert s.common_ancestor("00000004", "00000006") == "00000002"
    assert s.common_ancestor("00000004", "00000003") == "00000003"


def test_common_ancestor_across_roots_is_none() -> None:
    s = branched()
    s.move_leaf(None)
    s.append_message(user("second root"))
    assert s.common_ancestor("00000007", "00000004") is None
    assert len(s.roots()) == 2


def test_unknown_ids_raise() -> None:
    s = branched()
    with pytest.raises(TreeError, match="zzzz"):
        s.branch_entries("zzzz")
    with pytest.raises(TreeError):
        s.move_leaf("zzzz")
    with pytest.raises(TreeError):
        s.common_ancestor("zzzz", "00000001")


def test_labels_last_wins_and_clearing() -> None:
    s = branched()
    s.append_label("00000001", "first")
    s.append_label("00000001", "renamed")
    s.append_label("00000003", "x")
    s.append_label("00000003", None)
    assert s.labels == {"00000001": "renamed"}
    assert s.label_of("00000003") is None


def test_self_parent_is_a_root_and_terminates() -> None:
    tree = TreeIndex([entry("aaaaaaaa", "aaaaaaaa"), entry("bbbbbbbb", "aaaaaaaa")])
    assert [e.id for e in tree.path(tree.require("bbbbbbbb"))] == ["aaaaaaaa", "bbbbbbbb"]
    assert [e.id for e in tree.roots()] == ["aaaaaaaa"]


def test_parent_cycle_is_broken_and_reported(tmp_path: Any) -> None:
    path = tmp_path / "cycle.jsonl"
    lines = [
        '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}',
        '{"type":"custom","customType":"x","id":"aaaaaaaa","parentId":"cccccccc","timestamp":"t"}',
        '{"type":"custom","customType":"x","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t"}',
        '{"type":"custom","customType":"x","id":"cccccccc","parentId":"bbbbbbbb","timestamp":"t"}',
    ]
    path.write_text("\n".join(lines) + "\n")
    s = Session.open(path)
    assert [e.id for e in s.branch_entries()] == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert any("cycle" in p.reason and p.line == 2 for p in s.problems)
    assert [e.id for e, _ in s.tree.preorder()] == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert s.projection().messages == []


def test_duplicate_ids_resolve_to_later_entry_like_pi() -> None:
    s = Session.open(DATA / "edge_cases.jsonl")
    dup = s.get("c405cddf")
    assert dup is not None
    assert dup.parent_id == "835e7cd7"
    assert len(s.entries) == len(s.tree.by_id) + 1


def test_preorder_depths() -> None:
    s = branched()
    rows = [(e.id, depth) for e, depth in s.tree.preorder()]
    assert rows == [
        ("00000001", 0),
        ("00000002", 1),
        ("00000003", 2),
        ("00000004", 3),
        ("00000005", 2),
        ("00000006", 3),
    ]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=40), st.data())
def test_common_ancestor_is_deepest_shared_path_entry(
    parents: list[int], data: st.DataObject
) -> None:
    entries = []
    for index, choice in enumerate(parents):
        parent = None if index == 0 or choice % 7 == 0 else f"{choice % index:08x}"
        entries.append(entry(f"{index:08x}", parent))
    tree = TreeIndex(entries)
    a = data.draw(st.sampled_from(entries)).id
    b = data.draw(st.sampled_from(entries)).id
    path_a = [e.id for e in tree.path(tree.require(a))]
    path_b = [e.id for e in tree.path(tree.require(b))]
    shared = [x for x in path_a if x in path_b]
    assert tree.common_ancestor(a, b) == (shared[-1] if shared else None)
    assert path_a[-1] == a
    assert tree.cycles == []
    # every entry is reached exactly once from the roots
    assert sorted(e.id for e, _ in tree.preorder()) == sorted(e.id for e in entries)


def test_every_cycle_is_broken_at_its_member_first_in_the_file() -> None:
    entries: list[Entry] = []
    for n in range(50):  # 3-cycles c -> b -> a -> c, listed b, a, c
        a, b, c = f"a{n:07d}", f"b{n:07d}", f"c{n:07d}"
        entries += [entry(b, a), entry(a, c), entry(c, b)]
    tree = TreeIndex(entries)
    assert len(tree.cycles) == 50
    roots = tree.roots()
    assert [e.id for e in roots] == [f"b{n:07d}" for n in range(50)]
    for root in roots:
        suffix = root.id[1:]
        path = tree.path(tree.require(f"a{suffix}"))  # a -> c -> b, and b is now a root
        assert [e.id for e in path] == [f"b{suffix}", f"c{suffix}", f"a{suffix}"]


def test_walking_the_tree_of_a_loaded_file_decodes_no_message(tmp_path: Path) -> None:
    """What keeps the inspection commands at the size of the lines: the loader reads ids,
    parents and roles off each line without decoding it, the tree is built from those alone,
    and an entry with one child costs no list of children."""
    s = Session.create(tmp_path / "s.jsonl", cwd="/", ids=SequentialIds(), clock=FixedClock())
    for n in range(20):
        s.append_message(user(f"q{n}"))
        s.append_message(assistant(f"a{n}"))
    s.move_leaf("00000010")
    s.append_message(user("fork"))
    s.close()
    loaded = Session.open(tmp_path / "s.jsonl")
    tree = loaded.tree
    assert [e.id for e, _ in tree.preorder()] == [e.id for e in loaded.entries]
    assert [depth for _, depth in tree.preorder()][-1] == 16
    assert len(tree.leaves()) == 2
    assert {e.role for e in loaded.entries} == {"user", "assistant"}
    assert len(loaded.branch_view()) == 17
    # (the last line is decoded on load: it is the one a crash can tear)
    assert not any(e.is_decoded for e in loaded.entries[:-1])
    assert tree.child_entries("00000001") == (loaded.entries[1],)  # no list for one child
    assert [e.id for e in tree.child_entries("00000010")] == ["00000011", "00000029"]
    assert tree.children_map["00000010"] == tree.children("00000010")
    # each entry keeps its line as read (bytes), once: no decoded copy beside it
    raw = (tmp_path / "s.jsonl").read_bytes().split(b"\n")
    assert [e.raw for e in loaded.entries] == raw[1:-1]
