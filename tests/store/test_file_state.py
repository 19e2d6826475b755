"""The file store's appends keep what they know of each file (store/_file_state): they read only
what another writer added since, and decide and write exactly as a read of the whole file
would (the oracle here: `plan_append` and `append_lines` over the file's bytes)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pi_context.errors import PiContextError
from pi_context.store import FileStore, SessionRef, open_store
from pi_context.store import _file_state as file_state
from pi_context.store._file_state import KnownFiles
from pi_context.store.base import (
    ANY_LEAF,
    AppendResult,
    FileLines,
    _AnyLeaf,
    append_lines,
    plan_append,
    prepare_entries,
)
from tests.store.helpers import CONFORMANCE_SESSIONS, message

SESSIONS = CONFORMANCE_SESSIONS


def _pi_line(entry_id: str, parent: str | None, text: str) -> bytes:
    """A line as pi appends it (JSON.stringify, then a newline), bypassing every lock."""
    return json.dumps(message(entry_id, parent, "user", text), separators=(",", ":")).encode()


def _expected(
    ref: SessionRef, data: bytes, batch: list[dict[str, Any]], if_leaf: str | _AnyLeaf | None
) -> tuple[AppendResult | str, bytes]:
    """What an append decides and the file's bytes after it, read from the whole file."""
    prepared = prepare_entries(batch)
    try:
        done = plan_append(ref, data, prepared, if_leaf)
    except PiContextError as exc:
        return f"{type(exc).__name__}: {exc}", data
    if done is not None:
        return done, data
    before = len(FileLines.of(data, str(ref)).lines)
    seqs = tuple(range(before + 1, before + len(batch) + 1))
    return AppendResult(prepared[-1].id, seqs), append_lines(data, [e.line for e in prepared])


async def _append_as_expected(
    store: FileStore,
    ref: SessionRef,
    path: Path,
    batch: list[dict[str, Any]],
    if_leaf: str | _AnyLeaf | None = ANY_LEAF,
) -> AppendResult | str:
    want, after = _expected(ref, path.read_bytes(), batch, if_leaf)
    try:
        got: AppendResult | str = await store.append(ref, batch, if_leaf=if_leaf)
    except PiContextError as exc:
        got = f"{type(exc).__name__}: {exc}"
    assert got == want
    assert path.read_bytes() == after
    return got


def _leaf(path: Path) -> str | None:
    scan = FileLines.of(path.read_bytes(), str(path)).scan
    return scan.entries[-1].id if len(scan.entries) else None


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The byte ranges the file store reads from now on."""
    seen: list[tuple[int, int]] = []
    real = file_state._read

    def counted(fd: int, start: int, end: int) -> bytes:
        seen.append((start, end))
        return real(fd, start, end)

    monkeypatch.setattr(file_state, "_read", counted)
    return seen


async def _new(tmp_path: Path, name: str = "s") -> tuple[FileStore, SessionRef, Path]:
    store = await open_store(tmp_path / "files")
    assert isinstance(store, FileStore)
    ref = await store.create(cwd="/w", session_id=name)
    return store, ref, tmp_path / "files" / f"{name}.jsonl"


async def test_an_append_to_an_unchanged_file_reads_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, ref, path = await _new(tmp_path)
    await store.append(ref, [message("u0", None, "user", "first")])
    reads = _reads(monkeypatch)
    leaf = "u0"
    for n in range(1, 40):
        got = await _append_as_expected(
            store, ref, path, [message(f"u{n}", leaf, "user", f"turn {n}")], if_leaf=leaf
        )
        assert isinstance(got, AppendResult)
        assert got.seqs == (n + 1,)
        leaf = f"u{n}"
    assert reads == []


async def test_another_process_appending_between_two_appends_is_read_and_no_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pi appends its own lines to the file without any lock; the store's next append sees
    # them (its leaf, its ids, its seqs) and reads only the bytes pi added
    store, ref, path = await _new(tmp_path)
    await store.append(ref, [message("u1", None, "user", "first")])
    size = path.stat().st_size
    line = _pi_line("pi-1", "u1", "written by pi")
    payload = line + b"\n"
    code = f"import os; fd = os.open({str(path)!r}, os.O_WRONLY | os.O_APPEND); "
    code += f"os.write(fd, {payload!r}); os.close(fd)"
    subprocess.run([sys.executable, "-c", code], check=True)
    reads = _reads(monkeypatch)
    moved = await _append_as_expected(
        store, ref, path, [message("a1", "u1", "assistant", "x")], if_leaf="u1"
    )
    assert isinstance(moved, str)
    assert moved.startswith("LeafMovedError")
    assert reads == [(size, size + len(line) + 1)]
    got = await _append_as_expected(
        store, ref, path, [message("a1", "pi-1", "assistant", "x")], if_leaf="pi-1"
    )
    assert got == AppendResult("a1", (3,))
    # a retry of pi's line by id is recognised as stored, at pi's seq
    retry = await store.append(ref, [json.loads(line)])
    assert retry == AppendResult("pi-1", (2,))
    # (and its stored line alone is read, to compare it with the retried one)
    assert reads == [(size, size + len(line) + 1), (size, size + len(line))]


async def test_a_torn_last_line_is_read_again_until_a_newline_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, ref, path = await _new(tmp_path)
    await store.append(ref, [message("u1", None, "user", "first")])
    whole = _pi_line("pi-2", "u1", "half written")
    with path.open("ab") as out:
        out.write(whole[:30])  # a writer died mid-line
    await _append_as_expected(store, ref, path, [message("a1", "u1", "a", "x")], if_leaf="u1")
    # the torn line got its " \n", the batch came after it: skipped by the reader, counted
    data = path.read_bytes()
    assert whole[:30] + b" \n" in data
    assert _leaf(path) == "a1"
    reads = _reads(monkeypatch)  # what the store wrote is known: nothing to read
    await _append_as_expected(store, ref, path, [message("u2", "a1", "user", "y")], "a1")
    assert reads == []
    # a torn line that another writer finishes later (an unterminated but whole JSON line)
    with path.open("ab") as out:
        out.write(_pi_line("pi-3", "a1", "no newline yet")[:20])
    with path.open("ab") as out:
        out.write(_pi_line("pi-3", "a1", "no newline yet")[20:])
    # a retry of that line's entry is answered from it (nothing written)
    retry = await _append_as_expected(
        store, ref, path, [json.loads(_pi_line("pi-3", "a1", "no newline yet"))]
    )
    assert retry == AppendResult("pi-3", (5,))
    got = await _append_as_expected(
        store, ref, path, [message("a2", "pi-3", "assistant", "y")], if_leaf="pi-3"
    )
    assert isinstance(got, AppendResult)
    assert _leaf(path) == "a2"
    # the line finished by the store's own newline is an entry of the session from now on
    got = await _append_as_expected(store, ref, path, [message("b1", "pi-3", "user", "z")])
    assert got == AppendResult("b1", (7,))


async def test_a_retry_of_an_id_stored_twice_is_answered_with_its_last_line(
    tmp_path: Path,
) -> None:
    store, ref, path = await _new(tmp_path)
    first = message("u1", None, "user", "first")
    await store.append(ref, [first])
    await store.append(ref, [message("a1", "u1", "assistant", "x")])
    with path.open("ab") as out:  # another writer repeats the first line
        out.write(_pi_line("u1", None, "first") + b"\n")
    got = await _append_as_expected(store, ref, path, [first])
    assert got == AppendResult("u1", (3,))


async def test_a_replaced_or_shrunk_file_is_read_whole_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, ref, path = await _new(tmp_path)
    await store.append(ref, [message("u1", None, "user", "first")])
    early = path.read_bytes()
    await store.append(ref, [message("a1", "u1", "assistant", "second")])
    reads = _reads(monkeypatch)
    # replaced by another file (a rename over it): other inode, same start
    other = path.with_name("other.tmp")
    other.write_bytes(early + _pi_line("x1", "u1", "elsewhere") + b"\n")
    os.replace(other, path)
    await _append_as_expected(store, ref, path, [message("a2", "a1", "assistant", "y")], "a1")
    await _append_as_expected(store, ref, path, [message("a2", "x1", "assistant", "y")], "x1")
    assert reads[0][0] == 0
    # shrunk in place (same inode): back to the early bytes
    reads.clear()
    with path.open("r+b") as out:
        out.truncate(len(early))
    await _append_as_expected(store, ref, path, [message("a3", "u1", "assistant", "z")], "u1")
    assert reads[0] == (0, len(early))
    # rewritten in place (same inode) and grown, its last known line changed: read whole
    reads.clear()
    data = path.read_bytes()
    with path.open("r+b") as out:
        out.write(data[:-3] + b"Z" + data[-2:])
        out.write(_pi_line("pi-4", "a3", "after") + b"\n")
    await _append_as_expected(store, ref, path, [message("c1", "a3", "user", "w")], "pi-4")
    assert reads[0][0] == 0
    # rewritten in place and grown, its header changed (pi migrating a file rewrites it)
    reads.clear()
    data = path.read_bytes()
    with path.open("r+b") as out:
        out.write(data.replace(b'"cwd":"/w"', b'"cwd":"/v"', 1))
        out.write(_pi_line("pi-5", "c1", "after") + b"\n")
    await _append_as_expected(store, ref, path, [message("c2", "pi-5", "user", "w")], "c1")
    await _append_as_expected(store, ref, path, [message("c2", "pi-5", "user", "w")], "pi-5")
    assert reads[0][0] == 0
    assert b'"cwd":"/v"' in path.read_bytes()


async def test_a_file_rewritten_in_place_at_the_same_size_is_read_whole_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, ref, path = await _new(tmp_path)
    await store.append(ref, [message("u1", None, "user", "first")])
    await store.append(ref, [message("a1", "u1", "assistant", "reply")])
    await store.append(ref, [message("u2", "a1", "user", "third " * 100)])
    reads = _reads(monkeypatch)
    # an earlier line's id changed; the header and the last line (longer than the bytes
    # checked before the known end) kept; not a byte longer
    data = path.read_bytes()
    changed = data.replace(b'"id":"a1"', b'"id":"b1"', 1)
    assert len(changed) == len(data)
    assert data[-300:] == changed[-300:]
    stat = os.stat(path)
    with path.open("r+b") as out:
        out.write(changed)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    # a retry of a1 is no longer a retry: a1 is not stored any more
    await _append_as_expected(store, ref, path, [message("a1", "u1", "assistant", "reply")])
    assert reads[0][0] == 0


async def test_two_stores_on_one_directory_see_each_others_appends(tmp_path: Path) -> None:
    first, ref, path = await _new(tmp_path)
    second = await open_store(tmp_path / "files")
    assert isinstance(second, FileStore)
    leaf: str | None = None
    for n in range(12):
        store = first if n % 3 else second
        got = await _append_as_expected(
            store, ref, path, [message(f"m{n}", leaf, "user", f"t{n}")], if_leaf=leaf
        )
        assert isinstance(got, AppendResult)
        assert got.seqs == (n + 1,)
        stale = await _append_as_expected(
            second if store is first else first,
            ref,
            path,
            [message(f"z{n}", leaf, "user", "late")],
            if_leaf=leaf,
        )
        assert isinstance(stale, str)
        assert stale.startswith("LeafMovedError")
        leaf = f"m{n}"
    for store in (first, second):
        page = await store.list_sessions()
        assert [(s.entries, s.leaf_id) for s in page.sessions] == [(12, "m11")]


async def test_a_listing_is_the_files_own_after_another_writer_appends(tmp_path: Path) -> None:
    store, ref, path = await _new(tmp_path)
    await store.append(ref, [message("u1", None, "user", "first")])
    assert [(s.entries, s.leaf_id) for s in (await store.list_sessions()).sessions] == [(1, "u1")]
    with path.open("ab") as out:
        out.write(_pi_line("pi-1", "u1", "by pi") + b"\n\n")
    rows = (await store.list_sessions()).sessions
    assert [(s.entries, s.leaf_id) for s in rows] == [(3, "pi-1")]
    assert rows[0].updated == path.stat().st_mtime


def test_the_least_recently_used_files_are_let_go_past_the_lines_kept(tmp_path: Path) -> None:
    from array import array

    files = KnownFiles(max_lines=10)

    def known(lines: int) -> file_state.KnownFile:
        return file_state.KnownFile(
            dev=0,
            ino=0,
            size=0,
            mtime_ns=0,
            head=b"",
            check=b"",
            version=3,
            starts=array("q", range(lines)),  # a line's offset each
            ids={},
            leaf_if_last=None,
            leaf_if_more=None,
        )

    files.put("a", known(4))
    files.put("b", known(4))
    assert files.take("a") is not None  # taken out: no longer counted
    files.put("a", known(4))
    files.put("c", known(4))  # 12 lines: the least recently put ("b") goes
    assert files.take("b") is None
    assert files.take("a") is not None
    assert files.take("c") is not None
    files.put("big", known(50))  # alone past the bound: kept
    assert files.take("big") is not None


def _random_ops(rng: random.Random) -> list[Callable[[Path], None]]:
    """Writes by others than the store: pi's lines, blank and damaged lines, torn tails."""

    def append(data: bytes) -> Callable[[Path], None]:
        def run(path: Path) -> None:
            with path.open("ab") as out:
                out.write(data)

        return run

    n = rng.randrange(1_000_000)
    leaf = rng.choice(["m0", "m1", "nope", None])
    line = _pi_line(f"pi-{n}", leaf, f"pi {n}")
    return [
        append(line + b"\n"),
        append(line[: rng.randrange(1, len(line))]),  # torn
        append(line),  # whole, no newline
        append(b"\n"),
        append(b"   \n"),
        append(b"not json\n"),
        append(b'{"type":"label","id":"fake","parentId":null,"timestamp":"t"} trailing}\n'),
        append(b'{"type":"label","id":"dup","parentId":null,"timestamp":"t","id":"dup2"}\n'),
    ]


@pytest.mark.parametrize("seed", range(6))
async def test_random_appends_and_writes_by_others_decide_as_a_whole_read_does(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    store, ref, path = await _new(tmp_path, f"r{seed}")
    other = await open_store(tmp_path / "files")
    assert isinstance(other, FileStore)
    batches: list[list[dict[str, Any]]] = []
    for step in range(120):
        roll = rng.random()
        if roll < 0.25:
            rng.choice(_random_ops(rng))(path)
            continue
        writer = other if roll < 0.35 else store
        leaf = _leaf(path)
        if batches and rng.random() < 0.15:
            batch = rng.choice(batches)  # a retry (or a reused id, if the leaf moved)
        else:
            parent = rng.choice([leaf, leaf, "m0", "missing", None])
            batch = [
                message(f"m{step}-{k}", parent if k == 0 else f"m{step}-{k - 1}", "user", "t")
                for k in range(rng.randint(1, 3))
            ]
            if rng.random() < 0.1:
                batch[0] = message("m0", parent, "user", f"other content {step}")
        batches.append(batch)
        if_leaf = rng.choice([ANY_LEAF, leaf, leaf, "m0", None])
        await _append_as_expected(writer, ref, path, batch, if_leaf)


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
async def test_appends_to_every_conformance_session_decide_as_a_whole_read_does(
    tmp_path: Path, path: Path
) -> None:
    store = await open_store(tmp_path / "files")
    assert isinstance(store, FileStore)
    try:
        ref = await store.import_jsonl(path)
    except PiContextError:
        return  # not a session a store keeps (no header): the conformance suite covers it
    stored = tmp_path / "files" / f"{ref.id}.jsonl"
    rng = random.Random(path.name)
    for step in range(6):
        leaf = _leaf(stored)
        if step == 3:
            rng.choice(_random_ops(rng))(stored)
        batch = [message(f"x{step}", leaf, "user", "t")]
        await _append_as_expected(store, ref, stored, batch, rng.choice([ANY_LEAF, leaf]))
