"""The adapters' conversations in a store, without a framework: opened on first use, kept in
memory up to a bound, opened again after another writer appended."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import pi_context.store.base as store_base
from pi_context.errors import LeafMovedError, StoreUnavailableError
from pi_context.integrations import ContextEngine, EngineOptions
from pi_context.integrations.stored import Conversations, _last_entry_id, stored_options
from pi_context.session import Session
from pi_context.session._load.scan import scan_lines
from pi_context.store import MemoryStore, SessionRef
from pi_context.store.base import OFF_LOOP_BYTES
from tests.store.helpers import FlakyStore

OPTIONS = EngineOptions(context_window=8_000)


class Held:
    def __init__(self, engine: ContextEngine) -> None:
        self.engines = [engine]

    def _use(self, engine: ContextEngine) -> None:
        self.engines.append(engine)

    @property
    def engine(self) -> ContextEngine:
        return self.engines[-1]


def _say(engine: ContextEngine, text: str) -> None:
    engine.append([{"role": "user", "content": text, "timestamp": 1}])


async def test_a_conversation_is_created_once_and_kept_open_up_to_the_bound() -> None:
    store = MemoryStore()
    held = Conversations(store, "acme", OPTIONS, Held, keep=2)
    one = await held.get("c-1", what="id")
    assert await held.get("c-1", what="id") is one
    await one.engine.call(_say, one.engine, "hello")
    await held.get("c-2", what="id")
    await held.get("c-3", what="id")  # c-1, least recently used, is closed ...
    again = await held.get("c-1", what="id")  # ... and opened again from the store
    assert again is not one
    assert [e.type for e in again.engine.session.entries] == ["message"]
    stored = await store.load(SessionRef("acme", "c-1"))
    assert stored.header["id"] == "c-1"


async def test_a_fresh_get_opens_the_conversation_again_when_another_writer_appended() -> None:
    store = MemoryStore()
    mine = Conversations(store, "", OPTIONS, Held)
    theirs = Conversations(store, "", OPTIONS, Held)
    one = await mine.get("c", what="id")
    assert await mine.get("c", what="id", fresh=True) is one
    assert len(one.engines) == 1  # nobody else wrote: the same engine
    other = await theirs.get("c", what="id")
    await other.engine.call(_say, other.engine, "from another replica")
    same = await mine.get("c", what="id", fresh=True)
    assert same is one
    assert len(one.engines) == 2
    assert [e.type for e in one.engine.session.entries] == ["message"]


async def test_run_records_again_on_the_stored_history_when_the_commit_finds_it_moved() -> None:
    store = MemoryStore()
    mine = Conversations(store, "", OPTIONS, Held)
    theirs = Conversations(store, "", OPTIONS, Held)
    await mine.get("c", what="id")
    other = await theirs.get("c", what="id")
    await other.engine.call(_say, other.engine, "theirs")
    attempts: list[int] = []

    async def body(one: Held) -> None:
        attempts.append(len(one.engine.session.entries))
        await one.engine.call(_say, one.engine, "mine")

    await mine.run("c", body, what="id")
    assert attempts == [0, 1]  # the stale session first, then the stored one
    stored = await store.load(SessionRef("", "c"))
    assert [e["message"]["content"] for e in stored.entries] == ["theirs", "mine"]

    async def always_moved(one: Held) -> None:
        raise LeafMovedError("still moving")

    with pytest.raises(LeafMovedError):
        await mine.run("c", always_moved, what="id")


async def test_an_empty_id_is_refused_naming_the_id() -> None:
    held = Conversations(MemoryStore(), "", OPTIONS, Held)
    with pytest.raises(ValueError, match="needs its thread_id"):
        await held.get("", what="thread_id")


def test_store_options_mistakes_fail_at_the_call(tmp_path: Path) -> None:
    store = MemoryStore()
    assert stored_options(EngineOptions(context_window=1)) is None
    assert stored_options(EngineOptions(context_window=1, store=store)) == (store, "")
    session = Session.in_memory(str(tmp_path))
    with pytest.raises(ValueError, match="either store= or session="):
        stored_options(EngineOptions(context_window=1, store=store, session=session))
    with pytest.raises(ValueError, match="not by ContextEngine"):
        ContextEngine(context_window=1, store=store)


def test_the_freshness_check_reads_the_last_entry_line_only() -> None:
    header = b'{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n'
    entry = b'{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{}}'
    assert _last_entry_id(header) is None
    assert _last_entry_id(header + entry + b"\n") == "a"
    assert _last_entry_id(header + entry + b"\n" + b'{"type":"message","id":"b"') == "a"  # torn
    assert _last_entry_id(header + entry + b" \n") == "a"


async def test_opening_a_large_conversation_lets_the_loop_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = MemoryStore()
    first = Conversations(store, "", OPTIONS, Held)
    text = "word " * 2000
    one = await first.get("big", what="id")  # created, and committed with each call
    while len(await store.export_bytes(SessionRef("", "big"))) < OFF_LOOP_BYTES:
        await one.engine.call(_say, one.engine, text)
    ticked = threading.Event()
    waits: list[bool] = []

    def slow_scan(data: bytes, **kwargs: Any) -> Any:
        waits.append(ticked.wait(timeout=30))  # on the loop, the ticker could never tick
        return scan_lines(data, **kwargs)

    monkeypatch.setattr(store_base, "scan_lines", slow_scan)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1
            if ticks == 3:
                ticked.set()

    ticker = asyncio.get_running_loop().create_task(tick())
    try:
        other = await Conversations(store, "", OPTIONS, Held).get("big", what="id")
    finally:
        ticker.cancel()
    assert waits == [True]  # one parse, off the loop
    assert other.engine.session.leaf_id == one.engine.session.leaf_id


async def _kept_then_moved(store: FlakyStore, failure: str) -> list[str]:
    """A hook's commit fails (``failure``) and keeps its entry; another replica appends; the
    next hook's commit finds the stored session moved: the texts stored in the end."""
    mine = Conversations(store, "", OPTIONS, Held)
    theirs = Conversations(store, "", OPTIONS, Held)
    await mine.get("c", what="id")
    await theirs.get("c", what="id")

    def say(text: str) -> Callable[[Held], Awaitable[None]]:
        async def body(one: Held) -> None:
            await one.engine.call(_say, one.engine, text)

        return body

    store.fail.append(failure)
    with pytest.raises(StoreUnavailableError):
        await mine.run("c", say("A"), what="id")
    await theirs.run("c", say("B"), what="id")
    await mine.run("c", say("C"), what="id")
    stored = await store.load(SessionRef("", "c"))
    parents = [e["parentId"] for e in stored.entries]
    assert parents[1:] == [e["id"] for e in stored.entries][:-1]  # one chain
    return [e["message"]["content"] for e in stored.entries]


async def test_a_kept_entry_is_recorded_again_when_the_next_commit_finds_the_session_moved() -> (
    None
):
    assert await _kept_then_moved(FlakyStore(), "lose") == ["B", "A", "C"]


async def test_a_kept_entry_the_store_has_after_all_is_not_recorded_twice() -> None:
    # the failed commit reached the store (its acknowledgement lost): A is stored once
    assert await _kept_then_moved(FlakyStore(), "lose_ack") == ["A", "B", "C"]
