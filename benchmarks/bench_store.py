"""Appends per second and latency of the session stores, with 1, 8 and 32 sessions written at
once from one Python process (asyncio), each append two entries (a user and an assistant
message) under ``if_leaf``. The PostgreSQL store runs against a temporary local server (the
tests' own, Unix socket); the file store on the same machine is the same-run baseline.

    .venv/bin/python benchmarks/bench_store.py [--seconds 5] [--sessions 1,8,32]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import running_server  # noqa: E402

from pi_context.store import SessionStore, open_store  # noqa: E402


def _message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:00.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }


async def _run(store: SessionStore, sessions: int, seconds: float) -> tuple[int, list[float]]:
    await store.migrate()
    refs = [await store.create(cwd="/w", session_id=f"b{sessions}-{i}") for i in range(sessions)]
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def writer(index: int) -> None:
        ref = refs[index]
        leaf: str | None = None
        n = 0
        while time.perf_counter() < deadline:
            user = _message(f"{index}-{n}-u", leaf, "user", f"question {n} about the release")
            reply = _message(f"{index}-{n}-a", user["id"], "assistant", f"answer {n}, tagged")
            start = time.perf_counter()
            result = await store.append(ref, [user, reply], if_leaf=leaf)
            latencies.append(time.perf_counter() - start)
            leaf = result.leaf_id
            n += 1

    began = time.perf_counter()
    await asyncio.gather(*(writer(i) for i in range(sessions)))
    elapsed = time.perf_counter() - began
    return int(len(latencies) / elapsed), latencies


def _p(values: list[float], q: float) -> float:
    """The nearest-rank percentile, in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--sessions", default="1,8,32")
    args = parser.parse_args()
    counts = [int(c) for c in args.sessions.split(",")]
    rows: list[tuple[str, int, int, float, float]] = []
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        for count in counts:
            url = server.url(server.new_database())
            store = await open_store(url, max_connections=min(count, 32))
            rate, lat = await _run(store, count, args.seconds)
            await store.aclose()
            rows.append(("postgresql", count, rate, _p(lat, 0.5), _p(lat, 0.99)))
            with tempfile.TemporaryDirectory() as folder:
                files = await open_store(folder)
                rate, lat = await _run(files, count, args.seconds)
                rows.append(("file (baseline)", count, rate, _p(lat, 0.5), _p(lat, 0.99)))
    print("| store | sessions | appends/s (2 entries each) | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name, count, rate, p50, p99 in rows:
        print(f"| {name} | {count} | {rate:,} | {p50:.1f} | {p99:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
