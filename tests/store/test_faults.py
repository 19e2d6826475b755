"""Faults the PostgreSQL store must survive without losing or doubling an acknowledged entry:
writers killed with SIGKILL, the server stopped at once under load. Each is bounded in count
and time."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from pi_context.store import SessionRef, StoreUnavailableError, open_store
from tests.store.helpers import message
from tests.store.pg_server import PgServer

ROOT = Path(__file__).resolve().parents[2]

WRITER = r"""
import asyncio, os, sys
from pi_context.store import SessionRef, open_store, StoreUnavailableError

def message(entry_id, parent, role, text):
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2025-01-01T00:00:00.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}],
                        "timestamp": 1735689600000}}

async def main(url, session_id, tag):
    store = await open_store(url)
    ref = SessionRef("", session_id)
    leaf = (await store.load(ref)).leaf_id
    print("ready", flush=True)
    n = 0
    while True:
        a, b = f"{tag}-{n}-u", f"{tag}-{n}-a"
        result = await store.append(ref, [message(a, leaf, "user", f"q {n}"),
                                          message(b, a, "user", f"r {n}")])
        print(a, b, flush=True)  # acknowledged
        leaf = result.leaf_id
        n += 1

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
"""


async def _check_session(url: str, ref: SessionRef, acknowledged: list[str]) -> None:
    store = await open_store(url)
    try:
        stored = await store.load(ref)
        ids = [e["id"] for e in stored.entries]
        assert len(ids) == len(set(ids)), "an entry stored twice"
        missing = set(acknowledged) - set(ids)
        assert not missing, f"acknowledged entries lost: {sorted(missing)[:5]}"
        known = set(ids)
        assert all(e["parentId"] is None or e["parentId"] in known for e in stored.entries)
        assert stored.session().problems == []
    finally:
        await store.aclose()
    async with await psycopg.AsyncConnection.connect(url) as conn:
        seqs = [
            r[0]
            for r in await (
                await conn.execute(
                    "SELECT seq FROM pi_entries WHERE session_id = %s ORDER BY seq", (ref.id,)
                )
            ).fetchall()
        ]
        head = await (
            await conn.execute("SELECT head_seq FROM pi_sessions WHERE session_id = %s", (ref.id,))
        ).fetchone()
    assert seqs == list(range(1, len(seqs) + 1)), "a gap in seq"
    assert head is not None
    assert head[0] == len(seqs)


@pytest.mark.timeout(300)
async def test_sigkilled_writers_lose_nothing(pg_url: str) -> None:
    store = await open_store(pg_url)
    await store.migrate()
    refs = [await store.create(cwd="/w", session_id=f"kill{i}") for i in range(2)]
    await store.aclose()
    acknowledged: dict[str, list[str]] = {r.id: [] for r in refs}
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    kills = 0
    for round_number in range(6):  # 6 rounds x 2 writers = 12 SIGKILLs
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, pg_url, ref.id, f"r{round_number}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for ref in refs
        ]
        for proc in procs:  # connected: then killed at a random point of its appends
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.3 + rng.random())
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        for ref, proc in zip(refs, procs, strict=True):
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == -signal.SIGKILL, err.decode()[-2000:]
            for line in out.decode().splitlines():
                parts = line.split()
                if len(parts) == 2:  # a line the kill cut is not an acknowledgement
                    acknowledged[ref.id] += parts
    assert kills == 12
    assert sum(len(v) for v in acknowledged.values()) > 0
    for ref in refs:
        await _check_session(pg_url, ref, acknowledged[ref.id])


@pytest.mark.timeout(300)
async def test_an_immediate_server_stop_under_load_loses_nothing(
    pg_server: PgServer, pg_url: str
) -> None:
    store = await open_store(pg_url)
    await store.migrate()
    ref = await store.create(cwd="/w", session_id="crash")
    acknowledged: list[str] = []
    stop = asyncio.Event()
    failures = 0

    async def writer() -> None:
        nonlocal failures
        leaf = None
        n = 0
        while not stop.is_set():
            batch = [
                message(f"c{n}-u", leaf, "user", f"q {n}"),
                message(f"c{n}-a", f"c{n}-u", "user", f"r {n}"),
            ]
            while True:  # the same batch until it is acknowledged: a retry stores it once
                try:
                    result = await store.append(ref, batch)
                    break
                except StoreUnavailableError as exc:
                    retryable = exc.retryable
                    assert retryable
                    failures += 1
                    await asyncio.sleep(0.2)
            acknowledged.extend(e["id"] for e in batch)
            leaf = result.leaf_id
            n += 1

    async def acknowledged_more_than(count: int) -> None:
        while len(acknowledged) <= count:
            await asyncio.sleep(0.05)

    try:
        for _ in range(2):  # two immediate stops, each followed by a restart
            task = asyncio.create_task(writer())
            await asyncio.to_thread(pg_server.checkpoint)  # a short recovery after the stop
            await asyncio.wait_for(acknowledged_more_than(len(acknowledged)), 60)
            await asyncio.to_thread(pg_server.stop, "immediate")
            await asyncio.sleep(0.5)
            await asyncio.to_thread(pg_server.start)
            # the pool reconnects: appends are acknowledged again after the restart
            await asyncio.wait_for(acknowledged_more_than(len(acknowledged) + 2), 120)
            stop.set()
            await asyncio.wait_for(task, 120)
            stop.clear()
    finally:
        if not pg_server.running:
            pg_server.start()
        await store.aclose()
    # (a stop may be absorbed by the store's own retries or the pool's wait: ``failures``
    # counts only the ones the caller saw, and may be 0)
    await _check_session(pg_url, ref, acknowledged)
