"""Opening a stored session: its bytes are parsed once (``load``'s parse is the one the session
is built from), and a large session is parsed and built off the event loop (the loop runs on
meanwhile), with the same session as before."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pi_context.store.base as store_base
from pi_context.session import Session
from pi_context.session._load.scan import scan_lines
from pi_context.store import SessionRef, SessionStore, StoreBinding
from pi_context.store.base import OFF_LOOP_BYTES


def _session_bytes(entries: int, *, pad: int = 0) -> bytes:
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "s-open",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": "/w",
        }
    ]
    parent = None
    for n in range(entries):
        entry_id = f"e{n:07d}"
        role = "user" if n % 2 == 0 else "assistant"
        content: Any = f"message {n} " + "x" * pad
        if role == "assistant":
            content = [{"type": "text", "text": content}]
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": role, "content": content, "timestamp": 1},
            }
        )
        parent = entry_id
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@pytest.fixture
def store(each_store: SessionStore) -> SessionStore:
    """Each kind of store in turn (``each_store``)."""
    return each_store


def _count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every parse of a stored session's bytes, by the size parsed."""
    scans: list[int] = []
    real = scan_lines

    def counting(data: bytes, **kwargs: Any) -> Any:
        scans.append(len(data))
        return real(data, **kwargs)

    monkeypatch.setattr(store_base, "scan_lines", counting)
    return scans


async def test_opening_a_stored_session_parses_its_bytes_once(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = _session_bytes(50)
    ref = await store.import_bytes(data)
    scans = _count_scans(monkeypatch)
    bound = await StoreBinding.open(store, ref)
    assert scans == [len(data)]
    path = tmp_path / "direct.jsonl"
    path.write_bytes(data)
    with Session.open(path) as direct:
        assert [e.id for e in bound.session.entries] == [e.id for e in direct.entries]
        assert bound.session.projection().messages == direct.projection().messages
        assert bound.session.leaf_id == direct.leaf_id


async def test_load_then_session_parses_once_and_shares_nothing_it_appends_to(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _session_bytes(6)
    ref = await store.import_bytes(data)
    scans = _count_scans(monkeypatch)
    stored = await store.load(ref)
    header = stored.header
    session = stored.session()
    assert len(scans) == 1
    session.append_message({"role": "user", "content": "later", "timestamp": 2})
    # what the StoredSession says is still the stored bytes', not the session's appends
    assert stored.leaf_id == "e0000005"
    assert [e["id"] for e in stored.entries] == [f"e{n:07d}" for n in range(6)]
    assert stored.header == header
    assert stored.header is not session.header
    # a second session is built from a parse of its own, without the first one's append
    again = stored.session()
    assert [e.id for e in again.entries] == [f"e{n:07d}" for n in range(6)]
    assert len(session.entries) == 7


async def _with_ticker(
    work: Callable[[], Any], ticked: threading.Event, ticks_wanted: int
) -> tuple[Any, int]:
    """Run ``work()`` while a task ticks on the loop; ``ticked`` is set once it has ticked
    ``ticks_wanted`` times."""
    count = 0

    async def tick() -> None:
        nonlocal count
        while True:
            await asyncio.sleep(0)
            count += 1
            if count == ticks_wanted:
                ticked.set()

    ticker = asyncio.get_running_loop().create_task(tick())
    try:
        result = await work()
    finally:
        ticker.cancel()
    return result, count


async def test_a_long_parse_does_not_block_the_loop(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _session_bytes(40, pad=OFF_LOOP_BYTES // 40)
    assert len(data) >= OFF_LOOP_BYTES
    ref = await store.import_bytes(data)
    ticked = threading.Event()
    real_scan, real_session = scan_lines, Session.from_scan
    waits: list[bool] = []

    def slow_scan(data: bytes, **kwargs: Any) -> Any:
        # the parse finishes only once the loop has run the ticker: on the loop, it never would
        waits.append(ticked.wait(timeout=30))
        return real_scan(data, **kwargs)

    def slow_session(*args: Any, **kwargs: Any) -> Session:
        waits.append(ticked.wait(timeout=30))
        return real_session(*args, **kwargs)

    monkeypatch.setattr(store_base, "scan_lines", slow_scan)
    monkeypatch.setattr(Session, "from_scan", slow_session)
    stored, _ = await _with_ticker(lambda: store.load(ref), ticked, 3)
    assert waits == [True]
    assert stored.leaf_id == "e0000039"

    ticked.clear()
    bound, _ = await _with_ticker(lambda: StoreBinding.open(store, ref), ticked, 3)
    assert waits == [True, True, True]  # the load's parse, then the session's tree
    assert bound.session.leaf_id == "e0000039"
    assert len(bound.session.projection().messages) == 40


async def test_a_small_session_opens_on_the_loop(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = await store.import_bytes(_session_bytes(3))
    if type(store).__name__ == "FileStore":
        pytest.skip("the file store reads (and so parses) on a worker thread whatever the size")
    loop_thread = threading.get_ident()
    threads: list[int] = []
    real = scan_lines

    def where(data: bytes, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(data, **kwargs)

    monkeypatch.setattr(store_base, "scan_lines", where)
    bound = await StoreBinding.open(store, ref)
    assert threads == [loop_thread]
    assert bound.ref == SessionRef("", "s-open")
