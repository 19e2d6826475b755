from __future__ import annotations

import pytest

from pi_context.session import Entry, make_entry
from pi_context.session.entries import UNREADABLE
from pi_context.session.problems import ProblemLog


def test_make_entry_key_order_and_omission() -> None:
    e = make_entry("label", "aaaaaaaa", None, {"targetId": "b", "label": None}, timestamp="t")
    assert list(e.data) == ["type", "id", "parentId", "timestamp", "targetId"]
    assert (
        e.raw == b'{"type":"label","id":"aaaaaaaa","parentId":null,"timestamp":"t","targetId":"b"}'
    )


def test_make_entry_explicit_null_and_leading_keys() -> None:
    e = make_entry("context_edit", "a", "p", {"targetId": "x", "replacement": ...}, timestamp="t")
    assert e.data["replacement"] is None
    c = make_entry("custom", "a", None, {"customType": "k", "data": {"v": 1}}, timestamp="t")
    assert list(c.data) == ["type", "customType", "data", "id", "parentId", "timestamp"]


def test_entry_round_trips_raw_bytes_exactly() -> None:
    raw = b'{"type":"x","id":"a","parentId":null,"n":1.50,"big":123456789012345678901234567890}'
    e = Entry("x", "a", None, raw=raw)
    assert e.data["big"] == 1.2345678901234568e29  # a double, as JavaScript reads it
    assert e.raw == raw  # decoding does not replace the original bytes


def test_an_unreadable_line_becomes_an_inert_entry_and_is_logged_once() -> None:
    log = ProblemLog("s.jsonl")
    e = Entry("compaction", "a", None, raw=b"[1,2]", line=7, log=log)
    assert e.data == {"type": UNREADABLE, "id": "a", "parentId": None}
    assert e.type == UNREADABLE
    assert not e.readable
    _ = e.peek()
    assert [str(p) for p in log.problems] == [
        "s.jsonl:7: compaction entry a: not a JSON object: skipped"
    ]
    assert log.problems[0].error == "line 7: not a JSON object: skipped"
    with pytest.raises(ValueError, match="raw line or its data"):
        Entry("x", "a", None)


def test_entry_copy_is_independent() -> None:
    entry = make_entry("message", "a", None, {"message": {"role": "user", "content": "q"}})
    copied = entry.copy()
    assert (copied.type, copied.id, copied.role, copied.data) == (
        "message",
        "a",
        "user",
        entry.data,
    )
    copied.data["message"]["content"] = "changed"
    assert entry.data["message"]["content"] == "q"
    assert entry.raw == copied.raw  # the copy decodes from the line, which stays the entry's
