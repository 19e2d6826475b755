"""Rules outside the conformance suite: URLs, sizes, and the file store off the event loop."""

from __future__ import annotations

import asyncio
import fcntl
import os
from pathlib import Path

import pytest

from pi_context.store import (
    FileStore,
    InvalidEntryError,
    MemoryStore,
    SessionRef,
    StoreError,
    open_store,
)
from pi_context.store import base as store_base
from tests.store.helpers import message


@pytest.mark.parametrize(
    ("url", "kind"),
    [("memory:", MemoryStore), ("file:some/dir", FileStore), ("some/dir", FileStore)],
)
async def test_open_store_picks_the_store_by_url(url: str, kind: type) -> None:
    store = await open_store(url)
    assert isinstance(store, kind)
    await store.aclose()


async def test_a_directory_path_object_is_a_file_store(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    assert isinstance(store, FileStore)
    assert store.root == tmp_path


@pytest.mark.parametrize("url", ["redis://x", "sqlite:db", "file:"])
async def test_an_unknown_url_is_a_clear_error(url: str) -> None:
    with pytest.raises(StoreError, match="not a store URL"):
        await open_store(url)


async def test_an_oversized_line_is_refused_naming_the_entry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(store_base, "MAX_ENTRY_BYTES", 1000)
    store = MemoryStore()
    ref = await store.create(cwd="/w", session_id="big")
    with pytest.raises(InvalidEntryError, match=r"entry 1 of the batch \(id 'u1'\).*over the 1000"):
        await store.append(ref, [message("u1", None, "user", "x" * 2000)])
    assert (await store.load(ref)).entries == []


async def test_a_bad_tenant_is_refused() -> None:
    store = MemoryStore()
    with pytest.raises(StoreError, match="invalid tenant"):
        await store.create(tenant="../etc", cwd="/w")


async def test_the_file_store_waits_for_a_lock_off_the_event_loop(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    ref = await store.create(cwd="/w", session_id="locked")
    await store.append(ref, [message("u1", None, "user", "one")])
    path = tmp_path / "locked.jsonl"
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another writer holds the session file's lock
    try:
        task = asyncio.create_task(store.append(ref, [message("a1", "u1", "assistant", "two")]))
        ticks = 0
        for _ in range(10):
            await asyncio.sleep(0.02)  # the loop keeps running while the append waits
            ticks += 1
        assert ticks == 10
        assert not task.done()
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    result = await task
    assert result.seqs == (2,)


async def test_a_missing_session_in_the_file_store(tmp_path: Path) -> None:
    from pi_context.store import SessionNotFoundError

    store = await open_store(tmp_path)
    for ref in (SessionRef("", "absent"), SessionRef("", "../escape"), SessionRef("t", "x")):
        with pytest.raises(SessionNotFoundError):
            await store.load(ref)
