from __future__ import annotations

import contextlib
import gc
import io
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_context import _json
from pi_context.errors import PiContextError, SessionFormatError
from pi_context.session import Session
from pi_context.session._load.scan import (
    ScanResult,
    SplitBytes,
    migrate_entries,
    scan_file,
    scan_lines,
)
from pi_context.testing import FixedClock, SequentialIds
from tests.session.conftest import DATA
from tests.session.helpers import assistant, user

HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}'


def test_fast_scan_agrees_with_full_decode() -> None:
    for path in DATA.glob("*.jsonl"):
        data = path.read_bytes()
        try:
            scan = scan_lines(data)
        except SessionFormatError:
            continue
        for entry in scan.entries:
            full = _json.loads(entry.raw)
            assert entry.type == full["type"], path.name
            assert entry.id == full.get("id", ""), path.name
            parent = full.get("parentId")
            assert entry.parent_id == (parent if isinstance(parent, str) else None)
            if entry.role is not None:
                assert entry.role == full["message"]["role"]


def test_small_lines_keep_their_bytes_without_holding_their_head_twice() -> None:
    """A small line's head (type, id, parent, role) is spelled again from the entry's fields,
    so the session keeps only the rest; every line still reads back byte for byte, and a line that
    turns out unreadable keeps its bytes."""
    small = b'{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}'
    other = (
        b'{"type":"label","id":"b2","parentId":"a1","timestamp":"t","targetId":"a1","label":"x"}'
    )
    wide = '{"type":"message","id":"\u00e9","parentId":"b2","timestamp":"t","message":{"role":"user","content":"w","timestamp":1}}'.encode()
    large = (
        b'{"type":"message","id":"c3","parentId":"\xc3\xa9","timestamp":"t","message":{"role":"user",'
        b'"content":"' + b"x" * 5000 + b'","timestamp":1}}'
    )
    torn = b'{"type":"message","id":"d4","parentId":"c3","timestamp":"t","message":{"role":"user","content":"cut}'
    lines = [HEADER, small, other, wide, large, torn, small.replace(b"a1", b"e5")]
    scan = scan_lines(b"\n".join(lines) + b"\n")
    entries = scan.entries
    assert [e.raw for e in entries] == lines[1:]
    # what the columns keep of each line (private: the property under test)
    starts = entries._starts
    held = [bytes(entries._buffer[starts[i] : starts[i + 1]]) for i in range(len(entries))]
    assert held[0] == b't","content":"hi","timestamp":1}}'  # timestamp and what follows the role
    assert held[1] == b't","targetId":"a1","label":"x"}'
    assert held[2] == wide  # a non-ASCII id: kept whole
    assert held[3] == large  # a large line: kept whole
    assert not any(e.is_decoded for e in entries[:-1])
    assert entries[0].data["message"]["content"] == "hi"
    assert not entries[4].readable  # the torn line, found on decoding
    assert entries[4].type == "unreadable"
    assert entries[4].raw == torn
    for entry in entries:
        entry.forget()
    assert [e.raw for e in entries] == lines[1:]
    assert [e.id for e in entries] == ["a1", "b2", "\u00e9", "c3", "d4", "e5"]


def test_blank_malformed_crlf_and_separators() -> None:
    lines = [
        HEADER,
        b"",
        b"   \t",
        b"\xef\xbb\xbf",  # U+FEFF alone: blank for JavaScript's trim()
        b"{broken",
        b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user","content":"a\xe2\x80\xa8b","timestamp":1}}\r',
    ]
    scan = scan_lines(b"\n".join(lines) + b"\n")
    assert scan.blank_lines == 3
    assert scan.malformed_lines == 1
    assert [p.line for p in scan.problems] == [5]
    assert len(scan.entries) == 1
    assert scan.entries[0].data["message"]["content"] == "a\u2028b"
    assert scan.entries[0].raw.endswith(b"}\r")


def test_bom_header_is_malformed_for_loader_but_not_parse() -> None:
    data = (DATA / "tiny_bom_header.jsonl").read_bytes()
    with pytest.raises(SessionFormatError):
        scan_lines(data)
    assert scan_lines(data, strip_bom=True).header is not None


def test_lines_before_header_are_skipped() -> None:
    scan = scan_lines((DATA / "tiny_malformed_then_header.jsonl").read_bytes())
    assert scan.header is not None
    assert scan.header_line == 2


def test_v1_migration_assigns_linear_ids_and_first_kept() -> None:
    scan = scan_lines((DATA / "legacy_v1.jsonl").read_bytes())
    assert scan.version == 1
    assert scan.header is not None
    header, entries = migrate_entries(scan.header, scan.entries, SequentialIds())
    assert header["version"] == 3
    assert list(header)[-1] == "version"
    assert [e.id for e in entries] == [f"{i:08x}" for i in range(1, len(entries) + 1)]
    assert all(e.parent_id == (entries[i - 1].id if i else None) for i, e in enumerate(entries))
    compactions = [e for e in entries if e.type == "compaction"]
    assert compactions[0].data["firstKeptEntryId"] == entries[8].id  # index 9 incl. header
    assert "firstKeptEntryId" not in compactions[1].data  # index 0 pointed at the header
    assert all("firstKeptEntryIndex" not in c.data for c in compactions)
    assert (
        "firstKeptEntryIndex"
        in scan.entries[[e.type for e in scan.entries].index("compaction")].data
    )


# -- properties -------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_load_or_raise_our_error(data: bytes) -> None:
    try:
        scan = scan_lines(data)
    except PiContextError:
        return
    for entry in scan.entries:
        with contextlib.suppress(PiContextError):
            _ = entry.data


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                HEADER,
                b"",
                b"{",
                b"null",
                b"[]",
                b'{"type":"x","id":"a","parentId":null,"timestamp":"t"}',
                b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user"}}',
                b"\xff\xfe",
                b'{"type":"session","id":"s2"}',
            ]
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_line_soup_loads_with_problems_or_raises(lines: list[bytes], newline: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if newline else b"")
    error: SessionFormatError | None = None
    try:
        scan = scan_lines(data)
    except SessionFormatError as exc:
        error = exc
    if error is not None:
        assert error.line is not None
        return
    for entry in scan.entries:
        assert isinstance(entry.data, dict)


TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant", "custom", "custom_message", "info"]),
            TEXT,
            JSONISH,
        ),
        min_size=1,
        max_size=8,
    )
)
def test_appended_entries_reload_identically(
    tmp_path_factory: pytest.TempPathFactory, items: list[tuple[str, str, object]]
) -> None:
    path: Path = tmp_path_factory.mktemp("prop") / "s.jsonl"
    s = Session.create(path, cwd="/", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("start"))
    for kind, text, value in items:
        if kind == "user":
            s.append_message(user(text))
        elif kind == "assistant":
            s.append_message(assistant(text))
        elif kind == "custom":
            s.append_custom(text or "t", value)
        elif kind == "custom_message":
            s.append_custom_message(text or "t", text, details=value)
        else:
            s.append_session_info(text)
    again = Session.open(path)
    assert again.problems == []
    assert [e.data for e in again.entries] == [e.data for e in s.entries]
    assert [e.raw for e in again.entries] == [e.raw for e in s.entries]
    assert again.projection().messages == s.projection().messages


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                HEADER,
                b"",
                b"{",
                b'{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"role":"user"}}',
                b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":null}}',
                b'{"type":"compaction","id":"c","parentId":"b","timestamp":"t","firstKeptEntryId":"a"}',
                b'{"type":"context_edit","id":"d","parentId":"c","timestamp":"t","targetId":"a","replacement":7}',
                b"\x80garbage",
            ]
        ),
        max_size=10,
    ),
    st.binary(max_size=40),
)
def test_open_and_project_arbitrary_files(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], tail: bytes
) -> None:
    path: Path = tmp_path_factory.mktemp("open") / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + tail)
    before = path.read_bytes()
    try:
        s = Session.open(path, lock_timeout=0)
        for entry in s.entries:
            s.projection(entry.id)
        s.projection()
        for entry in s.entries:
            s.branch_entries(entry.id)
    except PiContextError:
        pass
    assert path.read_bytes() == before


# -- reading a file in chunks ---------------------------------------------------------------------


def _scan_summary(scan: ScanResult) -> tuple[object, ...]:
    entries = [(e.type, e.id, e.parent_id, e.role, e.raw, e.line) for e in scan.entries]
    return (
        scan.header,
        scan.header_line,
        entries,
        scan.problems,
        scan.blank_lines,
        scan.malformed_lines,
        scan.trailing_newline,
        scan.newlines,
        scan.torn_tail,
        scan.size,
        scan.unterminated_bytes,
    )


def _scan_or_error(scan: Callable[[], ScanResult]) -> tuple[object, ...]:
    try:
        return _scan_summary(scan())
    except SessionFormatError as exc:
        return ("error", str(exc), exc.line)


LONG_LINE = (
    b'{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"user",'
    b'"content":"' + b"x\xe2\x80\xa8" * 40 + b'"}}'
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                HEADER,
                b"",
                b"  ",
                b"{",
                b"\r",
                b'{"type":"x","id":"a","parentId":null,"timestamp":"t"}',
                b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user"}}\r',
                b'{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user"',
                LONG_LINE,
                b'{"type":"session","id":"s2"}',
            ]
        ),
        max_size=10,
    ),
    st.sampled_from([b"", b"\n", b"\r\n", b'{"type":"x","id":"z"', b"{}"]),
    st.sampled_from([1, 2, 3, 7, 64, 1 << 20]),
)
def test_scan_file_in_chunks_and_split_bytes_equal_scanning_the_bytes(
    lines: list[bytes], tail: bytes, chunk_size: int
) -> None:
    data = b"\n".join(lines) + tail
    whole = _scan_or_error(lambda: scan_lines(data, path="f"))
    chunked = _scan_or_error(lambda: scan_file(io.BytesIO(data), path="f", chunk_size=chunk_size))
    assert chunked == whole
    # the same bytes held as their lines (as a store reads them) scan the same
    split = SplitBytes(data.split(b"\n"))
    assert (len(split), split.join()) == (len(data), data)
    assert _scan_or_error(lambda: scan_lines(split, path="f")) == whole
    bom = b"\xef\xbb\xbf" + data
    assert _scan_or_error(
        lambda: scan_lines(SplitBytes(bom.split(b"\n")), path="f", strip_bom=True)
    ) == _scan_or_error(lambda: scan_lines(bom, path="f", strip_bom=True))


def test_scanning_split_bytes_reads_the_lines_as_the_joined_bytes() -> None:
    entry = b'{"type":"x","id":"a","parentId":null,"timestamp":"t"}'
    torn = b'{"type":"x","id":"b","par'
    scan = scan_lines(SplitBytes([b"", HEADER, entry, torn]))
    size = 3 + len(HEADER) + len(entry) + len(torn)
    assert (scan.size, scan.newlines, scan.trailing_newline) == (size, 3, False)
    assert (scan.header_line, scan.blank_lines) == (2, 1)
    assert scan.torn_tail
    assert scan.unterminated_bytes == len(torn)
    assert [e.raw for e in scan.entries] == [entry]
    empty = scan_lines(SplitBytes([]))
    assert (empty.size, empty.header, empty.trailing_newline) == (0, None, True)


def test_scan_file_counts_bytes_and_the_unterminated_tail() -> None:
    entry = b'{"type":"x","id":"a","parentId":null,"timestamp":"t"}'
    torn = b'{"type":"x","id":"b","par'
    data = HEADER + b"\n" + entry + b"\n" + torn
    scan = scan_file(io.BytesIO(data), chunk_size=5)
    assert (scan.size, scan.newlines, scan.trailing_newline) == (len(data), 2, False)
    assert scan.torn_tail
    assert scan.unterminated_bytes == len(torn)
    assert [str(p) for p in scan.problems] == [
        "line 3: incomplete last line (torn write?): skipped"
    ]
    assert scan.problems[0].error == "line 3 (the last) is incomplete (torn write?)"
    ended = scan_file(io.BytesIO(data + b"}\n"), chunk_size=5)
    assert (ended.trailing_newline, ended.unterminated_bytes, ended.newlines) == (True, 0, 3)
    assert not ended.torn_tail
    empty = scan_file(io.BytesIO(b""))
    assert (empty.size, empty.newlines, empty.header, empty.trailing_newline) == (0, 0, None, True)


def test_open_peak_memory_stays_under_one_and_a_half_times_the_file(tmp_path: Path) -> None:
    """The whole-file buffer never coexists with every line (it was ~2.1x the file size)."""
    path = tmp_path / "big.jsonl"
    body = b"y" * 1500
    lines = [HEADER]
    parent = b"null"
    for n in range(10_000):
        entry_id = b'"%08x"' % n
        lines.append(
            b'{"type":"message","id":%s,"parentId":%s,"timestamp":"t","message":{"role":"user",'
            b'"content":"%s %d"}}' % (entry_id, parent, body, n)
        )
        parent = entry_id
    path.write_bytes(b"\n".join(lines) + b"\n")
    del lines
    size = path.stat().st_size
    gc.collect()
    tracemalloc.start()
    try:
        session = Session.open(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(session.entries) == 10_000
    assert session.problems == []
    assert peak < 1.5 * size, peak / size
