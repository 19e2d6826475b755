"""The column index of the inspection commands: what it holds, what it reads back, and which
files it leaves to the full loader."""

from __future__ import annotations

import gc
import json
import os
import types
from array import array
from pathlib import Path

import pytest

from pi_context.errors import SessionError
from pi_context.session import Entry, Session
from pi_context.session._index.file_index import ColumnIndex, IndexedPath, stream_indexed_context
from pi_context.session.projection import stream_context
from tests.session.conftest import DATA
from tests.session.helpers import message_line

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.jsonl"


def _open(path: Path) -> ColumnIndex:
    index = ColumnIndex.open(path)
    assert index is not None
    return index


def _reachable(root: object) -> list[object]:
    """Objects reachable from ``root``, not following into modules, classes or functions."""
    seen: set[int] = set()
    out: list[object] = []
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(
            item, type | types.ModuleType | types.FunctionType | types.BuiltinFunctionType
        ):
            continue
        seen.add(id(item))
        out.append(item)
        stack.extend(gc.get_referents(item))
    return out


def _write(path: Path, entries: list[dict[str, object]], version: int = 3) -> Path:
    header = {"type": "session", "version": version, "id": "s1", "timestamp": "t", "cwd": "/"}
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *entries]))
    return path


def test_the_index_holds_no_line_text(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "s.jsonl",
        [
            message_line(f"e{i:07d}", None if i == 0 else f"e{i - 1:07d}", f"secret{i}")
            for i in range(50)
        ],
    )
    with _open(path) as index:
        assert len(index) == 50
        for column in (index.offsets, index.lengths, index.line_numbers, index.parents):
            assert isinstance(column, array)
            assert len(column) == 50
        assert isinstance(index.type_codes, bytearray)
        assert len(index.type_codes) == 50
        held = _reachable(index)
        assert not [o for o in held if isinstance(o, bytes | bytearray) and b"secret" in o]
        assert not [o for o in held if isinstance(o, str) and "secret" in o]
        assert not [o for o in held if isinstance(o, Entry)]
        # but every entry reads back from the file
        assert index.entry(49).get("message")["content"][0]["text"] == "secret49"


def test_entries_read_back_as_the_session_has_them() -> None:
    session = Session.open(EXAMPLE)
    with _open(EXAMPLE) as index:
        assert len(index) == len(session.entries)
        for position, entry in enumerate(session.entries):
            again = index.entry(position)
            assert (again.id, again.parent_id, again.type, again.line) == (
                entry.id,
                entry.parent_id,
                entry.type,
                entry.line,
            )
            assert again.data == entry.data
            assert index.type_of(position) == entry.type
        assert index.labels == session.labels
        assert index.name == session.name
        assert index.leaf_count() == len(session.leaves())


def test_children_and_paths_match_the_tree() -> None:
    path = DATA / "branched.jsonl"
    session = Session.open(path)
    with _open(path) as index:
        starts, kids = index.children()
        for position, entry in enumerate(session.entries):
            mine = [index.entry(k).id for k in kids[starts[position] : starts[position + 1]]]
            assert mine == [c.id for c in session.children(entry.id)]
        assert [index.entry(r).id for r in index.roots()] == [r.id for r in session.roots()]
        for entry in session.entries:
            positions = index.path(index.positions[entry.id])
            assert [index.entry(p).id for p in positions] == [
                e.id for e in session.branch_entries(entry.id)
            ]


def test_the_context_streams_as_the_loaded_session() -> None:
    for path in (EXAMPLE, DATA / "compaction_multi.jsonl", DATA / "context_edits.jsonl"):
        session = Session.open(path)
        with _open(path) as index:
            positions = index.path(index.leaf)
            mine = [(e.id, m) for e, m in stream_indexed_context(index, positions)]
            theirs = [(e.id, m) for e, m in stream_context(session.branch_view())]
            assert mine == theirs
            view = IndexedPath(index, positions)
            assert [e.id for e in view[-3:]] == [e.id for e in session.branch_view()[-3:]]


def _cases(tmp_path: Path) -> dict[str, Path]:
    a, b = message_line("a", None, "x"), message_line("b", "a", "y")
    cases = {
        "duplicate id": _write(tmp_path / "dup.jsonl", [a, b, message_line("a", "b", "z")]),
        "parent later": _write(tmp_path / "later.jsonl", [message_line("b", "a", "y"), a]),
        "parent missing": _write(tmp_path / "missing.jsonl", [a, message_line("c", "zz", "y")]),
        "legacy": _write(tmp_path / "legacy.jsonl", [a, b], version=2),
        "wrong type": _write(
            tmp_path / "typed.jsonl", [a, {**b, "message": {"role": "assistant", "content": 5}}]
        ),
        "no header": _write(tmp_path / "nohead.jsonl", []),
    }
    cases["no header"].write_text(json.dumps(a) + "\n")
    torn = _write(tmp_path / "torn.jsonl", [a, b])
    with torn.open("a") as out:
        out.write('{"type":"message","id":"c","parentId":"b","timest')
    cases["torn"] = torn
    cases["empty"] = tmp_path / "empty.jsonl"
    cases["empty"].write_bytes(b"")
    cases["absent"] = tmp_path / "absent.jsonl"
    cases["directory"] = tmp_path
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    cases["fifo"] = fifo
    return cases


def test_unusual_files_go_to_the_full_loader(tmp_path: Path) -> None:
    for name, path in _cases(tmp_path).items():
        assert ColumnIndex.open(path) is None, name


def test_self_parent_is_a_root(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "self.jsonl", [message_line("a", "a", "x"), message_line("b", "a", "y")]
    )
    with _open(path) as index:
        assert list(index.parents) == [-1, 0]
        assert index.roots() == [0]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_line_endings(tmp_path: Path, ending: bytes) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None, "x"), message_line("b", "a", "y")])
    data = path.read_bytes().replace(b"\n", b"\r\n" if ending == b"\r\n" else b"\n")
    if not ending:
        data = data.rstrip(b"\n")
    path.write_bytes(b"\n  \n" + data)
    with _open(path) as index:
        assert [index.entry(p).id for p in range(len(index))] == ["a", "b"]
        assert list(index.line_numbers) == [4, 5]


def test_a_rewritten_file_is_reported_with_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None, "x"), message_line("b", "a", "y")])
    with _open(path) as index:
        path.write_text("")  # the same inode, emptied
        with pytest.raises(SessionError, match=r"s\.jsonl:3: the file changed"):
            index.entry(1)


def test_a_later_version_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [message_line("a", None, "x")], version=4)
    with _open(path) as index:
        assert index.version == 4


def test_lines_across_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pi_context.session._index.build.CHUNK_SIZE", 7)
    entries = [
        message_line(f"e{i}", None if i == 0 else f"e{i - 1}", "t" * (i * 5)) for i in range(9)
    ]
    path = _write(tmp_path / "s.jsonl", entries)
    with _open(path) as index:
        assert [index.entry(p).get("message")["content"][0]["text"] for p in range(9)] == [
            "t" * (i * 5) for i in range(9)
        ]
        assert list(index.line_numbers) == list(range(2, 11))
