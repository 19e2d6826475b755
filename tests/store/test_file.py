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
