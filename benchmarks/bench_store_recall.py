"""Recall over many stored entries: search latency of the PostgreSQL store (a tsvector GIN
index over tenant, session and text), scoped to one session and to one tenant's sessions,
against the file store's BM25 index on the same sessions (same run), and whether every fact
planted in compacted-away entries is found.

Each session has ``--entries`` messages of 30 random words (a 5,000-word vocabulary); entry
10 holds a planted fact (a unique word), and a compaction keeps only the last fifth, so the
fact is no longer in the model's context: the search must report it replaced by that
compaction. The sessions are spread over ``--tenants`` tenants (round robin); a
tenant-scoped search (``search_tenant``) covers all of one tenant's sessions.

    .venv/bin/python benchmarks/bench_store_recall.py            # 1,000 x 1,000, PostgreSQL
    .venv/bin/python benchmarks/bench_store_recall.py --sessions 200 --tenant-queries 50 --baseline

``--baseline`` adds the file store on the same sessions (its tenant-scoped search opens every
session of the tenant, so keep it to a few hundred sessions).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.store.pg_server import running_server  # noqa: E402

from pi_context import _json  # noqa: E402
from pi_context.messages import user_message  # noqa: E402
from pi_context.session import Session  # noqa: E402
from pi_context.store import SessionRef, SessionStore, open_store  # noqa: E402
from pi_context.testing import FixedClock, SequentialIds  # noqa: E402

VOCABULARY = [f"w{n}" for n in range(5000)]


def session_bytes(index: int, entries: int) -> tuple[bytes, str]:
    """Session ``index``'s file (the same bytes in every run) and its planted fact."""
    rng = random.Random(index)
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


def tenant_of(index: int, tenants: int) -> str:
    return f"tenant{index % tenants:03d}"


async def import_all(store: SessionStore, sessions: int, entries: int, tenants: int) -> float:
    """Import every session (four at a time); seconds taken."""
    gate = asyncio.Semaphore(4)

    async def one(index: int) -> None:
        data, _ = await asyncio.to_thread(session_bytes, index, entries)
        async with gate:
            await store.import_bytes(data, tenant=tenant_of(index, tenants))

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(sessions)))
    return time.perf_counter() - began


async def timed(calls: list[Callable[[], Awaitable[Any]]]) -> tuple[float, float]:
    """p50 and p95 (ms) of running each call once, in order."""
    latencies = []
    for call in calls:
        start = time.perf_counter()
        await call()
        latencies.append(time.perf_counter() - start)
    latencies.sort()
    return latencies[len(latencies) // 2] * 1000, latencies[int(len(latencies) * 0.95)] * 1000


async def measure(
    store: SessionStore, args: argparse.Namespace, rng: random.Random
) -> dict[str, Any]:
    refs = [SessionRef(tenant_of(i, args.tenants), f"recall-{i:05d}") for i in range(args.sessions)]
    facts = [f"planted{i}fact" for i in range(args.sessions)]
    found = found_tenant = 0
    for ref, fact in zip(refs, facts, strict=True):
        hits = await store.search(ref, fact, limit=10)
        found += any(h.replaced_by is not None for h in hits)
        wide = await store.search_tenant(ref.tenant, fact, limit=10)
        found_tenant += any(h.ref == ref and h.hit.replaced_by is not None for h in wide)

    def query() -> str:
        return " ".join(rng.choices(VOCABULARY, k=2))

    session_calls: list[Callable[[], Awaitable[Any]]] = []
    for _ in range(args.queries):
        ref, text = rng.choice(refs), query()
        session_calls.append(lambda ref=ref, text=text: store.search(ref, text, limit=10))
    tenant_calls: list[Callable[[], Awaitable[Any]]] = []
    for _ in range(args.tenant_queries):
        tenant, text = tenant_of(rng.randrange(args.tenants), args.tenants), query()
        tenant_calls.append(
            lambda tenant=tenant, text=text: store.search_tenant(tenant, text, limit=10)
        )
    p50, p95 = await timed(session_calls)
    t50, t95 = await timed(tenant_calls)
    return {"p50": p50, "p95": p95, "t50": t50, "t95": t95, "found": found, "tfound": found_tenant}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--tenants", type=int, default=10)
    parser.add_argument("--queries", type=int, default=300, help="session-scoped searches")
    parser.add_argument("--tenant-queries", type=int, default=100)
    parser.add_argument(
        "--baseline", action="store_true", help="the file store on the same sessions too"
    )
    args = parser.parse_args()
    rows = []
    with running_server() as server, tempfile.TemporaryDirectory() as folder:
        if isinstance(server, str):
            sys.exit(server)
        database = server.new_database()
        contenders = [("postgresql", server.url(database))]
        if args.baseline:
            contenders.append(("file (baseline)", folder))
        for name, url in contenders:
            store = await open_store(url)
            await store.migrate()
            loaded = await import_all(store, args.sessions, args.entries, args.tenants)
            if name.startswith("file"):  # build each file's search index before timing
                for i in range(args.sessions):
                    ref = SessionRef(tenant_of(i, args.tenants), f"recall-{i:05d}")
                    await store.search(ref, "w1", limit=1)
            elif server.running:  # fresh statistics for the planner after the bulk load
                server.psql("VACUUM ANALYZE pi_entries", database)
            result = await measure(store, args, random.Random(5))
            rows.append((name, loaded, result))
            await store.aclose()
    total = args.sessions * (args.entries + 1)
    load = os.getloadavg()[0]
    print(
        f"{args.sessions} sessions x {args.entries + 1} entries = {total:,} stored entries, "
        f"{args.tenants} tenants; load average {load:.1f}"
    )
    print(
        "| store | import s | session-scoped p50 ms | p95 ms | tenant-scoped p50 ms | p95 ms "
        "| planted facts found (session / tenant search) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, loaded, r in rows:
        print(
            f"| {name} | {loaded:.0f} | {r['p50']:.1f} | {r['p95']:.1f} | {r['t50']:.1f} "
            f"| {r['t95']:.1f} | {r['found']}/{args.sessions} / {r['tfound']}/{args.sessions} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
