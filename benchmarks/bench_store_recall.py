"""Recall over many stored entries: session-scoped search latency of the PostgreSQL store
(tsvector GIN index over tenant, session and text) against the file store's BM25 index on the
same sessions (same run), and whether every fact planted in compacted-away entries is found.

Each session has ``--entries`` messages of random vocabulary; entry 10 holds a planted fact
(a unique word), and a compaction keeps only the last fifth, so the fact is no longer in the
model's context: the search must report it replaced by that compaction.

    .venv/bin/python benchmarks/bench_store_recall.py [--sessions 200] [--entries 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import running_server  # noqa: E402

from pi_context import _json  # noqa: E402
from pi_context.messages import user_message  # noqa: E402
from pi_context.session import Session  # noqa: E402
from pi_context.store import SessionRef, SessionStore, open_store  # noqa: E402
from pi_context.testing import FixedClock, SequentialIds  # noqa: E402

VOCABULARY = [f"w{n}" for n in range(5000)]


def session_bytes(index: int, entries: int, rng: random.Random) -> tuple[bytes, str]:
    session = Session.in_memory(
        "/w", session_id=f"recall-{index:05d}", ids=SequentialIds(), clock=FixedClock()
    )
    fact = f"planted{index}fact"
    ids = []
    for n in range(entries):
        words = rng.choices(VOCABULARY, k=30)
        if n == 10:
            words.append(fact)
        ids.append(session.append_message(user_message(" ".join(words))).id)
    session.append_compaction("summary of the early work", ids[entries * 4 // 5], 1000)
    lines = [_json.dumps(session.header), *(e.raw for e in session.entries)]
    return b"\n".join(lines) + b"\n", fact


async def measure(
    store: SessionStore, refs: list[SessionRef], facts: list[str], rng: random.Random
) -> tuple[float, float, int]:
    latencies = []
    found = 0
    for ref, fact in zip(refs, facts, strict=True):
        hits = await store.search(ref, fact, limit=10)
        found += any(h.replaced_by is not None for h in hits)
    for _ in range(300):
        ref = rng.choice(refs)
        query = " ".join(rng.choices(VOCABULARY, k=2))
        start = time.perf_counter()
        await store.search(ref, query, limit=10)
        latencies.append(time.perf_counter() - start)
    latencies.sort()
    return (
        latencies[len(latencies) // 2] * 1000,
        latencies[int(len(latencies) * 0.95)] * 1000,
        found,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--entries", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(3)
    files = [session_bytes(i, args.entries, rng) for i in range(args.sessions)]
    facts = [f for _, f in files]
    with running_server() as server, tempfile.TemporaryDirectory() as folder:
        if isinstance(server, str):
            sys.exit(server)
        rows = []
        for name, url in (
            ("postgresql", server.url(server.new_database())),
            ("file (baseline)", folder),
        ):
            store = await open_store(url)
            await store.migrate()
            began = time.perf_counter()
            refs = [await store.import_bytes(data) for data, _ in files]
            loaded = time.perf_counter() - began
            if name.startswith("file"):  # build each file's search index before timing
                for ref in refs:
                    await store.search(ref, "w1", limit=1)
            p50, p95, found = await measure(store, refs, facts, random.Random(5))
            rows.append((name, loaded, p50, p95, found))
            await store.aclose()
    total = args.sessions * (args.entries + 1)
    print(f"{args.sessions} sessions x {args.entries + 1} entries = {total:,} stored entries")
    print("| store | import s | session-scoped p50 ms | p95 ms | planted facts found |")
    print("|---|---:|---:|---:|---:|")
    for name, loaded, p50, p95, found in rows:
        print(f"| {name} | {loaded:.0f} | {p50:.1f} | {p95:.1f} | {found}/{args.sessions} |")


if __name__ == "__main__":
    asyncio.run(main())
