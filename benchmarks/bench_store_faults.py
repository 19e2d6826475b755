"""The PostgreSQL store's fault goals at full count: writer processes killed with SIGKILL at
random points, and immediate server stops under load, then every acknowledged entry checked
(stored once, parents present, seqs without gaps). The tests run the same faults a few times;
this runs them as often as the goals say.

    .venv/bin/python benchmarks/bench_store_faults.py [--kills 200] [--stops 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import PgServer, running_server  # noqa: E402
from tests.store.test_conformance import message  # noqa: E402
from tests.store.test_faults import WRITER, _check_session  # noqa: E402

from pi_context.store import StoreUnavailableError, open_store  # noqa: E402


async def kills(server: PgServer, count: int, writers: int) -> tuple[int, int]:
    url = server.url(server.new_database())
    store = await open_store(url)
    await store.migrate()
    refs = [await store.create(cwd="/w", session_id=f"kill{i}") for i in range(writers)]
    await store.aclose()
    acknowledged: dict[str, list[str]] = {r.id: [] for r in refs}
    rng = random.Random(11)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = 0
    round_number = 0
    while done < count:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, url, ref.id, f"r{round_number}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            for ref in refs
        ]
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.05 + rng.random() * 0.5)
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            done += 1
        for ref, proc in zip(refs, procs, strict=True):
            out, _ = proc.communicate(timeout=60)
            for line in out.decode().splitlines():
                parts = line.split()
                if len(parts) == 2:
                    acknowledged[ref.id] += parts
        round_number += 1
    for ref in refs:
        await _check_session(url, ref, acknowledged[ref.id])
    return done, sum(len(v) for v in acknowledged.values())


async def stops(server: PgServer, count: int) -> tuple[int, int, int]:
    url = server.url(server.new_database())
    store = await open_store(url)
    await store.migrate()
    ref = await store.create(cwd="/w", session_id="crash")
    acknowledged: list[str] = []
    stop = asyncio.Event()
    failures = 0

    async def writer() -> None:
        nonlocal failures
        leaf = None
        n = len(acknowledged) // 2
        while not stop.is_set():
            batch = [
                message(f"c{n}-u", leaf, "user", f"q {n}"),
                message(f"c{n}-a", f"c{n}-u", "user", f"r {n}"),
            ]
            while True:
                try:
                    result = await store.append(ref, batch)
                    break
                except StoreUnavailableError:
                    failures += 1
                    await asyncio.sleep(0.2)
            acknowledged.extend(e["id"] for e in batch)
            leaf = result.leaf_id
            n += 1

    task = asyncio.create_task(writer())
    try:
        for _ in range(count):
            await asyncio.sleep(0.5)
            await asyncio.to_thread(server.stop, "immediate")
            await asyncio.to_thread(server.start)
        await asyncio.sleep(0.5)
    finally:
        stop.set()
        await asyncio.wait_for(task, 120)
        if not server.running:
            server.start()
        await store.aclose()
    await _check_session(url, ref, acknowledged)
    return count, len(acknowledged), failures


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--stops", type=int, default=20)
    args = parser.parse_args()
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        began = time.perf_counter()
        killed, stored = await kills(server, args.kills, args.writers)
        print(
            f"SIGKILL: {killed} writer processes killed, {stored} acknowledged entries, "
            f"0 lost, 0 duplicated, 0 missing parents, no seq gaps "
            f"({time.perf_counter() - began:.0f} s)"
        )
        began = time.perf_counter()
        stopped, stored, failures = await stops(server, args.stops)
        print(
            f"immediate stops: {stopped} under load, {stored} acknowledged entries, "
            f"{failures} appends retried after a broken connection, 0 lost, 0 duplicated, "
            f"no seq gaps ({time.perf_counter() - began:.0f} s)"
        )


if __name__ == "__main__":
    asyncio.run(main())
