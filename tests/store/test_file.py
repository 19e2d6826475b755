"""What only the file store has: a batch reaches its pi file in one write."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_context.session import Session
from pi_context.session._file import writer
from pi_context.store import FileStore, open_store
from tests.store.helpers import message


async def test_a_batch_is_one_write_with_the_bytes_a_session_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(tmp_path / "files")
    assert isinstance(store, FileStore)
    ref = await store.create(cwd="/w", session_id="one-write")
    await store.append(ref, [message("u1", None, "user", "first")])
    writes: list[bytes] = []
    real = writer.SessionFile.append

    def counted(self: writer.SessionFile, data: bytes) -> int:
        writes.append(data)
        return real(self, data)

    monkeypatch.setattr(writer.SessionFile, "append", counted)
    batch = [
        message("a1", "u1", "assistant", "second"),
        message("u2", "a1", "user", "third"),
        message("a2", "u2", "assistant", "fourth"),
    ]
    result = await store.append(ref, batch, if_leaf="u1")
    assert result.seqs == (2, 3, 4)
    assert len(writes) == 1
    assert writes[0].count(b"\n") == 3
    # the same bytes the session package writes entry by entry
    mirror = tmp_path / "mirror.jsonl"
    mirror.write_bytes((tmp_path / "files" / "one-write.jsonl").read_bytes())
    assert (tmp_path / "files" / "one-write.jsonl").read_bytes().endswith(writes[0])
    data = (tmp_path / "files" / "one-write.jsonl").read_bytes()
    with Session.open(mirror) as session:
        assert [e.id for e in session.entries] == ["u1", "a1", "u2", "a2"]
        assert session.problems == []
    memory = await open_store("memory:")
    again = await memory.import_bytes(data[: len(data) - len(writes[0])])
    await memory.append(again, batch, if_leaf="u1")
    assert await memory.export_bytes(again) == data


async def test_a_write_failing_after_the_first_cannot_leave_half_a_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(tmp_path / "files")
    ref = await store.create(cwd="/w", session_id="crash")
    await store.append(ref, [message("u1", None, "user", "first")])
    real = writer.SessionFile.append
    calls: list[int] = []

    def dies_on_the_second_write(self: writer.SessionFile, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError("the process died here")
        return real(self, data)

    monkeypatch.setattr(writer.SessionFile, "append", dies_on_the_second_write)
    batch = [message("a1", "u1", "assistant", "x"), message("u2", "a1", "user", "y")]
    await store.append(ref, batch)  # one write: the batch is whole before any second write
    monkeypatch.undo()
    ids = [e["id"] for e in (await store.load(ref)).entries]
    assert ids == ["u1", "a1", "u2"]


async def test_a_temporary_file_left_by_a_crash_does_not_block_creating_the_session(
    tmp_path: Path,
) -> None:
    # A process that died between writing an import's temporary file and linking it leaves
    # the temporary behind; a later process may get the same pid (a container's worker
    # usually does): the session must still be creatable, and the leftover left alone.
    import os

    store = await open_store(tmp_path / "files")
    root = tmp_path / "files"
    root.mkdir(parents=True, exist_ok=True)
    stale = root / f".left.jsonl.{os.getpid()}.tmp"
    stale.write_bytes(b"half of an earlier import")
    ref = await store.create(cwd="/w", session_id="left")
    assert (await store.load(ref)).header["id"] == "left"
    assert stale.read_bytes() == b"half of an earlier import"


async def test_two_creates_of_one_id_at_once_in_one_process_are_one_session_and_a_store_error(
    tmp_path: Path,
) -> None:
    # Two requests of one new conversation in one worker: the one that loses gets the store's
    # typed error (never a bare OSError), and the one stored file is whole.
    import asyncio

    from pi_context.errors import StoreError
    from pi_context.store.binding import StoreBinding

    store = await open_store(tmp_path / "files")
    outcomes = await asyncio.gather(
        *(
            StoreBinding.create(
                store, cwd=f"/w{n}", session_id="same", timestamp=f"2026-01-0{n}T00:00:00.000Z"
            )
            for n in range(1, 9)
        ),
        return_exceptions=True,
    )
    won = [o for o in outcomes if isinstance(o, StoreBinding)]
    lost = [o for o in outcomes if not isinstance(o, StoreBinding)]
    assert len(won) == 1
    assert all(isinstance(o, StoreError) for o in lost), lost
    stored = await store.load(won[0].ref)
    assert stored.header["cwd"] == won[0].session.header["cwd"]
    assert list((tmp_path / "files").glob(".*.tmp")) == []


async def test_the_same_bytes_imported_twice_at_once_are_one_session_and_no_error(
    tmp_path: Path,
) -> None:
    import asyncio

    store = await open_store(tmp_path / "files")
    data = b'{"type":"session","version":3,"id":"twice","timestamp":"t","cwd":"/w"}\n'
    refs = await asyncio.gather(*(store.import_bytes(data) for _ in range(8)))
    assert {ref.id for ref in refs} == {"twice"}
    assert (tmp_path / "files" / "twice.jsonl").read_bytes() == data


async def test_a_name_taken_by_another_tenants_folder_is_a_store_error(tmp_path: Path) -> None:
    # the default tenant's session "s1" is the file s1.jsonl, the tenant "s1.jsonl" a folder
    # of the same name: whichever comes second is refused with the store's typed error
    from pi_context.errors import StoreError

    first = await open_store(tmp_path / "one")
    await first.create(cwd="/w", session_id="s1")
    with pytest.raises(StoreError, match="cannot store its file"):
        await first.create(tenant="s1.jsonl", cwd="/w", session_id="x")
    second = await open_store(tmp_path / "two")
    await second.create(tenant="s1.jsonl", cwd="/w", session_id="x")
    with pytest.raises(StoreError, match="cannot store its file"):
        await second.create(cwd="/w", session_id="s1")
