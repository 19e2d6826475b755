from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pi_context.errors import SessionError, SessionFormatError, SessionLockedError, TreeError
from pi_context.session import Session
from pi_context.session._file.writer import SessionFile
from pi_context.session._load import scan
from pi_context.testing import FixedClock, SequentialIds
from tests.session.conftest import DATA
from tests.session.helpers import assistant, tool_result, user

MakeSession = Callable[..., Session]


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_bytes().decode().split("\n") if line]


def test_lazy_creation_writes_header_and_entries_with_first_message(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    s = make_session_file()
    s.append_model_change("anthropic", "claude-x")
    s.append_thinking_level_change("high")
    assert not (tmp_path / "s.jsonl").exists()
    s.append_message(user("hi"))
    rows = lines(tmp_path / "s.jsonl")
    assert [r["type"] for r in rows] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
    ]
    assert list(rows[0]) == ["type", "version", "id", "timestamp", "cwd"]
    assert rows[0]["version"] == 3


def test_written_file_is_what_pi_expects(make_session_file: MakeSession, tmp_path: Path) -> None:
    s = make_session_file()
    s.append_message(user("hi"))
    s.append_message(assistant("hello"))
    s.append_label(s.leaf_id or "", None)
    data = (tmp_path / "s.jsonl").read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    assert data.endswith(b"\n")
    rows = lines(tmp_path / "s.jsonl")
    ids = [r["id"] for r in rows[1:]]
    assert all(re.fullmatch(r"[0-9a-f]{8}", str(i)) for i in ids)
    assert len(set(ids)) == len(ids)
    for row in rows[1:]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(row["timestamp"]))
        assert list(row)[:4] == ["type", "id", "parentId", "timestamp"]
    assert "label" not in rows[-1]  # cleared label omits the key
    assert isinstance(rows[1]["message"]["timestamp"], int)  # type: ignore[index]


def test_create_never_clobbers(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("keep me\n")
    with pytest.raises(SessionError, match="already exists"):
        Session.create(path, cwd="/")
    assert path.read_text() == "keep me\n"


def test_lazy_create_refuses_file_that_appeared(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    s = make_session_file()
    (tmp_path / "s.jsonl").write_text("other\n")
    with pytest.raises(SessionError, match="already exists"):
        s.append_message(user("hi"))
    assert (tmp_path / "s.jsonl").read_text() == "other\n"


def test_reopen_reproduces_entries_byte_for_byte(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    s = make_session_file()
    s.append_message(user("hé 😀 \u2028 line"))
    s.append_message(assistant("x", calls=[("read", {"path": "a.py", "n": 1.5})]))
    s.append_message(tool_result("contents"))
    s.append_custom("ext", {"k": [1, 2]})
    s.append_custom_message("note", "visible", display=False, details={"d": 1})
    s.append_usage("cache_warm", "anthropic", "claude-x", {"input": 1}, note="warm")
    reopened = Session.open(tmp_path / "s.jsonl")
    assert [e.raw for e in reopened.entries] == [e.raw for e in s.entries]
    assert [e.data for e in reopened.entries] == [e.data for e in s.entries]
    assert reopened.leaf_id == s.leaf_id
    assert reopened.projection().messages == s.projection().messages


def test_custom_entries_use_pis_key_order(make_session_file: MakeSession, tmp_path: Path) -> None:
    s = make_session_file()
    s.append_message(user("hi"))
    s.append_custom("ext", {"a": 1})
    s.append_custom_message("note", "text")
    rows = lines(tmp_path / "s.jsonl")
    assert list(rows[-2]) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert list(rows[-1])[:4] == ["type", "customType", "content", "display"]


def test_open_never_modifies_files(tmp_path: Path) -> None:
    for source in DATA.glob("*.jsonl"):
        copy = tmp_path / source.name
        shutil.copy(source, copy)
        before = copy.read_bytes()
        with contextlib.suppress(SessionFormatError):
            Session.open(copy).close()
        assert copy.read_bytes() == before, source.name


def test_unknown_entries_and_fields_survive_append(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = (
        b'{"type":"session","version":3,"id":"x","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}\n'
        b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",'
        b'"message":{"role":"user","content":"hi","timestamp":1,"future":1e-07},"extra":{"z":1,"a":2}}\n'
        b'{"type":"hologram","id":"bbbbbbbb","parentId":"aaaaaaaa","payload":[1.0,2]}\n'
    )
    path.write_bytes(original)
    s = Session.open(path, ids=SequentialIds(), clock=FixedClock())
    assert s.leaf_id == "bbbbbbbb"
    s.append_message(user("more"))
    data = path.read_bytes()
    assert data.startswith(original)
    assert json.loads(data.split(b"\n")[3])["parentId"] == "bbbbbbbb"


@pytest.mark.parametrize("chunk_size", [None, 3, 50])
def test_torn_tail_is_reported_skipped_and_next_append_starts_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_size: int | None
) -> None:
    if chunk_size is not None:
        monkeypatch.setattr(scan, "_CHUNK_SIZE", chunk_size)
    path = tmp_path / "s.jsonl"
    s = Session.create(path, cwd="/", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("one"))
    s.append_message(assistant("two"))
    s.close()
    full = path.read_bytes()
    path.write_bytes(full + b'{"type":"message","id":"00000099","parentId":"00000002","times')
    reopened = Session.open(path, ids=SequentialIds(50), clock=FixedClock())
    assert len(reopened.entries) == 2
    assert len(reopened.problems) == 1
    problem = reopened.problems[0]
    assert problem.line == 4
    assert problem.path == str(path)
    assert "torn" in problem.reason
    reopened.append_message(user("three"))
    text = path.read_bytes().split(b"\n")
    assert text[3].endswith(b'"times ')
    assert json.loads(text[4])["message"]["content"][0]["text"] == "three"
    again = Session.open(path)
    assert [e.id for e in again.entries][-1] == reopened.leaf_id
    assert [p.line for p in again.problems] == [4]  # still skipped, no longer last


def test_unterminated_valid_last_line_loads_and_append_adds_newline(tmp_path: Path) -> None:
    src = (DATA / "tiny_header_no_newline.jsonl").read_bytes()
    path = tmp_path / "s.jsonl"
    path.write_bytes(src)
    s = Session.open(path, ids=SequentialIds(), clock=FixedClock())
    assert s.problems == []
    s.append_message(user("hi"))
    data = path.read_bytes()
    assert data.startswith(src + b" \n")
    assert data.count(b"\n") == 2


def test_empty_file_opens_and_gets_header_with_first_message(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    s = Session.open(path, cwd="/proj", ids=SequentialIds(), clock=FixedClock())
    assert path.read_bytes() == b""
    s.append_message(user("hi"))
    rows = lines(path)
    assert rows[0]["type"] == "session"
    assert rows[0]["cwd"] == "/proj"
    assert rows[1]["type"] == "message"


@pytest.mark.parametrize(
    "name", ["tiny_no_header", "tiny_bom_header", "tiny_whitespace", "tiny_header_without_id"]
)
def test_invalid_files_raise_format_error_naming_file(name: str) -> None:
    path = DATA / f"{name}.jsonl"
    with pytest.raises(SessionFormatError) as info:
        Session.open(path)
    assert str(path) in str(info.value)
    assert info.value.line is not None


def test_legacy_file_is_migrated_atomically_on_first_append(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    shutil.copy(DATA / "legacy_v1.jsonl", path)
    before = path.read_bytes()
    s = Session.open(path, ids=SequentialIds(), clock=FixedClock())
    assert path.read_bytes() == before
    assert s.header["version"] == 3
    previous = [e.data for e in s.entries]
    s.append_message(user("after migration"))
    rows = lines(path)
    assert rows[0]["version"] == 3
    assert rows[1:-1] == previous
    assert rows[-1]["parentId"] == previous[-1]["id"]
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    again = Session.open(path)
    assert again.header["version"] == 3
    assert [e.data for e in again.entries][:-1] == previous
    # later appends are plain appends
    written = path.read_bytes()
    s.append_message(assistant("ok"))
    assert path.read_bytes().startswith(written)
    assert len(lines(path)) == len(rows) + 1


def test_legacy_v2_hook_messages_become_custom(tmp_path: Path) -> None:
    s = Session.open(DATA / "legacy_v2.jsonl")
    roles = [e.message["role"] for e in s.entries if e.message is not None]
    assert "hookMessage" not in roles
    assert "custom" in roles


def test_second_writer_waits_or_fails_on_lock(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    s = make_session_file()
    s.append_message(user("hi"))
    path = tmp_path / "s.jsonl"
    other = Session.open(path, lock_timeout=0)
    holder = SessionFile(path)
    with holder.locked(None):
        with pytest.raises(SessionLockedError) as info:
            other.append_message(assistant("blocked"))
        assert str(path) in str(info.value)
    holder.close()
    other.append_message(assistant("now"))
    assert lines(path)[-1]["message"]["content"][0]["text"] == "now"  # type: ignore[index]


def test_foreign_appends_are_merged_before_writing(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    a = make_session_file()
    a.append_message(user("hi"))
    b = Session.open(path, ids=SequentialIds(100), clock=FixedClock())
    b.append_message(assistant("from b"))
    mine = a.append_message(assistant("from a"))
    assert b.leaf_id in {e.id for e in a.entries}
    assert a.get(b.leaf_id or "") is not None
    reread = Session.open(path)
    assert [e.id for e in reread.entries] == [e.id for e in a.entries]
    assert reread.leaf_id == mine.id
    assert reread.children(a.entries[0].id) == [reread.get(b.leaf_id or ""), reread.get(mine.id)]


def test_in_memory_session_writes_nothing(tmp_path: Path) -> None:
    s = Session.in_memory("/x", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("hi"))
    assert s.file_path is None
    assert list(tmp_path.iterdir()) == []
    assert len(s.entries) == 1


def test_append_validation_errors(make_session_file: MakeSession) -> None:
    s = make_session_file()
    u = s.append_message(user("hi"))
    with pytest.raises(TreeError):
        s.append_label("nope", "x")
    with pytest.raises(TreeError):
        s.append_compaction("sum", "nope", 10)
    with pytest.raises(SessionError):
        s.append_message({"role": "compactionSummary", "summary": "x"})
    custom = s.append_custom("ext")
    with pytest.raises(TreeError, match="must be"):
        s.append_context_edit(custom.id, None)
    s.move_leaf(None)
    other = s.append_message(user("new root"))
    assert other.parent_id is None
    with pytest.raises(TreeError, match="not on the current branch"):
        s.append_context_edit(u.id, None)


def test_compaction_and_context_edit_fields(make_session_file: MakeSession, tmp_path: Path) -> None:
    s = make_session_file()
    u = s.append_message(user("hi"))
    a = s.append_message(assistant("long answer"))
    edit = s.append_context_edit(a.id, {"content": "short"})
    assert edit.data["replacement"] == {"content": [{"type": "text", "text": "short"}]}
    omit = s.append_context_edit(u.id, None)
    assert "replacement" in omit.data
    assert omit.data["replacement"] is None
    c = s.append_compaction("summary", None, 123, details={"readFiles": [], "modifiedFiles": []})
    assert c.data["firstKeptEntryId"] == c.id
    assert c.data["fromHook"] is False
    assert list(c.data) == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "fromHook",
    ]
    assert [m["role"] for m in s.projection().messages] == ["compactionSummary"]


def test_branch_summary_moves_leaf_first(make_session_file: MakeSession) -> None:
    s = make_session_file()
    u = s.append_message(user("hi"))
    a = s.append_message(assistant("a"))
    bs = s.append_branch_summary(a.id, "tried a", parent_id=u.id)
    assert bs.parent_id == u.id
    assert bs.data["fromId"] == a.id
    root = s.append_branch_summary(None, "from nothing", parent_id=None)
    assert root.parent_id is None
    assert root.data["fromId"] == "root"


def test_session_info_name_is_normalized(make_session_file: MakeSession) -> None:
    s = make_session_file()
    s.append_session_info("  my\r\n\nsession  ")
    assert s.name == "my session"
    s.append_session_info("")
    assert s.name is None


def test_fork_copies_path_without_labels(make_session_file: MakeSession, tmp_path: Path) -> None:
    s = make_session_file()
    u = s.append_message(user("hi"))
    s.append_label(u.id, "start")
    a = s.append_message(assistant("a"))
    s.append_message(user("abandoned"))
    forked = s.fork(tmp_path / "fork.jsonl", a.id)
    rows = lines(tmp_path / "fork.jsonl")
    assert rows[0]["parentSession"] == str(tmp_path / "s.jsonl")
    assert [r["type"] for r in rows[1:]] == ["message", "message", "label"]
    assert rows[2]["parentId"] == u.id  # re-chained around the dropped label
    assert rows[3]["targetId"] == u.id
    assert forked.label_of(u.id) == "start"
    assert forked.leaf_id == rows[3]["id"]
    # unchanged entries keep their bytes
    assert forked.get(u.id).raw == s.get(u.id).raw  # type: ignore[union-attr]


def test_close_and_context_manager(make_session_file: MakeSession) -> None:
    with make_session_file() as s:
        s.append_message(user("hi"))
    with pytest.raises(SessionError, match="closed"):
        s.append_message(user("late"))


def test_missing_file_is_a_session_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="no such session file"):
        Session.open(tmp_path / "missing.jsonl")


def _with_bad_second_line(path: Path) -> Path:
    """A session file whose line 2 only looks like an entry (it is not valid JSON)."""
    header = b'{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}\n'
    bad = b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"user",,}\n'
    good = b'{"type":"label","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"t","targetId":"aaaaaaaa"}\n'
    path.write_bytes(header + bad + good)
    return path


def test_lazy_decode_error_names_file_and_line(tmp_path: Path) -> None:
    path = _with_bad_second_line(tmp_path / "s.jsonl")
    s = Session.open(path)
    entry = s.get("aaaaaaaa")
    assert entry is not None
    assert s.problems == []
    assert entry.data["type"] == "unreadable"  # dropped from the context, as pi drops the line
    assert [str(p) for p in s.problems] == [
        f"{path}:2: message entry aaaaaaaa: not valid JSON (torn write?): skipped, as pi does"
    ]


def test_file_permissions_and_no_tmp_left(make_session_file: MakeSession, tmp_path: Path) -> None:
    s = make_session_file()
    s.append_message(user("hi"))
    assert os.access(tmp_path / "s.jsonl", os.R_OK)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_v2_rewrite_keeps_unchanged_lines_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    shutil.copy(DATA / "legacy_v2.jsonl", path)
    original = path.read_bytes().split(b"\n")
    s = Session.open(path, ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("after"))
    rewritten = path.read_bytes().split(b"\n")
    assert json.loads(rewritten[0])["version"] == 3
    changed = [
        i for i, (a, b) in enumerate(zip(original[1:-1], rewritten[1:], strict=False)) if a != b
    ]
    assert len(changed) == 1  # only the hookMessage line
    assert b'"role":"custom"' in rewritten[1 + changed[0]]


@pytest.mark.parametrize("chunk_size", [None, 1, 7, 64])
def test_torn_line_finished_by_another_writer_is_reread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_size: int | None
) -> None:
    """Also with the file read in chunks smaller than a line (size and torn-line offsets)."""
    if chunk_size is not None:
        monkeypatch.setattr(scan, "_CHUNK_SIZE", chunk_size)
    path = tmp_path / "s.jsonl"
    s = Session.create(path, cwd="/", ids=SequentialIds(), clock=FixedClock())
    s.append_message(user("one"))
    s.close()
    complete = (
        b'{"type":"custom","customType":"x","id":"0000000a","parentId":"00000001","timestamp":"t"}'
    )
    path.write_bytes(path.read_bytes() + complete[:20])
    reader = Session.open(path, ids=SequentialIds(100), clock=FixedClock())
    assert [p.line for p in reader.problems] == [3]
    other = Session.open(path, ids=SequentialIds(200), clock=FixedClock())
    other.append_message(user("two"))  # finishes the torn line, then appends
    reader.append_message(user("three"))
    assert [p.line for p in reader.problems] == [3]
    assert [e.id for e in reader.entries] == [e.id for e in Session.open(path).entries]
    assert len(reader.entries) == 3


def test_check_finds_lazily_trusted_bad_lines(tmp_path: Path) -> None:
    path = _with_bad_second_line(tmp_path / "s.jsonl")
    s = Session.open(path)
    assert s.problems == []
    assert [(p.line, p.path) for p in s.check()] == [(2, str(path))]


def test_fork_redirects_first_kept_from_dropped_label(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    s = make_session_file()
    u = s.append_message(user("hi"))
    label = s.append_label(u.id, "mark")
    a = s.append_message(assistant("a"))
    c = s.append_compaction("sum", label.id, 10)
    forked = s.fork(tmp_path / "f.jsonl")
    copied = forked.get(c.id)
    assert copied is not None
    assert copied.data["firstKeptEntryId"] == a.id
    assert label.id not in {e.id for e in forked.entries}
    assert [m["role"] for m in forked.projection().messages] == ["compactionSummary", "assistant"]


def test_fork_in_memory_and_without_conversation(
    make_session_file: MakeSession, tmp_path: Path
) -> None:
    s = make_session_file()
    s.append_model_change("p", "m")
    forked = s.fork(tmp_path / "f.jsonl")
    assert not (tmp_path / "f.jsonl").exists()  # lazy: nothing to converse about yet
    forked.append_message(user("now"))
    assert (tmp_path / "f.jsonl").exists()
    memory = s.fork(None)
    assert memory.file_path is None
    assert "parentSession" in memory.header


def test_legacy_rewrite_forgets_the_old_torn_tail(tmp_path: Path) -> None:
    """After the v3 rewrite, lines another process appends are read from the new file's end."""
    path = tmp_path / "legacy.jsonl"
    path.write_bytes((DATA / "legacy_v1.jsonl").read_bytes() + b'{"type":"message","id":"to')
    s = Session.open(path, ids=SequentialIds(), clock=FixedClock())
    assert [p.line for p in s.problems] == [
        (DATA / "legacy_v1.jsonl").read_bytes().count(b"\n") + 1
    ]
    s.append_message(user("rewritten"))  # rewrites as v3 without the torn line
    other = Session.open(path, ids=SequentialIds(500), clock=FixedClock())
    assert other.problems == []
    foreign = other.append_message(assistant("from another process"))
    mine = s.append_message(user("mine"))
    assert s.get(foreign.id) is not None
    assert [e.id for e in Session.open(path).entries] == [e.id for e in s.entries]
    assert s.entries[-2:] == [s.get(foreign.id), mine]


def test_create_with_id_and_timestamp_names_the_header(tmp_path: Path) -> None:
    s = Session.create(
        tmp_path / "s.jsonl",
        cwd="/w",
        session_id="0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee",
        timestamp="2026-01-02T03:04:05.678Z",
        ids=SequentialIds(),
        clock=FixedClock(),
    )
    s.append_message(user("hi"))
    header = lines(tmp_path / "s.jsonl")[0]
    assert header["id"] == "0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"
    assert header["timestamp"] == "2026-01-02T03:04:05.678Z"
    s.fork(tmp_path / "f.jsonl", session_id="fork-1", timestamp="2026-02-03T00:00:00.000Z").close()
    forked_header = lines(tmp_path / "f.jsonl")[0]
    assert (forked_header["id"], forked_header["timestamp"]) == (
        "fork-1",
        "2026-02-03T00:00:00.000Z",
    )
    assert forked_header["parentSession"] == str(tmp_path / "s.jsonl")
    with pytest.raises(SessionError, match="timestamp"):
        Session.create(None, cwd="/w", timestamp="yesterday")
    with pytest.raises(SessionError, match="session id"):
        Session.create(None, cwd="/w", session_id="../escape")


def test_branch_view_is_the_branch_without_copying(make_session_file: MakeSession) -> None:
    s = make_session_file()
    first = s.append_message(user("one"))
    s.append_message(assistant("two"))
    view = s.branch_view()
    assert list(view) == s.branch_entries()
    assert view[-1] is s.leaf
    assert view[0:1] == [first]
    assert list(reversed(view)) == s.branch_entries()[::-1]
    assert first in view
    with pytest.raises(IndexError):
        _ = view[2]
    # later appends and leaf moves leave a taken view as it was
    before = list(view)
    s.append_message(user("three"))
    s.move_leaf(first.id)
    s.append_message(assistant("elsewhere"))
    assert list(view) == before
    assert len(view) == 2
    assert [e.id for e in s.branch_view(before[-1].id)] == [e.id for e in before]
    with pytest.raises(TreeError):
        s.branch_view("nope")


def test_on_branch_follows_appends_and_leaf_moves(make_session_file: MakeSession) -> None:
    s = make_session_file()
    first = s.append_message(user("one"))
    second = s.append_message(assistant("two"))
    assert s.on_branch(first.id)
    assert s.on_branch(second.id)
    assert not s.on_branch("nope")
    s.move_leaf(first.id)
    sibling = s.append_message(user("other"))
    assert s.on_branch(sibling.id)
    assert s.on_branch(first.id)
    assert not s.on_branch(second.id)
    assert [e.id for e in s.branch_view()] == [first.id, sibling.id]


def test_new_session_ids_are_uuid_v7_of_the_current_millisecond() -> None:
    """pi's session ids: UUIDv7 (48 bits of Unix milliseconds, version 7, RFC 4122 variant,
    random bits after), so that ids sort by creation time."""
    import time
    import uuid

    from pi_context.session import new_session_id

    before = time.time_ns() // 1_000_000
    ids = [new_session_id() for _ in range(200)]
    after = time.time_ns() // 1_000_000
    assert len(set(ids)) == len(ids)
    for text in ids:
        assert re.fullmatch(
            r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", text
        )
        value = uuid.UUID(text)
        assert value.version == 7
        assert value.variant == uuid.RFC_4122
        assert before <= value.int >> 80 <= after
    # the 74 random bits differ between ids of the same millisecond
    assert len({uuid.UUID(text).int & ((1 << 62) - 1) for text in ids}) == len(ids)


def test_new_entry_ids_are_8_hex_digits() -> None:
    from pi_context.session import new_entry_id

    ids = [new_entry_id() for _ in range(200)]
    assert all(re.fullmatch(r"[0-9a-f]{8}", text) for text in ids)
    assert len(set(ids)) > 190
