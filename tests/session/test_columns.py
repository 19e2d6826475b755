"""The entries of an opened session live as columns; objects are made on access."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context.session import Entry, Session
from pi_context.session._load import columns
from pi_context.session._load.columns import EntryColumns
from pi_context.session._load.scan import scan_lines
from pi_context.session.entries import UNREADABLE
from pi_context.testing import FixedClock, SequentialIds
from tests.jsonview import as_json
from tests.session.helpers import assistant, user


def _write(path: Path, messages: int) -> Path:
    s = Session.create(path, cwd="/", ids=SequentialIds(), clock=FixedClock())
    for n in range(messages):
        s.append_message(user(f"question {n}") if n % 2 == 0 else assistant(f"answer {n}"))
    s.close()
    return path


class _Made:
    """Counts entry objects made from the columns and entries decoded."""

    def __init__(self) -> None:
        self.made = 0
        self.decoded = 0

    def __enter__(self) -> _Made:
        scanned = Entry.scanned.__func__  # type: ignore[attr-defined]
        decode = Entry._decode

        def counted_scanned(cls: type[Entry], /, *args: object, **kwargs: object) -> Entry:
            self.made += 1
            return scanned(cls, *args, **kwargs)  # type: ignore[no-any-return]

        def counted_decode(entry: Entry) -> object:
            self.decoded += 1
            return decode(entry)

        self._patches: list[Any] = [
            mock.patch.object(Entry, "scanned", classmethod(counted_scanned)),
            mock.patch.object(Entry, "_decode", counted_decode),
        ]
        for patch in self._patches:
            patch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for patch in self._patches:
            patch.stop()


def test_open_and_projection_do_not_make_an_object_per_entry(tmp_path: Path) -> None:
    """What keeps ``Session.open`` + ``projection()`` of a million small entries under twice
    the file: no entry object per line at open, and the projection counts the messages of the
    entries beyond the newest few without decoding or keeping them."""
    path = _write(tmp_path / "s.jsonl", 300)
    with mock.patch("pi_context.session._live.KEEP_ITEMS", 10), _Made() as count:
        s = Session.open(path)
        assert count.made == 0
        assert count.decoded == 0
        projection = s.projection()
        assert len(projection.messages) == 300
        assert count.decoded <= 12  # the newest 10 context entries, and the last one's model
        assert count.made <= 12
        assert as_json(projection.messages[0])["content"] == [
            {"type": "text", "text": "question 0"}
        ]
        assert as_json(projection.messages[-1])["content"][0]["text"] == "answer 299"


def test_every_message_reads_the_same_as_from_a_full_walk(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", 120)
    expected = list(Session.open(path).messages())
    with mock.patch("pi_context.session._live.KEEP_ITEMS", 7):
        s = Session.open(path)
        stored = s.stored_projection()
        assert list(stored.messages) == expected
        assert [stored.messages[i] for i in range(-1, -121, -1)] == expected[::-1]
        assert stored.messages[5:60:7] == expected[5:60:7]
        assert stored.messages[50:] == expected[50:]
        assert [p.entry.id for p in stored.entries] == [e.id for e in s.branch_entries()]


def test_an_entry_object_is_one_while_held_and_made_again_when_dropped(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", 40)
    with mock.patch.object(columns, "RECENT_ENTRIES", 2):
        s = Session.open(path)
    held = s.entries[3]
    for entry in s.entries:  # more entries made than the recent ones kept
        _ = entry.data
    gc.collect()
    assert s.entries[3] is held
    assert s.get(held.id) is held
    assert s.tree.parent_of(s.entries[4]) is held
    made = s.entries[30]
    _ = made.data
    assert made.is_decoded
    del made
    _ = (s.entries[0], s.entries[1])  # the newest objects kept are these now
    gc.collect()
    again = s.entries[30]
    assert not again.is_decoded  # the object was dropped with what it decoded
    assert again.id == "0000001f"


def test_a_line_found_unreadable_stays_unreadable_for_the_next_object(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", 4)
    lines = path.read_bytes().split(b"\n")
    torn = lines[2][:-3] + b'x"}'  # the head still scans; the rest is not JSON
    lines[2] = torn
    path.write_bytes(b"\n".join(lines))
    with mock.patch.object(columns, "RECENT_ENTRIES", 1):
        s = Session.open(path)
    entry = s.entries[1]
    assert entry.type == "message"
    assert not entry.readable
    del entry
    for other in s.entries:  # push it out of the recent objects
        _ = other.id
    gc.collect()
    again = s.entries[1]
    assert again.type == UNREADABLE
    assert again.raw == torn
    texts = [as_json(m)["content"][0]["text"] for m in s.messages()]
    assert texts == ["question 0", "question 2", "answer 3"]
    assert [p.line for p in s.problems] == [3]


def test_lines_read_back_byte_for_byte(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", 6)
    lines = path.read_bytes().split(b"\n")[1:-1]
    s = Session.open(path)
    assert isinstance(s.entries, EntryColumns)
    assert [s.entries.line(p) for p in range(len(s.entries))] == lines
    assert [e.raw for e in s.entries] == lines


def test_a_session_given_another_sessions_entries_copies_them(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", 4)
    s = Session.open(path)
    other = Session(dict(s.header), s.entries)
    other.append_message(user("only here"))
    assert len(other) == 5
    assert len(s) == 4


@pytest.mark.parametrize("names", [300])
def test_more_type_names_than_the_codes_hold_are_kept_as_objects(
    tmp_path: Path, names: int
) -> None:
    path = tmp_path / "s.jsonl"
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'
    lines = [header]
    parent = b"null"
    for n in range(names):
        entry_id = b"%08x" % n
        lines.append(
            b'{"type":"kind%s","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:00.000Z"}'
            % (b"abcdefghijklmnopqrstuvwxyz"[n % 26 : n % 26 + 1] * (1 + n // 26), entry_id, parent)
        )
        parent = b'"%s"' % entry_id
    path.write_bytes(b"\n".join(lines) + b"\n")
    s = Session.open(path)
    assert len({e.type for e in s.entries}) == names
    assert [e.raw for e in s.entries] == lines[1:]
    assert len(s.branch_entries()) == names


_PLAIN = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters='"\\'), max_size=12
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["message", "label", "custom_thing"]),
            st.sampled_from(["user", "assistant", "toolResult", None]),
            _PLAIN,  # id
            _PLAIN,  # timestamp
            st.sampled_from([b"}", b',"content":"x"}', b',"a":[1,{"b":null}]}']),
        ),
        max_size=8,
    )
)
def test_every_scanned_line_reads_back_byte_for_byte(
    rows: list[tuple[str, str | None, str, str, bytes]],
) -> None:
    """Whatever part of a line the columns keep, the line read back is the line written."""
    header = b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}'
    lines = []
    parent = b"null"
    for kind, role, entry_id, timestamp, rest in rows:
        line = b'{"type":"%s","id":"%s","parentId":%s,"timestamp":"%s"' % (
            kind.encode(),
            entry_id.encode(),
            parent,
            timestamp.encode(),
        )
        if role is not None:
            line += b',"message":{"role":"%s"' % role.encode()
            rest += b"}"
        lines.append(line + rest)
        parent = b'"%s"' % entry_id.encode()
    scan = scan_lines(b"\n".join([header, *lines]) + b"\n")
    entries = scan.entries
    assert [entries.line(p) for p in range(len(entries))] == lines
    assert [e.raw for e in entries] == lines
