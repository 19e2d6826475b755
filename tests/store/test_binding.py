"""StoreBinding: a Session whose appends queue in memory and are committed to a store, one
``store.append`` per batch; a failed commit keeps everything and its retry stores each entry
once, whether or not the failed attempt reached the store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_context.errors import (
    LeafMovedError,
    SessionBusyError,
    StoreError,
    StoreUnavailableError,
)
from pi_context.store import Lease, MemoryStore, StoreBinding
from pi_context.testing import FixedClock, SequentialIds
from tests.store.helpers import FlakyStore


async def _bound(store: MemoryStore) -> StoreBinding:
    return await StoreBinding.create(
        store, tenant="t", cwd="/w", session_id="s", ids=SequentialIds(), clock=FixedClock()
    )


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


async def test_appends_queue_until_committed_in_one_batch() -> None:
    store = FlakyStore()
    bound = await _bound(store)
    assert bound.session.file_path is None
    bound.session.append_message(_user("one"))
    bound.session.append_message(_user("two"))
    assert (await store.load(bound.ref)).entries == []
    assert [e.id for e in bound.pending] == ["00000001", "00000002"]
    result = await bound.commit()
    assert result is not None
    assert result.seqs == (1, 2)
    assert store.batches == [["00000001", "00000002"]]
    assert not bound.pending
    assert await bound.commit() is None  # nothing queued: no append
    assert len(store.batches) == 1
    stored = await store.load(bound.ref)
    assert [e["id"] for e in stored.entries] == ["00000001", "00000002"]


@pytest.mark.parametrize("mode", ["lose", "lose_ack"])
async def test_a_failed_commit_keeps_everything_and_its_retry_stores_each_once(
    mode: str,
) -> None:
    store = FlakyStore()
    bound = await _bound(store)
    bound.session.append_message(_user("one"))
    store.fail = [mode]
    with pytest.raises(StoreUnavailableError):
        await bound.commit()
    assert [e.id for e in bound.pending] == ["00000001"]
    bound.session.append_message(_user("two"))  # appended while the commit was failing
    await bound.commit()
    # the failed batch once more as it was, then the rest
    assert store.batches == [["00000001"], ["00000001"], ["00000002"]]
    assert not bound.pending
    stored = await store.load(bound.ref)
    assert [e["id"] for e in stored.entries] == ["00000001", "00000002"]
    assert stored.data.count(b'"00000001"') == 1 + 1  # its line, and the child's parentId


async def test_another_writer_is_leaf_moved_and_nothing_is_dropped() -> None:
    store = FlakyStore()
    bound = await _bound(store)
    bound.session.append_message(_user("one"))
    await bound.commit()
    other = await StoreBinding.open(store, bound.ref, ids=lambda: "ffffffff")
    other.session.append_message(_user("theirs"))
    await other.commit()
    bound.session.append_message(_user("mine"))
    with pytest.raises(LeafMovedError):
        await bound.commit()
    assert [e.id for e in bound.pending] == ["00000002"]
    stored = await store.load(bound.ref)
    assert [e["id"] for e in stored.entries] == ["00000001", "ffffffff"]


async def test_open_refuses_what_it_could_not_append_to() -> None:
    store = MemoryStore()
    legacy = b'{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}\n'
    ref = await store.import_bytes(legacy)
    with pytest.raises(StoreError, match="v1 session"):
        await StoreBinding.open(store, ref)
    with pytest.raises(TypeError, match="SessionRef"):
        await StoreBinding.open(store, "old")  # type: ignore[arg-type]


async def test_turns_hold_the_lease_once_per_binding() -> None:
    store = MemoryStore()
    bound = await _bound(store)
    other = await StoreBinding.open(store, bound.ref)
    assert bound.owner != other.owner
    async with bound.turn() as lease:
        assert lease is not None
        async with bound.turn() as inner:  # the same binding: already held
            assert inner is None
        with pytest.raises(StoreError, match="leased"):
            async with other.turn():
                pass
    async with other.turn() as lease:  # released at the block's end
        assert lease is not None
    assert "s" in repr(bound)
    assert "memory:" not in repr(bound)


async def test_a_turn_renews_its_lease_past_its_ttl() -> None:
    store = MemoryStore()
    bound = await _bound(store)
    other = await StoreBinding.open(store, bound.ref)
    renewed = asyncio.Event()
    renewals = 0
    real_renew = Lease.renew

    async def renew(lease: Lease) -> None:
        nonlocal renewals
        await real_renew(lease)
        renewals += 1
        if renewals >= 4:  # four renewals, a third of the ttl apart: past the first expiry
            renewed.set()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Lease, "renew", renew)
        async with bound.turn(ttl=0.15):
            await asyncio.wait_for(renewed.wait(), 60)  # a guard against a hang only
            with pytest.raises(SessionBusyError):
                async with other.turn():
                    pass
        count = renewals
    await asyncio.sleep(0.1)
    assert renewals == count  # the renewals stopped with the block
    async with other.turn() as lease:
        assert lease is not None
