"""Opening a stored session to its context: ``store.load(ref)`` then the projection (the
messages the model sees), for a session of ``--entries`` entries, from the PostgreSQL store
(the tests' temporary server, Unix socket) and from the file store, beside
``Session.open`` of the same pi file (the same-run baseline). Interleaved rounds, medians
(wall time, and the process's CPU time: every thread's).

    .venv/bin/python benchmarks/bench_store_open.py [--entries 10000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tests.store.pg_server import running_server  # noqa: E402

from bench_store_recall import session_bytes  # noqa: E402
from pi_context.session import Session  # noqa: E402
from pi_context.store import SessionRef, SessionStore, open_store  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    data, _ = session_bytes(0, args.entries)
    with running_server() as server, tempfile.TemporaryDirectory() as folder:
        if isinstance(server, str):
            sys.exit(server)
        path = Path(folder) / "direct.jsonl"
        path.write_bytes(data)
        postgres = await open_store(server.url(server.new_database()))
        files = await open_store(Path(folder) / "store")
        refs: dict[str, tuple[SessionStore, SessionRef]] = {}
        for name, store in (("postgresql", postgres), ("file store", files)):
            await store.migrate()
            refs[name] = (store, await store.import_bytes(data))
        counts: set[int] = set()

        def direct() -> Awaitable[None]:
            async def run() -> None:
                with Session.open(path) as session:
                    counts.add(len(session.projection().messages))

            return run()

        def stored(name: str, project: bool) -> Callable[[], Awaitable[None]]:
            store, ref = refs[name]

            async def run() -> None:
                loaded = await store.load(ref)
                if project:
                    counts.add(len(loaded.session().projection().messages))

            return run

        contenders: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("postgresql: load + projection", stored("postgresql", True)),
            ("postgresql: load only (bytes, header, entries read)", stored("postgresql", False)),
            ("file store: load + projection", stored("file store", True)),
            ("Session.open(file) + projection (baseline)", direct),
        ]
        times: dict[str, list[float]] = {name: [] for name, _ in contenders}
        cpu: dict[str, list[float]] = {name: [] for name, _ in contenders}
        for _ in range(args.rounds):
            for name, call in contenders:
                start, start_cpu = time.perf_counter(), time.process_time()
                await call()
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
        await postgres.aclose()
        await files.aclose()
    assert len(counts) == 1, counts  # every way gives the same context
    baseline = statistics.median(times["Session.open(file) + projection (baseline)"])
    print(
        f"a session of {args.entries + 1:,} entries ({len(data) / 1e6:.1f} MB), "
        f"{args.rounds} rounds; load average {os.getloadavg()[0]:.1f}"
    )
    print("| open | median ms | min ms | x baseline | client CPU median ms |")
    print("|---|---:|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"| {name} | {median * 1e3:.1f} | {min(values) * 1e3:.1f} | {median / baseline:.2f} "
            f"| {statistics.median(cpu[name]) * 1e3:.1f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
