"""Tenant-scoped recall on one PostgreSQL database with the entries' primary key covering
(``migrate(covering_key=True)``: ``INCLUDE (entry_id, parent_id, type, ref)``) and plain (its
three columns), swapped back and forth on the same rows, so both sides meet the same data, the same
queries and the same load (rounds alternate). Sessions as ``bench_store_recall.py`` makes
them. Each round times ``--queries`` tenant searches (p50 / p95 ms); then one search's first
statement is shown by ``EXPLAIN (ANALYZE, BUFFERS)`` under each key: its scans of
``pi_entries``, the heap fetches of the index-only scan, the buffers and the server's time.

    nice -n 10 .venv/bin/python benchmarks/bench_store_tenant_key.py --sessions 200 --tenants 2

``--no-vacuum`` skips the ``VACUUM (ANALYZE)`` after the import (the visibility map is then
whatever autovacuum has done by the time of the first round).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import psycopg  # noqa: E402
from tests.store.pg_server import running_server  # noqa: E402

from bench_store_recall import VOCABULARY, import_all, tenant_of, timed  # noqa: E402
from pi_context.session.search.query import query_phrases  # noqa: E402
from pi_context.store import open_store  # noqa: E402
from pi_context.store.postgres import PostgresStore, _tenant_search  # noqa: E402

_PLAIN = [
    "CREATE UNIQUE INDEX pi_entries_swap ON pi_entries (tenant_id, session_id, seq)",
]
_COVERING = [
    "CREATE UNIQUE INDEX pi_entries_swap ON pi_entries (tenant_id, session_id, seq) "
    "INCLUDE (entry_id, parent_id, type, ref)",
]
_SWAP = (
    "ALTER TABLE pi_entries DROP CONSTRAINT pi_entries_pkey, "
    "ADD CONSTRAINT pi_entries_pkey PRIMARY KEY USING INDEX pi_entries_swap"
)


async def use_key(url: str, covering: bool) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for statement in [*(_COVERING if covering else _PLAIN), _SWAP, "ANALYZE pi_entries"]:
            await conn.execute(statement)


async def explain(url: str, tenant: str, text: str) -> str:
    phrases = query_phrases(text)
    params: dict[str, object] = {f"q{i}": " ".join(p) for i, p in enumerate(phrases)}
    params.update(t=tenant, wanted=200, batch=10)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        rows = await (
            await conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + _tenant_search(len(phrases)), params)
        ).fetchall()
    plan = [str(r[0]) for r in rows]
    scans = sorted(
        {
            m.group(1)
            for line in plan
            if (m := re.search(r"((?:\w+ )*Scan)\b.* on pi_entries", line))
        }
    )
    fetches = sum(
        int(m.group(1)) for line in plan if (m := re.search(r"Heap Fetches: (\d+)", line))
    )
    buffers = next((line.strip() for line in plan if "Buffers:" in line), "")
    total = next((line.strip() for line in plan if line.startswith("Execution Time")), "")
    return f"{', '.join(scans)}; heap fetches {fetches}; {buffers}; {total}"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--tenants", type=int, default=2)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each key")
    parser.add_argument("--no-vacuum", action="store_true")
    args = parser.parse_args()
    with running_server() as server:
        if isinstance(server, str):
            sys.exit(server)
        database = server.new_database()
        url = server.url(database)
        store = await open_store(url)
        assert isinstance(store, PostgresStore)
        await store.migrate()
        seconds = await import_all(store, args.sessions, args.entries, args.tenants)
        if not args.no_vacuum:
            server.psql("VACUUM (ANALYZE) pi_entries", database)
        rng = random.Random(5)
        queries = [
            (
                tenant_of(rng.randrange(args.tenants), args.tenants),
                " ".join(rng.choices(VOCABULARY, k=2)),
            )
            for _ in range(args.queries)
        ]
        results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        plans: dict[bool, str] = {}
        for _ in range(args.rounds):
            for covering in (False, True):
                await use_key(url, covering)
                await store.search_tenant(*queries[0], limit=10)  # warm the connection
                calls = [lambda t=t, q=q: store.search_tenant(t, q, limit=10) for t, q in queries]
                results[covering].append(await timed(calls))
                plans[covering] = await explain(url, *queries[1])
        await store.aclose()
    print(
        f"{args.sessions} sessions x {args.entries + 1} entries, {args.tenants} tenants; "
        f"import {seconds:.0f} s; vacuum after import: {not args.no_vacuum}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for covering in (False, True):
        name = "covering" if covering else "plain"
        runs = ", ".join(f"{p50:.1f} / {p95:.1f}" for p50, p95 in results[covering])
        print(f"{name}: tenant p50 / p95 ms per round: {runs}")
        print(f"  EXPLAIN: {plans[covering]}")


if __name__ == "__main__":
    asyncio.run(main())
