"""The search index is a cache of the file: caught up on append, rebuilt when stale."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from pi_context import _json
from pi_context.messages import user_message
from pi_context.session import SearchIndex, Session
from pi_context.session.search.index import index_path_for
from pi_context.session.search.query import search
from pi_context.testing import FixedClock, SequentialIds


def _session(path: Path) -> Session:
    return Session.create(path, cwd="/work", ids=SequentialIds(), clock=FixedClock())


def _ids(index: SearchIndex, query: str) -> list[str]:
    return [h.id for h in search(index, query, all_branches=True)]


def _fresh(path: Path, cache: Path) -> SearchIndex:
    index = SearchIndex.for_file(path, cache)
    index.refresh()
    return index


def test_appends_are_indexed_incrementally(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    first = s.append_message(user_message("the heron nests by the lake")).id
    assert [h.id for h in s.search("heron", cache_dir=cache)] == [first]
    index = s.search_index(cache)
    assert index.rebuilds == 1
    second = s.append_message(user_message("a second heron")).id
    assert {h.id for h in s.search("heron", cache_dir=cache)} == {first, second}
    assert index.rebuilds == 1  # caught up, not rebuilt
    # another process opening the cache reads nothing again
    other = _fresh(path, cache)
    assert other.rebuilds == 0
    assert set(_ids(other, "heron")) == {first, second}
    assert index_path_for(path, cache).exists()


def test_lines_another_writer_appended_are_picked_up(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("ibis one"))
    reader = _fresh(path, cache)
    writer = _fresh(path, cache)
    late = s.append_message(user_message("ibis two")).id
    writer.refresh()  # indexes the new line into the shared cache
    reader.refresh()  # finds more rows than it knew and reloads them
    assert late in _ids(reader, "ibis")
    assert (reader.rebuilds, writer.rebuilds) == (1, 0)  # built once, by the first


def test_truncated_file_is_stale(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("kestrel one"))
    size = path.stat().st_size
    s.append_message(user_message("kestrel two"))
    s.close()
    index = _fresh(path, cache)
    assert len(_ids(index, "kestrel")) == 2
    with path.open("r+b") as f:
        f.truncate(size)
    index.refresh()
    assert index.rebuilds == 2  # built, then found stale and built again
    assert len(_ids(index, "kestrel")) == 1


def test_rewritten_file_with_same_header_and_length_is_stale(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("plover alpha"))
    s.close()
    index = _fresh(path, cache)
    assert _ids(index, "plover")
    data = path.read_bytes()
    path.write_bytes(data.replace(b"plover alpha", b"osprey gamma"))  # same length
    index.refresh()
    assert index.rebuilds == 2
    assert _ids(index, "plover") == []
    assert _ids(index, "osprey")


def test_another_session_at_the_same_path_is_stale(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("grebe"))
    s.close()
    _fresh(path, cache).close()
    path.unlink()
    t = Session.create(path, cwd="/other", ids=SequentialIds(), clock=FixedClock())
    t.append_message(user_message("grebe"))
    t.append_message(user_message("curlew"))
    t.close()
    index = _fresh(path, cache)
    assert index.rebuilds == 1
    assert _ids(index, "curlew")


def test_damaged_or_foreign_cache_is_rebuilt(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("avocet"))
    s.close()
    _fresh(path, cache).close()
    database = index_path_for(path, cache)
    database.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(database) + suffix).unlink(missing_ok=True)
    index = _fresh(path, cache)
    assert index.rebuilds == 1
    assert _ids(index, "avocet")
    index.close()
    # an index written by another version of the schema is not trusted
    with sqlite3.connect(database) as db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'schema'")
    again = _fresh(path, cache)
    assert again.rebuilds == 1
    assert _ids(again, "avocet")


def test_torn_last_line_waits_until_finished(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("dunlin"))
    s.close()
    line = _json.dumps(
        {
            "type": "message",
            "id": "feedbeef",
            "parentId": "00000001",
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": user_message("sanderling", timestamp=1),
        }
    )
    with path.open("ab") as f:
        f.write(line[:20])
    index = _fresh(path, cache)
    assert _ids(index, "sanderling") == []
    with path.open("ab") as f:
        f.write(line[20:] + b"\n")
    index.refresh()
    assert _ids(index, "sanderling") == ["feedbeef"]
    assert index.rebuilds == 1


def test_unreadable_lines_are_skipped(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("godwit"))
    s.close()
    with path.open("ab") as f:
        f.write(b"{not json godwit\n[1,2]\n\n")
    index = _fresh(path, cache)
    assert _ids(index, "godwit") == ["00000001"]


def test_empty_and_headerless_files_index_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert _ids(_fresh(empty, cache), "x") == []
    partial = tmp_path / "p.jsonl"
    partial.write_bytes(b'{"type":"session"')
    assert _ids(_fresh(partial, cache), "session") == []


def test_legacy_file_is_indexed_from_its_migrated_entries(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    header = {"type": "session", "id": "legacy-1", "timestamp": "2025-01-01T00:00:00.000Z"}
    message: dict[str, Any] = {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z"}
    message["message"] = user_message("turnstone in a v1 file", timestamp=1)
    path.write_bytes(_json.dumps(header) + b"\n" + _json.dumps(message) + b"\n")
    s = Session.open(path)
    assert s.is_legacy
    hits = s.search("turnstone", cache_dir=tmp_path / "cache")
    assert [h.id for h in hits] == [s.entries[0].id]
    assert s.search_index().file is None  # ids exist only in this process: not cached


def test_a_change_the_fingerprint_misses_is_caught_when_the_hit_is_read(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    for n in range(300):
        s.append_message(user_message(f"filler entry number {n} " + "pad " * 40))
    target = s.append_message(user_message("the petrel was here " + "pad " * 40)).id
    for n in range(300):
        s.append_message(user_message(f"more filler {n} " + "pad " * 40))
    s.close()
    index = _fresh(path, cache)
    data = path.read_bytes()
    at = data.index(b"petrel")
    path.write_bytes(data[:at] + b"condor" + data[at + 6 :])
    index.refresh()
    # whichever check notices (the fingerprint's samples, or the hit's line read back), the
    # answer is the file's, never the stale index's
    assert search(index, "petrel") == []
    assert index.rebuilds == 2
    assert [h.id for h in search(index, "condor")] == [target]


def test_a_line_read_back_that_differs_rebuilds(tmp_path: Path) -> None:
    path, cache = tmp_path / "s.jsonl", tmp_path / "cache"
    s = _session(path)
    s.append_message(user_message("the petrel was here"))
    s.close()
    index = _fresh(path, cache)
    data = path.read_bytes()
    path.write_bytes(data.replace(b"petrel", b"condor"))
    # skip the file check, as if the fingerprint had missed the change
    assert [h.snippet for h in search(index, "petrel")] == []
    assert index.rebuilds == 2
